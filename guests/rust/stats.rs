//! Stats is an Eddy aggregate function: the count, sum and average of record
//! values that are JSON numbers ("42", "3.5", "-1e3"; white space around the
//! number is allowed).
//!
//! The accumulator is 16 bytes, little-endian: the count as an i64, then the
//! sum as an f64 (the same encoding as the Go guest, so either can read the
//! other's accumulators). Add updates it in place (the SDK hands Add a
//! scratch copy), so folding allocates nothing. The result is the JSON object
//! {"count":N,"sum":S,"avg":A}, numbers written as Go's encoding/json writes
//! them; a sum or average that is not finite (no records yet, or an f64
//! overflow) is written as null.
//!
//! A value that is not a JSON number, or one outside the f64 range, fails
//! its record with BAD_INPUT; an accumulator that is not 16 bytes (written by
//! something else) fails with REJECTED.
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib --extern jsonscan=libjsonscan.rlib \
//!         stats.rs -o stats.wasm

use eddy::{Aggregate, Error, Record, Result};
use std::io::Write;

/// The size of an accumulator: i64 count, f64 sum.
const ACC_SIZE: usize = 16;

/// The handler: its buffer holds the result value.
#[derive(Default)]
struct Stats {
    out: Vec<u8>,
}

fn decode(acc: &[u8]) -> Result<(i64, f64)> {
    if acc.len() != ACC_SIZE {
        return Err(Error::rejected(format!("accumulator is {} bytes, want 16", acc.len())));
    }
    let count = i64::from_le_bytes(acc[..8].try_into().unwrap());
    let sum = f64::from_le_bytes(acc[8..].try_into().unwrap());
    Ok((count, sum))
}

fn encode(acc: &mut Vec<u8>, count: i64, sum: f64) {
    acc.clear();
    acc.extend_from_slice(&count.to_le_bytes());
    acc.extend_from_slice(&sum.to_le_bytes());
}

impl Aggregate for Stats {
    fn init(&mut self, acc: &mut Vec<u8>) -> Result<()> {
        encode(acc, 0, 0.0);
        Ok(())
    }

    fn add(&mut self, acc: &mut Vec<u8>, r: Record<'_>) -> Result<()> {
        let (count, sum) = decode(acc)?;
        let tok = jsonscan::number(r.value.unwrap_or_default())
            .ok_or_else(|| Error::bad_input("value is not a JSON number"))?;
        let v = jsonscan::float(tok).ok_or_else(|| Error::bad_input("value is out of the float64 range"))?;
        encode(acc, count + 1, sum + v);
        Ok(())
    }

    fn merge(&mut self, _key: Option<&[u8]>, a: &[u8], b: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let (ca, sa) = decode(a)?;
        let (cb, sb) = decode(b)?;
        encode(out, ca + cb, sa + sb);
        Ok(())
    }

    fn result<'a>(&'a mut self, _key: Option<&'a [u8]>, acc: &'a [u8]) -> Result<Option<&'a [u8]>> {
        let (count, sum) = decode(acc)?;
        let b = &mut self.out;
        b.clear();
        write!(b, "{{\"count\":{},\"sum\":", count).unwrap();
        write_number(b, sum);
        b.extend_from_slice(b",\"avg\":");
        write_number(b, sum / count as f64);
        b.push(b'}');
        Ok(Some(&self.out))
    }
}

/// Appends `f` as Go's encoding/json writes an f64 (the shortest digits that
/// round-trip; exponent form below 1e-6 and from 1e21 on, as "1e+21" and
/// "1e-7"), or null if `f` is not finite (JSON has no NaN or infinity).
fn write_number(b: &mut Vec<u8>, f: f64) {
    if !f.is_finite() {
        b.extend_from_slice(b"null");
        return;
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Rust writes "1e21" and "1e-7"; Go "1e+21" and "1e-07", cleaned up
        // by encoding/json to "1e-7".
        let start = b.len();
        write!(b, "{:e}", f).unwrap();
        let e = start + b[start..].iter().position(|&c| c == b'e').unwrap();
        if b[e + 1] != b'-' {
            b.insert(e + 1, b'+');
        }
    } else {
        // Rust's Display is the shortest round-trip form, without exponent
        // and without ".0" for integers, as Go's 'f' format with -1.
        write!(b, "{}", f).unwrap();
    }
}

eddy::export! {
    name: "stats",
    version: "1.0.0",
    aggregate: Stats::default(),
}

#[cfg(test)]
mod tests {
    use super::*;
    use eddy::testing::Group;

    fn num(f: f64) -> String {
        let mut b = Vec::new();
        write_number(&mut b, f);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn numbers_like_encoding_json() {
        let cases: [(f64, &str); 14] = [
            (0.0, "0"),
            (-0.0, "-0"),
            (60.0, "60"),
            (20.0, "20"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-2.5e-10, "-2.5e-10"),
            (5e-324, "5e-324"),
            (f64::NAN, "null"),
        ];
        for (f, want) in cases {
            assert_eq!(num(f), want, "{:e}", f);
        }
    }

    #[test]
    fn aggregates() {
        let mut g = eddy_guest();
        let recs = [
            Record::new(None, Some(b"10")),
            Record::new(None, Some(b" 20 ")),
            Record::new(None, Some(b"x")),
            Record::new(None, Some(b"30")),
        ];
        let added = g.agg_add(&[Group { key: Some(b"eu"), acc: None, records: &recs }]).unwrap();
        assert_eq!(added[0].errors.len(), 1);
        assert_eq!(added[0].errors[0].0, 2);
        assert_eq!(added[0].errors[0].1.code, 2);
        let acc = added[0].acc.clone();
        let res = g.agg_result(&[(Some(b"eu"), &acc)]).unwrap();
        assert_eq!(res[0].as_ref().unwrap().as_deref(), Some(&br#"{"count":3,"sum":60,"avg":20}"#[..]));
        let merged = g.agg_merge(&[(None, &acc, &acc)]).unwrap();
        let m = merged[0].as_ref().unwrap();
        let res = g.agg_result(&[(None, m)]).unwrap();
        assert_eq!(res[0].as_ref().unwrap().as_deref(), Some(&br#"{"count":6,"sum":120,"avg":20}"#[..]));
        let init = g.agg_init().unwrap().unwrap();
        let res = g.agg_result(&[(None, &init)]).unwrap();
        assert_eq!(res[0].as_ref().unwrap().as_deref(), Some(&br#"{"count":0,"sum":0,"avg":null}"#[..]));
        let res = g.agg_result(&[(None, b"short")]).unwrap();
        assert_eq!(res[0].as_ref().unwrap_err().reason, "accumulator is 5 bytes, want 16");
    }
}
