//! Filter is an Eddy process function that keeps the records whose value is
//! a JSON object with a top-level numeric member "amount" of at least 100,
//! and drops the others:
//!
//! - a value that is not a JSON object (including invalid JSON and a null
//!   value) fails with BAD_INPUT;
//! - an object without "amount", or whose "amount" is not a number, is
//!   dropped;
//! - "amount" inside nested objects or strings does not count; if the name
//!   repeats, the last one counts (as with Go's encoding/json).
//!
//! The scan (lib/jsonscan.rs) is hand-written and allocation-free.
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib --extern jsonscan=libjsonscan.rlib \
//!         filter.rs -o filter.wasm

use eddy::{Error, Record, Result};

/// The smallest amount kept.
const THRESHOLD: f64 = 100.0;

fn keep(r: Record<'_>) -> Result<bool> {
    // A null value is scanned as empty input: not valid JSON.
    let v = match jsonscan::field(r.value.unwrap_or_default(), "amount") {
        Err(e) => return Err(Error::bad_input(e.message())),
        Ok(None) => return Ok(false),
        Ok(Some(v)) => v,
    };
    if !jsonscan::is_number(v) {
        return Ok(false);
    }
    // A JSON number too large for an f64 is +-Inf, which still compares.
    let amount = jsonscan::float(v).unwrap_or(if v.starts_with(b"-") { f64::NEG_INFINITY } else { f64::INFINITY });
    Ok(amount >= THRESHOLD)
}

eddy::export! {
    name: "filter",
    version: "1.0.0",
    filter: keep,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_and_drops() {
        let mut g = eddy_guest();
        let vals: [Option<&[u8]>; 9] = [
            Some(br#"{"id":1,"amount":250}"#),
            Some(br#"{"amount":99.5}"#),
            Some(br#"{"meta":{"amount":1000},"amount":100}"#),
            Some(br#"{"amount":"500"}"#),
            Some(br#"{"amount":1e3}"#),
            Some(b"[1]"),
            Some(b"{bad"),
            None,
            Some(br#"{"amount":1e999}"#),
        ];
        let recs: Vec<Record> = vals.iter().map(|v| Record::new(None, *v)).collect();
        let out = g.process(&recs).unwrap();
        let kept: Vec<String> = out
            .iter()
            .map(|o| match o {
                Ok(v) => v.len().to_string(),
                Err(f) => format!("{}:{}", f.code, f.reason),
            })
            .collect();
        assert_eq!(
            kept,
            [
                "1",
                "0",
                "1",
                "0",
                "1",
                "2:value is not a JSON object",
                "2:value is not valid JSON",
                "2:value is not valid JSON",
                "1",
            ]
        );
    }
}
