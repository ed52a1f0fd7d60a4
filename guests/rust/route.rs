//! Route is an Eddy process function (a map) that sends each record to a
//! named output of its step by the first byte of its value: a value starting
//! with '{' (a JSON object) to the output "objects", one starting with an
//! ASCII digit to "numbers"; any other record, and a null or empty value,
//! stays the step's own output. Records keep their key, value, timestamp and
//! headers. It is the conformance reference "route" (ABI.md, "Named
//! outputs").
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib route.rs -o route.wasm

use eddy::{Record, Result};

fn route(r: Record<'_>) -> Result<Record<'_>> {
    Ok(match r.value.and_then(|v| v.first()) {
        Some(b'{') => r.to_output("objects"),
        Some(b'0'..=b'9') => r.to_output("numbers"),
        _ => r,
    })
}

eddy::export! {
    name: "route",
    version: "1.0.0",
    map: route,
}

#[cfg(test)]
mod tests {
    use super::*;
    use eddy::{Header, Headers};

    #[test]
    fn routes_by_first_byte() {
        let mut g = eddy_guest();
        let h = [Header { name: "h", value: Some(b"x") }];
        let recs = [
            Record { key: Some(b"k"), value: Some(br#"{"a":1}"#), timestamp: 1, headers: Headers::new(&h) },
            Record { timestamp: 2, ..Record::new(None, Some(b"42 apples")) },
            Record { timestamp: 3, headers: Headers::new(&h), ..Record::new(None, Some(b"word")) },
            Record { timestamp: 4, ..Record::new(Some(b"n"), None) },
            Record { timestamp: 5, ..Record::new(None, Some(b"")) },
        ];
        let out = g.process(&recs).unwrap();
        let headers: Vec<_> = out.iter().map(|o| o.as_ref().unwrap()[0].headers.clone()).collect();
        let hx = ("h".to_owned(), Some(b"x".to_vec()));
        let to = |name: &str| ("eddy.output".to_owned(), Some(name.as_bytes().to_vec()));
        assert_eq!(headers, [vec![hx.clone(), to("objects")], vec![to("numbers")], vec![hx], vec![], vec![]]);
        for (o, r) in out.iter().zip(&recs) {
            let o = &o.as_ref().unwrap()[0];
            assert_eq!((o.key.as_deref(), o.value.as_deref(), o.timestamp), (r.key, r.value, r.timestamp));
        }
    }
}
