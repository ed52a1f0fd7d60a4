//! Counter is a stateful Eddy process function: it keeps a running count of
//! the records of each key in keyed state (the state key is the record key;
//! a null key counts like an empty one) and emits each record with its value
//! replaced by the count so far, in decimal. The count is stored as the same
//! decimal text.
//!
//! It adds 1 to the counter "records" for every record counted and logs at
//! Debug once per 1000 records. In a step without keyed state
//! (`Error::NO_STATE`) every record is rejected (REJECTED); a host storage
//! failure fails it with STATE.
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib counter.rs -o counter.wasm

use eddy::{state, Error, Level, Map, Record, Result};
use std::io::Write;

/// How many records pass between two debug log lines.
const LOG_EVERY: u64 = 1000;

#[derive(Default)]
struct Counter {
    /// Records counted by this instance.
    seen: u64,
    /// The stored count, reused for every record.
    stored: Vec<u8>,
    /// The new count, reused for every record.
    buf: Vec<u8>,
}

/// Parses a decimal count as Go's strconv.ParseUint(s, 10, 64) does.
fn parse_count(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.iter().try_fold(0u64, |n, &c| {
        if !c.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_add((c - b'0') as u64)
    })
}

impl Map for Counter {
    fn map<'a>(&'a mut self, mut r: Record<'a>) -> Result<Record<'a>> {
        let key = r.key.unwrap_or_default();
        let n = if state::get_into(key, &mut self.stored)? {
            parse_count(&self.stored).ok_or_else(|| {
                Error::rejected(format!(
                    "stored count {:?}: not a decimal count",
                    String::from_utf8_lossy(&self.stored)
                ))
            })?
        } else {
            0
        };
        self.buf.clear();
        write!(self.buf, "{}", n + 1).unwrap();
        state::put(key, &self.buf)?;
        eddy::count("records", 1);
        self.seen += 1;
        if self.seen % LOG_EVERY == 0 {
            eddy::log!(Level::Debug, "counter: {} records", self.seen);
        }
        r.value = Some(&self.buf);
        Ok(r)
    }
}

eddy::export! {
    name: "counter",
    version: "1.0.0",
    map: Counter::default(),
}

#[cfg(test)]
mod tests {
    use super::*;
    use eddy::testing::StateMode;

    #[test]
    fn counts_per_key() {
        let mut g = eddy_guest();
        g.set_state_mode(StateMode::Memory);
        let recs = [
            Record::new(Some(b"a"), None),
            Record::new(Some(b"b"), None),
            Record::new(Some(b"a"), None),
            Record::new(None, None),
            Record::new(Some(b""), None),
        ];
        let out = g.process(&recs).unwrap();
        let vals: Vec<Vec<u8>> = out.iter().map(|o| o.as_ref().unwrap()[0].value.clone().unwrap()).collect();
        assert_eq!(vals, [b"1".to_vec(), b"1".to_vec(), b"2".to_vec(), b"1".to_vec(), b"2".to_vec()]);
        assert_eq!(g.state(b"a"), Some(b"2".to_vec()));
        assert_eq!(g.counter("records"), 5);
        g.set_state(b"big", "9".repeat(100).as_bytes());
        let out = g.process(&[Record::new(Some(b"big"), None)]).unwrap();
        assert_eq!(out[0].as_ref().unwrap_err().code, 1);
    }

    #[test]
    fn without_state() {
        let mut g = eddy_guest();
        let out = g.process(&[Record::new(Some(b"a"), None)]).unwrap();
        let f = out[0].as_ref().unwrap_err();
        assert_eq!((f.code, f.reason.as_str()), (1, "eddy: no keyed state store (the step is not stateful)"));
        g.set_state_mode(StateMode::Failing);
        let out = g.process(&[Record::new(Some(b"a"), None)]).unwrap();
        assert_eq!(out[0].as_ref().unwrap_err().code, 6);
    }

    #[test]
    fn parses_like_parse_uint() {
        assert_eq!(parse_count(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_count(b"18446744073709551616"), None);
        assert_eq!(parse_count(b"+1"), None);
        assert_eq!(parse_count(b""), None);
    }
}
