//! Split is an Eddy process function (a flat map) that splits a record's
//! value on white space (Unicode, as Go's strings.Fields) into one record
//! per word, with the input's key and timestamp and no headers. An empty or
//! blank value, or a null one, gives no records.
//!
//! The output records are views into the input value: the SDK encodes each
//! one as it is emitted, so nothing is allocated per record.
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib --extern words=libwords.rlib \
//!         split.rs -o split.wasm

use eddy::{Emitter, Headers, Record, Result};

fn split(r: Record<'_>, out: &mut Emitter<'_>) -> Result<()> {
    for w in words::iter(r.value.unwrap_or_default()) {
        out.emit(Record { value: Some(w), headers: Headers::NONE, ..r });
    }
    Ok(())
}

eddy::export! {
    name: "split",
    version: "1.0.0",
    flat_map: split,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits() {
        let mut g = eddy_guest();
        let long = "w ".repeat(20);
        let h = [eddy::Header { name: "h", value: None }];
        let recs = [
            Record { key: Some(b"k"), value: Some(b" a\tbc\n"), timestamp: 5, headers: Headers::new(&h) },
            Record::new(None, Some(b"  ")),
            Record::new(None, None),
            Record::new(None, Some(long.as_bytes())),
        ];
        let out = g.process(&recs).unwrap();
        let first = out[0].as_ref().unwrap();
        assert_eq!(first.len(), 2);
        assert_eq!(first[1].value.as_deref(), Some(&b"bc"[..]));
        assert_eq!((first[1].key.as_deref(), first[1].timestamp), (Some(&b"k"[..]), 5));
        assert!(first[1].headers.is_empty());
        assert!(out[1].as_ref().unwrap().is_empty());
        assert!(out[2].as_ref().unwrap().is_empty());
        assert_eq!(out[3].as_ref().unwrap().len(), 20); // an array 16 header
    }
}
