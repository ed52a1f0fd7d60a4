//! Timeout is a stateful Eddy process function with timers: it reports keys
//! that went quiet. For each record it keeps the record's timestamp as the
//! key's last activity (keyed state: the record key, a null key counting as
//! an empty one → the time in decimal text) and moves the key's event-time
//! timer to one second after it (deleting the one it set for the previous
//! record); it passes no record on. When a timer fires and the key's last
//! activity is still one second before it, it forgets the key and emits one
//! record: the key, the last activity in decimal as the value, and the
//! timer's time as the timestamp. A timer that no longer matches (none
//! should) and a processing-time timer emit nothing.
//!
//! In a step without keyed state (`Error::NO_STATE`) every record is
//! rejected (REJECTED); a host storage failure fails it with STATE.
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib timeout.rs -o timeout.wasm

use eddy::{state, Emitter, Error, Filter, OnTimer, Record, Result, TimeDomain, Timer};
use std::io::Write;

/// How long a key stays quiet before it is reported, in ms.
const GAP: i64 = 1000;

/// Parses a decimal time as Go's strconv.ParseInt(s, 10, 64) does: an
/// optional sign, then at least one ASCII digit, within the range of i64.
fn parse_time(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    // Accumulate negatively, so that i64::MIN parses.
    let n = digits.iter().try_fold(0i64, |n, &c| {
        if !c.is_ascii_digit() {
            return None;
        }
        n.checked_mul(10)?.checked_sub((c - b'0') as i64)
    })?;
    if neg {
        Some(n)
    } else {
        n.checked_neg()
    }
}

/// Reads the last activity stored under `key` into `buf`: `None` if there
/// is none.
fn last(key: &[u8], buf: &mut Vec<u8>) -> Result<Option<i64>> {
    if !state::get_into(key, buf)? {
        return Ok(None);
    }
    match parse_time(buf) {
        Some(t) => Ok(Some(t)),
        None => Err(Error::rejected(format!("stored time {:?}: not a decimal time", String::from_utf8_lossy(buf)))),
    }
}

/// The process handler: records the activity and moves the key's timer.
#[derive(Default)]
struct Touch {
    /// The stored time, then the new one, reused for every record.
    buf: Vec<u8>,
}

impl Filter for Touch {
    fn keep(&mut self, r: Record<'_>) -> Result<bool> {
        let key = r.key.unwrap_or_default();
        if let Some(prev) = last(key, &mut self.buf)? {
            eddy::delete_timer(key, TimeDomain::EventTime, prev.wrapping_add(GAP))?;
        }
        self.buf.clear();
        write!(self.buf, "{}", r.timestamp).unwrap();
        state::put(key, &self.buf)?;
        eddy::set_timer(key, TimeDomain::EventTime, r.timestamp.wrapping_add(GAP))?;
        Ok(false)
    }
}

/// The timer handler: reports a key whose timer still matches its last
/// activity.
#[derive(Default)]
struct Fire {
    /// The stored time, then the value emitted, reused for every timer.
    buf: Vec<u8>,
}

impl OnTimer for Fire {
    fn on_timer(&mut self, t: Timer<'_>, out: &mut Emitter<'_>) -> Result<()> {
        if t.domain != TimeDomain::EventTime {
            return Ok(());
        }
        let at = match last(t.key, &mut self.buf)? {
            Some(at) if at.wrapping_add(GAP) == t.time => at,
            _ => return Ok(()),
        };
        state::delete(t.key)?;
        self.buf.clear();
        write!(self.buf, "{}", at).unwrap();
        // Timestamp 0: the record gets the timer's time.
        out.emit(Record::new(Some(t.key), Some(&self.buf)));
        Ok(())
    }
}

eddy::export! {
    name: "timeout",
    version: "1.0.0",
    filter: Touch::default(),
    timer: Fire::default(),
}

#[cfg(test)]
mod tests {
    use super::*;
    use eddy::testing::{PendingTimer, StateMode};

