//! Wordkey implements two Eddy kinds in one module:
//!
//! - key: the record's new key is the first white-space-separated word of
//!   its value (a null key if the value holds no word);
//! - timestamp: the event time is the top-level integer member "ts" of the
//!   value, a JSON object, in milliseconds since the Unix epoch. A value
//!   that is not a JSON object, has no "ts", or whose "ts" is not an integer
//!   (1.5, 1e3, "17", out of the i64 range) fails with BAD_INPUT.
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib --extern jsonscan=libjsonscan.rlib \
//!         --extern words=libwords.rlib wordkey.rs -o wordkey.wasm

use eddy::{Error, Record, Result};

/// The first word of the value, a view into it.
fn first_word(r: Record<'_>) -> Result<Option<&[u8]>> {
    Ok(words::first(r.value.unwrap_or_default()))
}

fn event_time(r: Record<'_>) -> Result<i64> {
    let v = match jsonscan::field(r.value.unwrap_or_default(), "ts") {
        Err(e) => return Err(Error::bad_input(e.message())),
        Ok(None) => return Err(Error::bad_input(r#"no top-level "ts" member"#)),
        Ok(Some(v)) => v,
    };
    // As Go's strconv.ParseInt(v, 10, 64): an optional sign, then digits.
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| Error::bad_input(r#""ts" is not an integer"#))
}

eddy::export! {
    name: "wordkey",
    version: "1.0.0",
    key: first_word,
    timestamp: event_time,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        let mut g = eddy_guest();
        let out = g
            .key(&[
                Record::new(None, Some(b"  hello world")),
                Record::new(Some(b"k"), Some(b" ")),
                Record::new(None, None),
            ])
            .unwrap();
        assert_eq!(out[0].as_ref().unwrap().as_deref(), Some(&b"hello"[..]));
        assert_eq!(out[1].as_ref().unwrap().as_deref(), None);
        assert_eq!(out[2].as_ref().unwrap().as_deref(), None);
    }

    #[test]
    fn timestamps() {
        let mut g = eddy_guest();
        let vals: [&[u8]; 7] = [
            br#"{"ts":1700000000123}"#,
            br#"{"ts":-5}"#,
            br#"{"ts":1.5}"#,
            br#"{"ts":"17"}"#,
            b"[]",
            br#"{"x":1}"#,
            br#"{"ts":9223372036854775808}"#,
        ];
        let recs: Vec<Record> = vals.iter().map(|v| Record::new(None, Some(v))).collect();
        let out = g.timestamp(&recs).unwrap();
        assert_eq!(out[0], Ok(1700000000123));
        assert_eq!(out[1], Ok(-5));
        for (i, want) in [
            (2, r#""ts" is not an integer"#),
            (3, r#""ts" is not an integer"#),
            (4, "value is not a JSON object"),
            (5, r#"no top-level "ts" member"#),
            (6, r#""ts" is not an integer"#),
        ] {
            let f = out[i].as_ref().unwrap_err();
            assert_eq!((f.code, f.reason.as_str()), (2, want), "{}", i);
        }
        let m = g.manifest().unwrap();
        assert_eq!(m.kinds, ["key", "timestamp"]);
    }
}
