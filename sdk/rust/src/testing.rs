//! A native test harness: it drives a guest's handlers through the same
//! envelopes the host sends, without compiling to Wasm or running a host,
//! so that handlers, error codes and state can be tested with `rustc --test`.
//! It exists in native builds only.
//!
//! [`export!`](crate::export) defines `fn eddy_guest() -> Guest` in native
//! builds:
//!
//! ```
//! use eddy::{Record, Result};
//!
//! fn upper(mut r: Record<'_>) -> Result<Record<'_>> {
//!     r.value = Some(b"HI");
//!     Ok(r)
//! }
//! eddy::export! { map: upper }
//!
//! # fn main() {
//! let mut g = eddy_guest();
//! let out = g.process(&[Record::new(Some(b"k"), Some(b"hi"))]).unwrap();
//! let recs = out[0].as_ref().unwrap();
//! assert_eq!(recs[0].value.as_deref(), Some(&b"HI"[..]));
//! # }
//! ```
//!
//! Keyed state, timers, the step's configuration, counters and the log are
//! in-memory stand-ins for the host's, kept per thread. A [`Guest`] holds a process-wide lock while it lives,
//! because a module's handlers and the SDK's buffers are single-threaded,
//! like a Wasm instance: tests that use it run one at a time.

pub use crate::host::imp::StateMode;
use crate::host::imp::NATIVE;
use crate::msgpack::{self, DecodeError, Reader};
use crate::rt::{self, CallError, CallFn, Export};
use crate::{Level, OwnedRecord, Record, TimeDomain, Timer};
use std::sync::{Mutex, MutexGuard};

static LOCK: Mutex<()> = Mutex::new(());

/// A failed item: its code (ABI.md section 7) and reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The error code.
    pub code: u8,
    /// The reason.
    pub reason: String,
}

/// The answer for one input item.
pub type Outcome<T> = Result<T, Failure>;

/// The decoded manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The ABI version.
    pub abi: i64,
    /// The kinds, in the order written.
    pub kinds: Vec<String>,
    /// The function's name, if given.
    pub name: Option<String>,
    /// The function's version, if given.
    pub version: Option<String>,
    /// The SDK that built it.
    pub sdk: Option<String>,
}

/// One group of [`Guest::agg_add`].
#[derive(Clone, Copy, Debug)]
pub struct Group<'a> {
    /// The group's key.
    pub key: Option<&'a [u8]>,
    /// The accumulator; `None` starts from the initial one.
    pub acc: Option<&'a [u8]>,
    /// The records to fold, in order.
    pub records: &'a [Record<'a>],
}

/// The answer for one group of [`Guest::agg_add`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Added {
    /// The accumulator after all the records that were folded.
    pub acc: Vec<u8>,
    /// The records that were not folded: index within the group, failure.
    pub errors: Vec<(usize, Failure)>,
}

/// A timer the guest has set and not deleted ([`Guest::timers`]).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PendingTimer {
    /// The timer's time, in ms since the Unix epoch.
    pub time: i64,
    /// The timer's domain.
    pub domain: TimeDomain,
    /// The key the timer was set for.
    pub key: Vec<u8>,
}

impl PendingTimer {
    /// The timer as it fires, to hand to [`Guest::timer`].
    pub fn as_timer(&self) -> Timer<'_> {
        Timer { key: &self.key, time: self.time, domain: self.domain }
    }
}

/// Drives one module's handlers natively (see the module documentation).
pub struct Guest {
    call: CallFn,
    _lock: MutexGuard<'static, ()>,
}

/// A malformed answer, as a call error (it would be a host-side failure).
fn malformed(e: DecodeError) -> CallError {
    CallError { code: 0, message: format!("malformed output envelope: {}", e).into() }
}

fn owned(b: Option<&[u8]>) -> Option<Vec<u8>> {
    b.map(<[u8]>::to_vec)
}

/// Appends an input Record as the host writes it.
fn write_input_record(b: &mut Vec<u8>, r: &Record<'_>) {
    b.push(0x94);
    msgpack::write_bin(b, r.key);
    msgpack::write_bin(b, r.value);
    msgpack::write_int(b, r.timestamp);
    msgpack::write_array_header(b, r.headers.len());
    for h in r.headers.iter() {
        b.push(0x92);
        msgpack::write_str(b, h.name);
        msgpack::write_bin(b, h.value);
    }
}