    fn rec(key: Option<&'static [u8]>, ts: i64) -> Record<'static> {
        Record { timestamp: ts, ..Record::new(key, Some(b"v")) }
    }

    fn ev(key: &'static [u8], time: i64) -> Timer<'static> {
        Timer { key, time, domain: TimeDomain::EventTime }
    }

    #[test]
    fn moves_timers_and_reports_quiet_keys() {
        let mut g = eddy_guest();
        let m = g.manifest().unwrap();
        assert_eq!(
            (m.kinds, m.name.as_deref(), m.version.as_deref()),
            (vec!["process".to_owned(), "timer".to_owned()], Some("timeout"), Some("1.0.0"))
        );
        g.set_state_mode(StateMode::Memory);
        let recs = [rec(Some(b"a"), 1000), rec(Some(b"b"), 1500), rec(Some(b"a"), 1800), rec(None, 2000)];
        let out = g.process(&recs).unwrap();
        assert!(out.iter().all(|o| o.as_ref().unwrap().is_empty()), "{:?}", out);
        let pt = |time, key: &[u8]| PendingTimer { time, domain: TimeDomain::EventTime, key: key.to_vec() };
        assert_eq!(g.timers(), [pt(2500, b"b"), pt(2800, b"a"), pt(3000, b"")]);
        assert_eq!(g.state(b"a"), Some(b"1800".to_vec()));
        assert_eq!(g.state(b"b"), Some(b"1500".to_vec()));
        assert_eq!(g.state(b""), Some(b"2000".to_vec()));

        let processing = Timer { key: b"a", time: 2800, domain: TimeDomain::ProcessingTime };
        let fired = [
            ev(b"b", 2500), // matches: reported
            ev(b"a", 2000), // stale: a's last activity is 1800
            processing,     // ignored
            ev(b"c", 9000), // no activity known
            ev(b"", 3000),  // the null/empty key's
        ];
        let out = g.timer(&fired).unwrap();
        let b = out[0].as_ref().unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!(
            (b[0].key.as_deref(), b[0].value.as_deref(), b[0].timestamp),
            (Some(&b"b"[..]), Some(&b"1500"[..]), 2500)
        );
        assert!(b[0].headers.is_empty());
        for o in &out[1..4] {
            assert_eq!(o, &Ok(vec![]));
        }
        let e = out[4].as_ref().unwrap();
        assert_eq!(
            (e[0].key.as_deref(), e[0].value.as_deref(), e[0].timestamp),
            (Some(&b""[..]), Some(&b"2000"[..]), 3000)
        );
        assert_eq!((g.state(b"b"), g.state(b""), g.state(b"a")), (None, None, Some(b"1800".to_vec())));

        // The reported timestamp is the timer's: nil in the answer.
        g.set_state(b"k", b"5");
        let raw = g.call_raw("eddy_timer", &[0x91, 0x93, 0xc4, 0x01, b'k', 0xcd, 0x03, 0xed, 0x00]).unwrap();
        assert_eq!(raw, [0x91, 0x92, 0x00, 0x91, 0x94, 0xc4, 0x01, b'k', 0xc4, 0x01, b'5', 0xc0, 0x90]);
    }

    #[test]
    fn without_state() {
        let mut g = eddy_guest();
        let out = g.process(&[rec(Some(b"a"), 1)]).unwrap();
        let f = out[0].as_ref().unwrap_err();
        assert_eq!((f.code, f.reason.as_str()), (1, "eddy: no keyed state store (the step is not stateful)"));
        assert_eq!(g.timer(&[ev(b"a", 1001)]).unwrap()[0].as_ref().unwrap_err().code, 1);
        g.set_state_mode(StateMode::Failing);
        let out = g.process(&[rec(Some(b"a"), 1)]).unwrap();
        assert_eq!(out[0].as_ref().unwrap_err().code, 6);
        assert_eq!(g.timer(&[ev(b"a", 1001)]).unwrap()[0].as_ref().unwrap_err().code, 6);
    }

    #[test]
    fn bad_stored_time() {
        let mut g = eddy_guest();
        g.set_state_mode(StateMode::Memory);
        g.set_state(b"a", b"soon");
        let out = g.process(&[rec(Some(b"a"), 1)]).unwrap();
        let f = out[0].as_ref().unwrap_err();
        assert_eq!((f.code, f.reason.as_str()), (1, "stored time \"soon\": not a decimal time"));
        assert!(g.timers().is_empty());
        // A stored time at the end of the range wraps as in Go.
        g.set_state(b"a", i64::MAX.to_string().as_bytes());
        assert_eq!(g.process(&[rec(Some(b"a"), 7)]).unwrap()[0], Ok(vec![]));
        assert_eq!(g.timers().len(), 1);
    }

    #[test]
    fn parses_like_parse_int() {
        assert_eq!(parse_time(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_time(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_time(b"9223372036854775808"), None);
        assert_eq!(parse_time(b"+12"), Some(12));
        assert_eq!(parse_time(b"-0"), Some(0));
        assert_eq!(parse_time(b"-"), None);
        assert_eq!(parse_time(b""), None);
        assert_eq!(parse_time(b"1 "), None);
    }
}