fn records_envelope(recs: &[Record<'_>]) -> Vec<u8> {
    let mut b = Vec::new();
    msgpack::write_array_header(&mut b, recs.len());
    for r in recs {
        write_input_record(&mut b, r);
    }
    b
}

/// Reads a Result and its body with `body`.
fn read_result<'a, T>(
    r: &mut Reader<'a>,
    body: impl FnOnce(&mut Reader<'a>) -> Result<T, DecodeError>,
) -> Result<Outcome<T>, DecodeError> {
    if r.array_len()? != 2 {
        return Err(DecodeError::Short);
    }
    let code = r.int()?;
    if code == 0 {
        return Ok(Ok(body(r)?));
    }
    let reason = String::from_utf8_lossy(r.str_bytes()?).into_owned();
    Ok(Err(Failure { code: code as u8, reason }))
}

fn read_results<T>(
    out: &[u8],
    mut body: impl FnMut(&mut Reader<'_>) -> Result<T, DecodeError>,
) -> Result<Vec<Outcome<T>>, CallError> {
    let mut r = Reader::new(out);
    let n = r.array_len().map_err(malformed)?;
    (0..n).map(|_| read_result(&mut r, &mut body).map_err(malformed)).collect()
}

/// Decodes the answer of eddy_process; `in_ts(i)` is the timestamp of
/// input record i, which a nil output timestamp inherits.
fn decode_process(out: &[u8], in_ts: impl Fn(usize) -> i64) -> Result<Vec<Outcome<Vec<OwnedRecord>>>, CallError> {
    let mut r = Reader::new(out);
    let n = r.array_len().map_err(malformed)?;
    let mut res = Vec::with_capacity(n);
    for i in 0..n {
        let in_ts = in_ts(i);
        let body = |r: &mut Reader<'_>| -> Result<Vec<OwnedRecord>, DecodeError> {
            let k = r.array_len()?;
            let mut v = Vec::with_capacity(k);
            for _ in 0..k {
                if r.array_len()? != 4 {
                    return Err(DecodeError::Short);
                }
                let key = owned(r.bytes()?);
                let value = owned(r.bytes()?);
                let timestamp = if r.is_nil() {
                    r.nil()?;
                    in_ts
                } else {
                    r.int()?
                };
                let mut headers = Vec::new();
                if r.is_nil() {
                    r.nil()?;
                } else {
                    for _ in 0..r.array_len()? {
                        r.array_len()?;
                        headers.push((r.str()?.to_owned(), owned(r.bytes()?)));
                    }
                }
                v.push(OwnedRecord { key, value, timestamp, headers });
            }
            Ok(v)
        };
        res.push(read_result(&mut r, body).map_err(malformed)?);
    }
    Ok(res)
}

impl Guest {
    /// A harness for the module whose calls `call` answers (what
    /// `export!` generates). It resets this thread's stand-in state
    /// (absent), timers and current times (unknown), configuration (none),
    /// counters and log, and holds a process-wide lock until it is dropped.
    pub fn new(call: CallFn) -> Guest {
        let lock = LOCK.lock().unwrap_or_else(|e| e.into_inner());
        NATIVE.with(|n| {
            let mut n = n.borrow_mut();
            n.mode = StateMode::Absent;
            n.state.clear();
            n.counters.clear();
            n.logs.clear();
            n.last_error = None;
            n.timers.clear();
            n.now = [crate::NO_TIME; 2];
            n.config.clear();
        });
        Guest { call, _lock: lock }
    }

    /// Runs the export called `export` on an input envelope and returns the
    /// output envelope. An unknown export name fails with UNSUPPORTED.
    pub fn call_raw(&mut self, export: &str, envelope: &[u8]) -> Result<Vec<u8>, CallError> {
        let e = Export::from_name(export).ok_or_else(|| CallError {
            code: crate::code::UNSUPPORTED,
            message: format!("no export named {:?}", export).into(),
        })?;
        rt::invoke(e, envelope, self.call).map(<[u8]>::to_vec)
    }

    /// Calls eddy_manifest and decodes the answer.
    pub fn manifest(&mut self) -> Result<Manifest, CallError> {
        let out = self.call_raw("eddy_manifest", &[])?;
        let mut r = Reader::new(&out);
        let mut m = Manifest::default();
        let n = r.map_len().map_err(malformed)?;
        for _ in 0..n {
            let k = r.str().map_err(malformed)?;
            match k {
                "abi" => m.abi = r.int().map_err(malformed)?,
                "kinds" => {
                    let k = r.array_len().map_err(malformed)?;
                    for _ in 0..k {
                        m.kinds.push(r.str().map_err(malformed)?.to_owned());
                    }
                }
                "name" => m.name = Some(r.str().map_err(malformed)?.to_owned()),
                "version" => m.version = Some(r.str().map_err(malformed)?.to_owned()),
                "sdk" => m.sdk = Some(r.str().map_err(malformed)?.to_owned()),
                _ => r.skip().map_err(malformed)?,
            }
        }
        Ok(m)
    }

    /// Calls eddy_process on `recs`. Each outcome holds the output records,
    /// with an inherited (nil) timestamp replaced by the input's, as the
    /// host does.
    pub fn process(&mut self, recs: &[Record<'_>]) -> Result<Vec<Outcome<Vec<OwnedRecord>>>, CallError> {
        let out = self.call_raw("eddy_process", &records_envelope(recs))?;
        decode_process(&out, |i| recs.get(i).map_or(0, |r| r.timestamp))
    }

    /// Calls eddy_process on an envelope written by hand and decodes the
    /// answer as [`process`](Guest::process) does; an inherited timestamp
    /// reads as 0.
    pub fn process_raw(&mut self, envelope: &[u8]) -> Result<Vec<Outcome<Vec<OwnedRecord>>>, CallError> {
        let out = self.call_raw("eddy_process", envelope)?;
        decode_process(&out, |_| 0)
    }

    /// Calls eddy_timer on `timers`, as the host does when they fire. Each
    /// outcome holds the output records, with an inherited (nil) timestamp
    /// replaced by the timer's time, as the host does. It does not delete
    /// the timers from [`timers`](Guest::timers) (the host deletes a timer
    /// as it fires).
    pub fn timer(&mut self, timers: &[Timer<'_>]) -> Result<Vec<Outcome<Vec<OwnedRecord>>>, CallError> {
        let mut b = Vec::new();
        msgpack::write_array_header(&mut b, timers.len());
        for t in timers {
            b.push(0x93);
            msgpack::write_bin(&mut b, Some(t.key));
            msgpack::write_int(&mut b, t.time);
            msgpack::write_int(&mut b, t.domain as i64);
        }
        let out = self.call_raw("eddy_timer", &b)?;
        decode_process(&out, |i| timers.get(i).map_or(0, |t| t.time))
    }

    /// Calls eddy_key on `recs`: each outcome is the new key.
    pub fn key(&mut self, recs: &[Record<'_>]) -> Result<Vec<Outcome<Option<Vec<u8>>>>, CallError> {
        let out = self.call_raw("eddy_key", &records_envelope(recs))?;
        read_results(&out, |r| Ok(owned(r.bytes()?)))
    }

    /// Calls eddy_timestamp on `recs`: each outcome is the event time.
    pub fn timestamp(&mut self, recs: &[Record<'_>]) -> Result<Vec<Outcome<i64>>, CallError> {
        let out = self.call_raw("eddy_timestamp", &records_envelope(recs))?;
        read_results(&out, |r| r.int())
    }

    /// Calls eddy_join on (key, left, right) items: each outcome is the
    /// joined value (`None`: emit nothing).
    #[allow(clippy::type_complexity)]
    pub fn join(
        &mut self,
        items: &[(Option<&[u8]>, Option<&[u8]>, Option<&[u8]>)],
    ) -> Result<Vec<Outcome<Option<Vec<u8>>>>, CallError> {
        let mut b = Vec::new();
        msgpack::write_array_header(&mut b, items.len());
        for (k, l, r) in items {
            b.push(0x93);
            msgpack::write_bin(&mut b, *k);
            msgpack::write_bin(&mut b, *l);
            msgpack::write_bin(&mut b, *r);
        }
        let out = self.call_raw("eddy_join", &b)?;
        read_results(&out, |r| Ok(owned(r.bytes()?)))
    }

    /// Calls eddy_agg_init: the initial accumulator.
    pub fn agg_init(&mut self) -> Result<Outcome<Vec<u8>>, CallError> {
        let out = self.call_raw("eddy_agg_init", &[])?;
        read_result(&mut Reader::new(&out), |r| Ok(r.bytes()?.unwrap_or_default().to_vec())).map_err(malformed)
    }

    /// Calls eddy_agg_add on `groups`.
    pub fn agg_add(&mut self, groups: &[Group<'_>]) -> Result<Vec<Added>, CallError> {
        let mut b = Vec::new();
        msgpack::write_array_header(&mut b, groups.len());
        for g in groups {
            b.push(0x93);
            msgpack::write_bin(&mut b, g.key);
            msgpack::write_bin(&mut b, g.acc);
            msgpack::write_array_header(&mut b, g.records.len());
            for r in g.records {
                write_input_record(&mut b, r);
            }
        }
        let out = self.call_raw("eddy_agg_add", &b)?;
        let mut r = Reader::new(&out);
        let read = |r: &mut Reader<'_>| -> Result<Added, DecodeError> {
            r.array_len()?;
            let acc = r.bytes()?.unwrap_or_default().to_vec();
            let mut errors = Vec::new();
            for _ in 0..r.array_len()? {
                r.array_len()?;
                let i = r.int()? as usize;
                let code = r.int()? as u8;
                let reason = String::from_utf8_lossy(r.str_bytes()?).into_owned();
                errors.push((i, Failure { code, reason }));
            }
            Ok(Added { acc, errors })
        };
        let n = r.array_len().map_err(malformed)?;
        (0..n).map(|_| read(&mut r).map_err(malformed)).collect()
    }

    /// Calls eddy_agg_merge on (key, a, b) items: each outcome is the merged
    /// accumulator.
    pub fn agg_merge(&mut self, items: &[(Option<&[u8]>, &[u8], &[u8])]) -> Result<Vec<Outcome<Vec<u8>>>, CallError> {
        let mut b = Vec::new();
        msgpack::write_array_header(&mut b, items.len());
        for (k, x, y) in items {
            b.push(0x93);
            msgpack::write_bin(&mut b, *k);
            msgpack::write_bin(&mut b, Some(x));
            msgpack::write_bin(&mut b, Some(y));
        }
        let out = self.call_raw("eddy_agg_merge", &b)?;
        read_results(&out, |r| Ok(r.bytes()?.unwrap_or_default().to_vec()))
    }

    /// Calls eddy_agg_result on (key, acc) items: each outcome is the output
    /// value (`None`: emit nothing).
    pub fn agg_result(&mut self, items: &[(Option<&[u8]>, &[u8])]) -> Result<Vec<Outcome<Option<Vec<u8>>>>, CallError> {
        let mut b = Vec::new();
        msgpack::write_array_header(&mut b, items.len());
        for (k, acc) in items {
            b.push(0x92);
            msgpack::write_bin(&mut b, *k);
            msgpack::write_bin(&mut b, Some(acc));
        }
        let out = self.call_raw("eddy_agg_result", &b)?;
        read_results(&out, |r| Ok(owned(r.bytes()?)))
    }

    /// Sets what the stand-in state store and timer service do (initially
    /// [`StateMode::Absent`]).
    pub fn set_state_mode(&mut self, mode: StateMode) {
        NATIVE.with(|n| n.borrow_mut().mode = mode);
    }

    /// The stand-in state value under `key`.
    pub fn state(&self, key: &[u8]) -> Option<Vec<u8>> {
        NATIVE.with(|n| n.borrow().state.get(key).cloned())
    }

    /// Presets the stand-in state value under `key`.
    pub fn set_state(&mut self, key: &[u8], value: &[u8]) {
        NATIVE.with(|n| n.borrow_mut().state.insert(key.to_vec(), value.to_vec()));
    }

    /// The timers the guest has set and not deleted, in order of time, then
    /// domain, then key.
    pub fn timers(&self) -> Vec<PendingTimer> {
        NATIVE.with(|n| {
            let mut ts: Vec<PendingTimer> = n
                .borrow()
                .timers
                .iter()
                .map(|(key, d, time)| PendingTimer {
                    time: *time,
                    domain: TimeDomain::from_i64(*d as i64).unwrap_or(TimeDomain::EventTime),
                    key: key.clone(),
                })
                .collect();
            ts.sort();
            ts
        })
    }

    /// Removes every timer.
    pub fn clear_timers(&mut self) {
        NATIVE.with(|n| n.borrow_mut().timers.clear());
    }

    /// Sets what [`current_time`](crate::current_time) answers for
    /// `domain` (initially [`NO_TIME`](crate::NO_TIME)). In
    /// [`StateMode::Absent`] it answers `NO_TIME` whatever is set, as a
    /// step without timers does.
    pub fn set_current_time(&mut self, domain: TimeDomain, now: i64) {
        NATIVE.with(|n| n.borrow_mut().now[domain as usize] = now);
    }

    /// Sets the step's configuration: the entries that
    /// [`config`](crate::config()) reads, replacing any set before (an
    /// empty slice: no configuration, as initially).
    ///
    /// The handlers that `export!` makes live as long as the test program:
    /// every `Guest` of a module drives the same handlers, like one
    /// instance. A handler that reads an entry once (when it is made, or on
    /// its first record) keeps what it read, so set the configuration before
    /// the module's first call, or test the handler's type directly (make
    /// one after `set_config` and call its trait method).
    pub fn set_config(&mut self, entries: &[(&str, &[u8])]) {
        NATIVE.with(|n| {
            n.borrow_mut().config = entries.iter().map(|(k, v)| ((*k).to_owned(), v.to_vec())).collect();
        });
    }

    /// The value of the counter called `name` (0 if never added to).
    pub fn counter(&self, name: &str) -> i64 {
        NATIVE.with(|n| n.borrow().counters.get(name).copied().unwrap_or(0))
    }

    /// The log lines written so far, with their levels.
    pub fn logs(&self) -> Vec<(Level, String)> {
        let level = |l: i32| match l {
            0 => Level::Debug,
            1 => Level::Info,
            2 => Level::Warn,
            _ => Level::Error,
        };
        NATIVE.with(|n| n.borrow().logs.iter().map(|(l, s)| (level(*l), s.clone())).collect())
    }
}
