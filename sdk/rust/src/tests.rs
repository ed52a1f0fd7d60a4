//! Native unit tests of the codec and the dispatch. Run them with
//! `sdk/rust/test.sh`, or by hand:
//!
//! ```text
//! rustc --edition 2021 --test sdk/rust/src/lib.rs -o /tmp/eddy-sdk-test && /tmp/eddy-sdk-test
//! ```

use crate::msgpack::{self, DecodeError, Reader};
use crate::rt::{CallError, Export};
use crate::testing::{Failure, Group, PendingTimer, StateMode};
use crate::{code, state, Emitter, Error, Header, Headers, Record, Result, TimeDomain, Timer};

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

// --- Codec ---

#[test]
fn ints_round_trip_in_shortest_form() {
    let cases: [(i64, &str); 16] = [
        (0, "00"),
        (127, "7f"),
        (128, "cc80"),
        (255, "ccff"),
        (256, "cd0100"),
        (65535, "cdffff"),
        (65536, "ce00010000"),
        (4294967295, "ceffffffff"),
        (4294967296, "cf0000000100000000"),
        (-1, "ff"),
        (-32, "e0"),
        (-33, "d0df"),
        (-128, "d080"),
        (-129, "d1ff7f"),
        (-32769, "d2ffff7fff"),
        (i64::MIN, "d38000000000000000"),
    ];
    for (v, want) in cases {
        let mut b = Vec::new();
        msgpack::write_int(&mut b, v);
        assert_eq!(b, hex(want), "{}", v);
        let mut r = Reader::new(&b);
        assert_eq!(r.int(), Ok(v));
        assert_eq!(r.remaining(), 0);
    }
}

#[test]
fn reader_accepts_every_int_width() {
    let cases: [(&str, i64); 8] = [
        ("cc05", 5),
        ("cd0005", 5),
        ("ce00000005", 5),
        ("cf0000000000000005", 5),
        ("d0fb", -5),
        ("d1fffb", -5),
        ("d2fffffffb", -5),
        ("d3fffffffffffffffb", -5),
    ];
    for (h, want) in cases {
        assert_eq!(Reader::new(&hex(h)).int(), Ok(want), "{}", h);
    }
    assert_eq!(Reader::new(&hex("cfffffffffffffffff")).int(), Err(DecodeError::Overflow { offset: 0 }));
    assert_eq!(Reader::new(&hex("cfffffffffffffffff")).uint(), Ok(u64::MAX));
    assert_eq!(Reader::new(&hex("ff")).uint(), Err(DecodeError::Overflow { offset: 0 }));
    assert_eq!(Reader::new(&hex("cd00")).int(), Err(DecodeError::Short));
    assert!(matches!(Reader::new(&hex("c0")).int(), Err(DecodeError::Type { got: 0xc0, .. })));
}

#[test]
fn bytes_nil_and_empty_differ() {
    let mut b = Vec::new();
    msgpack::write_bin(&mut b, None);
    msgpack::write_bin(&mut b, Some(b""));
    assert_eq!(b, hex("c0 c400"));
    let mut r = Reader::new(&b);
    assert_eq!(r.bytes(), Ok(None));
    assert_eq!(r.bytes(), Ok(Some(&b""[..])));
}

#[test]
fn bytes_and_strings_of_every_width() {
    for n in [0usize, 31, 32, 255, 256, 65535, 65536] {
        let v = vec![b'x'; n];
        let mut b = Vec::new();
        msgpack::write_bin(&mut b, Some(&v));
        msgpack::write_str(&mut b, std::str::from_utf8(&v).unwrap());
        let mut r = Reader::new(&b);
        assert_eq!(r.bytes().unwrap().unwrap().len(), n);
        // bytes accepts str too.
        assert_eq!(r.clone().bytes().unwrap().unwrap().len(), n);
        assert_eq!(r.str().unwrap().len(), n);
        assert_eq!(r.remaining(), 0);
    }
    // str 8/16/32 and bin 16/32 written by other encoders, not in shortest form.
    for h in ["d9026869", "da00026869", "db000000026869", "c500026869", "c6000000026869"] {
        assert_eq!(Reader::new(&hex(h)).bytes(), Ok(Some(&b"hi"[..])), "{}", h);
    }
    assert_eq!(Reader::new(&hex("c40568")).bytes(), Err(DecodeError::Short));
    assert_eq!(Reader::new(&hex("c4")).bytes(), Err(DecodeError::Short));
    assert!(Reader::new(&hex("c40168")).str().is_err(), "str refuses bin");
    assert!(Reader::new(&hex("a1ff")).str().is_err(), "str must be UTF-8");
}

#[test]
fn containers_of_every_width() {
    for n in [0usize, 15, 16, 65535, 65536] {
        let mut b = Vec::new();
        msgpack::write_array_header(&mut b, n);
        b.resize(b.len() + n, 0);
        assert_eq!(Reader::new(&b).array_len(), Ok(n));
        let mut b = Vec::new();
        msgpack::write_map_header(&mut b, n);
        b.resize(b.len() + 2 * n, 0);
        assert_eq!(Reader::new(&b).map_len(), Ok(n));
    }
    // A count larger than the bytes left is refused before anything is
    // allocated for it.
    assert_eq!(Reader::new(&hex("ddffffffff00")).array_len(), Err(DecodeError::Short));
    assert_eq!(Reader::new(&hex("8100")).map_len(), Err(DecodeError::Short));
}

#[test]
fn skip_walks_the_subset() {
    // {"a": [nil, true, -1, "x", bin "y", {1: 2}], "b": cf 0..}, then 07
    let b = hex("82 a161 96 c0 c3 ff a178 c40179 810102 a162 cf0000000000000001 07");
    let mut r = Reader::new(&b);
    r.skip().unwrap();
    assert_eq!(r.int(), Ok(7));
    // Floats and ext are not in the subset.
    for h in ["cb0000000000000000", "ca00000000", "d40100", "c1"] {
        let b = hex(h);
        let mut r = Reader::new(&b);
        assert!(r.skip().is_err(), "{}", h);
        assert_eq!(r.position(), 0);
    }
    let deep = vec![0x91u8; 100];
    assert!(matches!(Reader::new(&deep).skip(), Err(DecodeError::TooDeep { .. })));
}

// --- Dispatch ---

mod upper_guest {
    use crate::{Map, Record, Result};

    #[derive(Default)]
    pub struct Upper {
        buf: Vec<u8>,
    }

    impl Map for Upper {
        fn map<'a>(&'a mut self, mut r: Record<'a>) -> Result<Record<'a>> {
            if let Some(v) = r.value {
                if v == b"bad json" {
                    return Err(crate::Error::rejected("bad json"));
                }
                self.buf.clear();
                self.buf.extend(v.iter().map(u8::to_ascii_uppercase));
                r.value = Some(&self.buf);
                r.headers = crate::Headers::NONE;
            }
            Ok(r)
        }
    }

    crate::export! { name: "upper", map: Upper::default() }
}

#[test]
fn worked_example_of_abi_section_9() {
    let mut g = upper_guest::eddy_guest();
    let input = hex("91 94 c4016b c4026869 cf0000018bcfe56800 91 92 a168 c40176");
    assert_eq!(input.len(), 25);
    let out = g.call_raw("eddy_process", &input).unwrap();
    assert_eq!(out, hex("91 92 00 91 94 c4016b c4024849 c0 90"));
    let out = g.call_raw("eddy_process", &hex("91 94 c4016b c408 626164206a736f6e 01 90")).unwrap();
    assert_eq!(out, hex("91 92 01 a8 6261642 06a736f6e"));
}

#[test]
fn manifest() {
    let mut g = upper_guest::eddy_guest();
    let out = g.call_raw("eddy_manifest", &[]).unwrap();
    let mut want = hex("84 a3616269 01 a56b696e6473 91 a770726f63657373 a46e616d65 a575707065 72");
    msgpack::write_str(&mut want, "sdk");
    msgpack::write_str(&mut want, "rust/0.1.0");
    assert_eq!(out, want);
    let m = g.manifest().unwrap();
    assert_eq!((m.abi, m.kinds, m.name.as_deref(), m.version), (1, vec!["process".to_owned()], Some("upper"), None));
}

#[test]
fn empty_batch_and_general_records() {
    let mut g = upper_guest::eddy_guest();
    assert_eq!(g.call_raw("eddy_process", &hex("90")).unwrap(), hex("90"));
    // A record with str key and value, a nil timestamp and nil headers, as a
    // lenient decoder accepts.
    assert_eq!(
        g.call_raw("eddy_process", &hex("91 94 a16b a26869 c0 c0")).unwrap(),
        hex("91 92 00 91 94 c4016b c4024849 c0 90")
    );
    // Nil key and value.
    assert_eq!(g.call_raw("eddy_process", &hex("91 94 c0 c0 05 90")).unwrap(), hex("91 92 00 91 94 c0 c0 c0 90"));
}

#[test]
fn bad_envelopes() {
    let mut g = upper_guest::eddy_guest();
    // The count cannot be read: the call fails with BAD_ENVELOPE.
    let err = g.call_raw("eddy_process", &hex("c0")).unwrap_err();
    assert_eq!(err.code, code::BAD_ENVELOPE);
    let err = g.call_raw("eddy_process", &[]).unwrap_err();
    assert_eq!(err.code, code::BAD_ENVELOPE);
    // The count is readable but a record is not: every item fails, and no
    // user code runs (the first record would have been answered).
    let res = g.process_raw(&hex("92 94 c0 c40161 01 90 93 c0 c0 01")).unwrap();
    assert_eq!(res.len(), 2);
    for r in res {
        let f = r.unwrap_err();
        assert_eq!(f.code, code::BAD_ENVELOPE);
        assert!(f.reason.contains("record 1"), "{}", f.reason);
    }
    // Trailing bytes.
    let res = g.process_raw(&hex("91 94 c0 c0 01 90 00")).unwrap();
    assert_eq!(res[0].as_ref().unwrap_err().code, code::BAD_ENVELOPE);
    // A header that is not a pair.
    let res = g.process_raw(&hex("91 94 c0 c0 01 91 91 a168")).unwrap();
    assert_eq!(res[0].as_ref().unwrap_err().code, code::BAD_ENVELOPE);
}

#[test]
fn unsupported_kinds() {
    let mut g = upper_guest::eddy_guest();
    let res = g.key(&[Record::new(None, None)]).unwrap();
    assert_eq!(res[0].as_ref().unwrap_err().code, code::UNSUPPORTED);
    let res = g.timer(&[Timer { key: b"k", time: 1, domain: TimeDomain::EventTime }]).unwrap();
    let f = res[0].as_ref().unwrap_err();
    assert_eq!((f.code, f.reason.as_str()), (code::UNSUPPORTED, "this module implements no timer function"));
    assert_eq!(g.call_raw("eddy_timer", &hex("90")).unwrap(), hex("90"));
    assert_eq!(g.agg_init().unwrap().unwrap_err().code, code::UNSUPPORTED);
    let recs = [Record::new(None, None), Record::new(None, None)];
    let added = g.agg_add(&[Group { key: None, acc: Some(b"acc"), records: &recs }]).unwrap();
    assert_eq!(added[0].acc, b"acc");
    assert_eq!(added[0].errors.iter().map(|e| (e.0, e.1.code)).collect::<Vec<_>>(), [(0, 4), (1, 4)]);
    assert!(g.call_raw("eddy_nothing", &[]).is_err());
}

mod kinds_guest {
    use crate::{Emitter, Error, Header, Headers, Record, Result};

    /// Emits the value's bytes as one record each; "err" fails after
    /// emitting.
    pub fn explode(r: Record<'_>, out: &mut Emitter<'_>) -> Result<()> {
        let v = r.value.unwrap_or_default();
        static H: [Header<'static>; 1] = [Header { name: "n", value: None }];
        for i in 0..v.len() {
            out.emit(Record {
                value: Some(&v[i..i + 1]),
                timestamp: r.timestamp + i as i64,
                headers: Headers::new(&H),
                ..r
            });
        }
        if v == b"err" {
            return Err(Error::with_code(99, "no"));
        }
        Ok(())
    }

    pub fn key(r: Record<'_>) -> Result<Option<&[u8]>> {
        Ok(r.headers.get("k").flatten())
    }

    pub fn ts(r: Record<'_>) -> Result<i64> {
        if r.timestamp < 0 {
            return Err(Error::bad_input("negative"));
        }
        Ok(r.timestamp * 2)
    }

    crate::export! { version: "2", flat_map: explode, key: key, timestamp: ts }
}

#[test]
fn flat_map_key_and_timestamp() {
    let mut g = kinds_guest::eddy_guest();
    let long = [b'x'; 20];
    let h = [Header { name: "k", value: Some(b"from-header") }, Header { name: "z", value: None }];
    let recs = [
        Record { key: Some(b"k"), value: Some(b"ab"), timestamp: 10, headers: Headers::new(&h) },
        Record::new(None, Some(&long)),
        Record::new(None, Some(b"err")),
        Record::new(None, None),
    ];
    let res = g.process(&recs).unwrap();
    let a = res[0].as_ref().unwrap();
    assert_eq!(a.len(), 2);
    assert_eq!((a[0].timestamp, a[1].timestamp), (10, 11));
    assert_eq!(a[1].value.as_deref(), Some(&b"b"[..]));
    assert_eq!(a[1].headers, [("n".to_owned(), None)]);
    assert_eq!(res[1].as_ref().unwrap().len(), 20);
    assert_eq!(res[2].as_ref().unwrap_err(), &Failure { code: 99, reason: "no".into() });
    assert!(res[3].as_ref().unwrap().is_empty());

    let keys = g.key(&recs).unwrap();
    assert_eq!(keys[0].as_ref().unwrap().as_deref(), Some(&b"from-header"[..]));
    assert_eq!(keys[1].as_ref().unwrap().as_deref(), None);

    let recs = [Record { timestamp: 21, ..Record::default() }, Record { timestamp: -1, ..Record::default() }];
    let ts = g.timestamp(&recs).unwrap();
    assert_eq!(ts[0], Ok(42));
    assert_eq!(ts[1].as_ref().unwrap_err().code, code::BAD_INPUT);

    let m = g.manifest().unwrap();
    assert_eq!(m.kinds, ["process", "key", "timestamp"]);
    assert_eq!((m.name, m.version.as_deref(), m.sdk.as_deref()), (None, Some("2"), Some("rust/0.1.0")));
}

#[test]
fn input_headers_pass_through_unchanged() {
    let mut g = upper_guest::eddy_guest();
    // upper_guest returns a record with a null value as it is: its headers,
    // one with a str value and one with a nil value, are copied as they are
    // (the host decodes str and bin alike).
    let input = hex("91 94 c0 c0 05 92 92 a161 a178 92 a162 c0");
    let out = g.call_raw("eddy_process", &input).unwrap();
    assert_eq!(out, hex("91 92 00 91 94 c0 c0 c0 92 92 a161 a178 92 a162 c0"));
    let res = g.process_raw(&input).unwrap();
    let h = &res[0].as_ref().unwrap()[0].headers;
    assert_eq!(h, &[("a".to_owned(), Some(b"x".to_vec())), ("b".to_owned(), None)]);
}

#[test]
fn to_output_appends_the_header_last() {
    let h = [
        Header { name: "a", value: Some(b"1") },
        Header { name: crate::HEADER_OUTPUT, value: Some(b"old") },
        Header { name: "b", value: None },
    ];
    let r = Record { headers: Headers::new(&h), ..Record::new(Some(b"k"), Some(b"v")) };
    let o = r.to_output("objects");
    let want = [
        Header { name: "a", value: Some(b"1") },
        Header { name: "b", value: None },
        Header { name: "eddy.output", value: Some(b"objects") },
    ];
    assert_eq!(o.headers.iter().collect::<Vec<_>>(), want);
    assert_eq!((o.headers.len(), o.headers.iter().len()), (3, 3));
    assert_eq!(o.headers, Headers::new(&want));
    assert_eq!((o.key, o.value, o.timestamp), (r.key, r.value, r.timestamp));
    // The input record is a Copy and keeps its headers.
    assert_eq!(r.headers.iter().collect::<Vec<_>>(), h);
    // Naming another output replaces the name.
    let o = o.to_output("numbers");
    assert_eq!(o.headers.get("eddy.output"), Some(Some(&b"numbers"[..])));
    assert_eq!(o.headers.iter().filter(|h| h.name == "eddy.output").count(), 1);
    // Without headers, the output header is the only one.
    let o = Record::new(None, None).to_output("");
    assert!(!o.headers.is_empty());
    assert_eq!(o.headers.iter().collect::<Vec<_>>(), [Header { name: "eddy.output", value: Some(b"") }]);
}

mod route_guest {
    use crate::{Emitter, Record, Result};

    /// Sends each record to "a", then to "b" (named twice), then to no
    /// output: the input record is not changed by to_output.
    pub fn fan(r: Record<'_>, out: &mut Emitter<'_>) -> Result<()> {
        out.emit(r.to_output("a"));
        out.emit(r.to_output("x").to_output("b"));
        out.emit(r);
        Ok(())
    }

    crate::export! { flat_map: fan }
}

#[test]
fn to_output_through_the_envelopes() {
    let mut g = route_guest::eddy_guest();
    // Input headers: h = "x" (a str), eddy.output = "old", n = nil.
    let input = hex("91 94 c0 c0 05 93 92 a168 a178 92 ab6564 64792e6f7574707574 a36f6c64 92 a16e c0");
    let out = g.call_raw("eddy_process", &input).unwrap();
    let rec = |name: &str| {
        let mut b = hex("94 c0 c0 c0 93 92 a168 c40178 92 a16e c0 92 ab6564 64792e6f7574707574");
        msgpack::write_bin(&mut b, Some(name.as_bytes()));
        b
    };
    let mut want = hex("91 92 00 93");
    want.extend(rec("a"));
    want.extend(rec("b"));
    // The record sent to no output keeps its headers as they came.
    want.extend(hex("94 c0 c0 c0 93 92 a168 a178 92 ab6564 64792e6f7574707574 a36f6c64 92 a16e c0"));
    assert_eq!(out, want);
}

mod agg_guest {
    use crate::{Aggregate, Error, Record, Result};

    /// Appends the values; "bad" fails, an Init of a guest built with
    /// `fail_init` fails.
    pub struct Concat {
        pub fail_init: bool,
    }

    impl Aggregate for Concat {
        fn init(&mut self, acc: &mut Vec<u8>) -> Result<()> {
            if self.fail_init {
                return Err(Error::rejected("no init"));
            }
            acc.push(b'>');
            Ok(())
        }

        fn add(&mut self, acc: &mut Vec<u8>, r: Record<'_>) -> Result<()> {
            let v = r.value.unwrap_or_default();
            acc.extend_from_slice(v); // changed before failing: must not leak
            if v == b"bad" {
                return Err(Error::bad_input("bad value"));
            }
            Ok(())
        }
    }

    crate::export! { aggregate: Concat { fail_init: false } }

    pub mod failing {
        crate::export! { aggregate: super::Concat { fail_init: true } }
    }
}

#[test]
fn aggregate_folds_and_keeps_accumulators_of_failed_records() {
    let mut g = agg_guest::eddy_guest();
    assert_eq!(g.agg_init().unwrap(), Ok(b">".to_vec()));
    let recs = [Record::new(None, Some(b"a")), Record::new(None, Some(b"bad")), Record::new(None, Some(b"c"))];
    let added = g
        .agg_add(&[
            Group { key: Some(b"k"), acc: None, records: &recs },
            Group { key: None, acc: Some(b"x"), records: &recs[..1] },
            Group { key: None, acc: Some(b""), records: &[] },
        ])
        .unwrap();
    assert_eq!(added[0].acc, b">ac");
    assert_eq!(added[0].errors, [(1, Failure { code: 2, reason: "bad value".into() })]);
    assert_eq!(added[1].acc, b"xa");
    assert!(added[1].errors.is_empty());
    assert_eq!(added[2].acc, b"");
    // No Merge: UNSUPPORTED; no Result: the accumulator itself.
    assert_eq!(g.agg_merge(&[(None, b"a", b"b")]).unwrap()[0].as_ref().unwrap_err().code, code::UNSUPPORTED);
    assert_eq!(g.agg_result(&[(None, b"acc")]).unwrap()[0], Ok(Some(b"acc".to_vec())));
    // A malformed group fails the whole call.
    let err = g.call_raw("eddy_agg_add", &hex("91 92 c0 c0")).unwrap_err();
    assert_eq!(err.code, code::BAD_ENVELOPE);
    let m = g.manifest().unwrap();
    assert_eq!(m.kinds, ["aggregate"]);
    drop(g);

    let mut g = agg_guest::failing::eddy_guest();
    let added = g.agg_add(&[Group { key: None, acc: None, records: &recs[..2] }]).unwrap();
    assert_eq!(added[0].acc, b"");
    assert_eq!(added[0].errors.len(), 2);
    assert_eq!(added[0].errors[1].1, Failure { code: 1, reason: "initial accumulator: no init".into() });
}

mod join_guest {
    use crate::Result;

    pub fn join<'a>(_k: Option<&'a [u8]>, l: Option<&'a [u8]>, r: Option<&'a [u8]>) -> Result<Option<&'a [u8]>> {
        Ok(l.or(r))
    }

    crate::export! { join: join }
}

#[test]
fn join_items() {
    let mut g = join_guest::eddy_guest();
    let res = g.join(&[(None, Some(b"l"), None), (None, None, Some(b"r")), (None, None, None)]).unwrap();
    assert_eq!(res, [Ok(Some(b"l".to_vec())), Ok(Some(b"r".to_vec())), Ok(None)]);
    // An item with the wrong width fails every item.
    let out = g.call_raw("eddy_join", &hex("92 93 c0 c0 c0 92 c0 c0")).unwrap();
    let mut r = Reader::new(&out);
    assert_eq!(r.array_len(), Ok(2));
    assert_eq!((r.array_len(), r.int()), (Ok(2), Ok(5)));
}

#[test]
fn state_grow_and_retry() {
    let mut g = upper_guest::eddy_guest();
    assert_eq!(state::put(b"k", b"v"), Err(Error::NO_STATE));
    g.set_state_mode(StateMode::Memory);
    let big = vec![7u8; 1000];
    state::put(b"k", &big).unwrap();
    let mut buf = Vec::new();
    assert_eq!(state::get_into(b"k", &mut buf), Ok(true));
    assert_eq!(buf, big);
    assert_eq!(state::get(b"absent"), Ok(None));
    state::delete(b"k").unwrap();
    assert_eq!(state::get_into(b"k", &mut buf), Ok(false));
    assert!(buf.is_empty());
    g.set_state_mode(StateMode::Failing);
    assert_eq!(state::get(b"k").unwrap_err().code(), code::STATE);
}

#[test]
fn log_and_count() {
    let g = upper_guest::eddy_guest();
    crate::log(crate::Level::Warn, "careful");
    crate::log!(crate::Level::Debug, "{} records", 3);
    crate::count("n", 2);
    crate::count("n", 3);
    assert_eq!(g.counter("n"), 5);
    assert_eq!(g.logs(), [(crate::Level::Warn, "careful".to_owned()), (crate::Level::Debug, "3 records".to_owned())]);
}

#[test]
fn errors() {
    assert_eq!(Error::with_code(64, "x").code(), 64);
    assert_eq!(Error::with_code(255, "x").code(), 255);
    assert_eq!(Error::with_code(63, "x").code(), code::REJECTED);
    assert_eq!(Error::from("r").code(), code::REJECTED);
    assert_eq!(Error::bad_input(String::from("b")).to_string(), "b");
    let _: Result<()> = Err("static reasons convert".into());
}

#[test]
fn emitter_counts() {
    let mut out = Vec::new();
    let mut e = Emitter::new(&mut out, 5);
    assert!(e.is_empty());
    e.emit(Record { timestamp: 5, ..Record::default() });
    e.emit(Record { timestamp: 6, ..Record::default() });
    assert_eq!(e.len(), 2);
    assert_eq!(out, hex("94 c0 c0 c0 90 94 c0 c0 06 90"));
}

#[test]
fn export_names() {
    for e in [Export::Process, Export::AggInit, Export::Timestamp, Export::Timer, Export::Manifest] {
        assert_eq!(Export::from_name(e.name()), Some(e));
    }
    let _ = CallError { code: 5, message: "x".into() }.to_string();
}

// --- Timers ---

mod timer_guest {
    use crate::{Emitter, Error, Header, Headers, Record, Result, TimeDomain, Timer};

    /// Sets an event-time timer one second after each record, under the
    /// record's key; passes nothing on.
    pub fn touch(r: Record<'_>) -> Result<bool> {
        crate::set_timer(r.key.unwrap_or_default(), TimeDomain::EventTime, r.timestamp + 1000)?;
        Ok(false)
    }

    /// Key "none" emits nothing, "two" two records (one with timestamp 0,
    /// which gets the timer's time, one at 7), "err" fails after
    /// emitting, "many" 20 records, "again" sets a processing-time timer
    /// at the current processing time.
    pub fn fire(t: Timer<'_>, out: &mut Emitter<'_>) -> Result<()> {
        static H: [Header<'static>; 1] = [Header { name: "d", value: Some(b"x") }];
        match t.key {
            b"none" => {}
            b"two" => {
                out.emit(Record::new(Some(t.key), Some(b"a")));
                out.emit(Record { timestamp: 7, headers: Headers::new(&H), ..Record::new(None, Some(b"b")) });
            }
            b"err" => {
                out.emit(Record::new(Some(t.key), None));
                return Err(Error::with_code(70, "no"));
            }
            b"many" => {
                for _ in 0..20 {
                    out.emit(Record { timestamp: t.time, ..Record::new(None, None) });
                }
            }
            b"again" => {
                crate::set_timer(t.key, TimeDomain::ProcessingTime, crate::current_time(TimeDomain::ProcessingTime))?
            }
            _ => out.emit(Record::new(Some(t.key), Some(if t.domain == TimeDomain::EventTime { b"e" } else { b"p" }))),
        }
        Ok(())
    }

    crate::export! { name: "timers", filter: touch, timer: fire }
}

#[test]
fn timers_fire_into_records() {
    let mut g = timer_guest::eddy_guest();
    let m = g.manifest().unwrap();
    assert_eq!(m.kinds, ["process", "timer"]);
    let ev = |key: &'static [u8], time| Timer { key, time, domain: TimeDomain::EventTime };
    let res = g
        .timer(&[
            ev(b"none", 5),
            ev(b"two", 5),
            ev(b"err", 5),
            ev(b"many", 5),
            Timer { key: b"k", time: -3, domain: TimeDomain::ProcessingTime },
        ])
        .unwrap();
    assert_eq!(res[0], Ok(vec![]));
    let two = res[1].as_ref().unwrap();
    assert_eq!(two.len(), 2);
    assert_eq!((two[0].key.as_deref(), two[0].timestamp), (Some(&b"two"[..]), 5));
    assert_eq!((two[1].key.as_deref(), two[1].timestamp, two[1].headers.len()), (None, 7, 1));
    assert_eq!(res[2], Err(Failure { code: 70, reason: "no".into() }));
    assert_eq!(res[3].as_ref().unwrap().len(), 20);
    assert!(res[3].as_ref().unwrap().iter().all(|r| r.timestamp == 5));
    let p = &res[4].as_ref().unwrap()[0];
    assert_eq!((p.value.as_deref(), p.timestamp), (Some(&b"p"[..]), -3));

    // The bytes: a timestamp 0 or equal to the timer's is written as nil.
    let out = g.call_raw("eddy_timer", &hex("91 93 c403 74776f 05 00")).unwrap();
    assert_eq!(out, hex("91 92 00 92 94 c403 74776f c40161 c0 90 94 c0 c40162 07 91 92 a164 c40178"));
    // A nil or str key is accepted (nil reads as empty); any int format.
    let out = g.call_raw("eddy_timer", &hex("92 93 c0 d3ffffffffffffffff 01 93 a0 cf0000000000000009 00")).unwrap();
    assert_eq!(out, hex("92 92 00 91 94 c400 c40170 c0 90 92 00 91 94 c400 c40165 c0 90"));
}

#[test]
fn timer_envelopes_that_do_not_decode() {
    let mut g = timer_guest::eddy_guest();
    // The count cannot be read: the call fails.
    assert_eq!(g.call_raw("eddy_timer", &hex("c0")).unwrap_err().code, code::BAD_ENVELOPE);
    // An unknown domain, a timer of 2 elements, a float time, trailing
    // bytes: every item fails with BAD_ENVELOPE and no handler runs.
    for (env, what) in [
        ("92 93 c40174 01 00 93 c40174 01 02", "timer 1: a timer's domain is not 0 (event) or 1 (processing)"),
        ("91 92 c40174 01", "timer 0: a timer is not an array of 3 elements"),
        ("91 93 c40174 cb 00", "timer 0: msgpack"),
        ("91 93 c40174 01 00 00", "trailing bytes"),
    ] {
        let out = g.call_raw("eddy_timer", &hex(env)).unwrap();
        let mut r = Reader::new(&out);
        let n = r.array_len().unwrap();
        assert_eq!(n, hex(env)[0] as usize & 0x0f);
        for _ in 0..n {
            assert_eq!((r.array_len(), r.int()), (Ok(2), Ok(code::BAD_ENVELOPE as i64)));
            let reason = r.str().unwrap();
            assert!(reason.starts_with("malformed input envelope: ") && reason.contains(what), "{}", reason);
        }
    }
}

#[test]
fn timer_host_calls() {
    let mut g = timer_guest::eddy_guest();
    // No store: the step has no timers.
    let res = g.process(&[Record::new(Some(b"a"), None)]).unwrap();
    assert_eq!(res[0].as_ref().unwrap_err().code, code::REJECTED);
    assert_eq!(crate::set_timer(b"a", TimeDomain::EventTime, 1), Err(Error::NO_STATE));
    assert_eq!(crate::delete_timer(b"a", TimeDomain::EventTime, 1), Err(Error::NO_STATE));
    g.set_current_time(TimeDomain::EventTime, 5);
    assert_eq!(crate::current_time(TimeDomain::EventTime), crate::NO_TIME);

    g.set_state_mode(StateMode::Memory);
    assert_eq!(crate::current_time(TimeDomain::EventTime), 5);
    assert_eq!(crate::current_time(TimeDomain::ProcessingTime), i64::MIN);
    let recs = [Record { timestamp: 10, ..Record::new(Some(b"b"), None) }, Record::new(None, None)];
    assert_eq!(g.process(&recs).unwrap(), [Ok(vec![]), Ok(vec![])]);
    crate::set_timer(b"b", TimeDomain::EventTime, 1010).unwrap(); // already set: one timer
    crate::set_timer(b"c", TimeDomain::ProcessingTime, 1010).unwrap();
    let pt = |time, domain, key: &[u8]| PendingTimer { time, domain, key: key.to_vec() };
    let want = [
        pt(1000, TimeDomain::EventTime, b""),
        pt(1010, TimeDomain::EventTime, b"b"),
        pt(1010, TimeDomain::ProcessingTime, b"c"),
    ];
    assert_eq!(g.timers(), want);
    crate::delete_timer(b"c", TimeDomain::ProcessingTime, 1010).unwrap();
    crate::delete_timer(b"c", TimeDomain::ProcessingTime, 1010).unwrap(); // absent: not an error
    crate::delete_timer(b"b", TimeDomain::ProcessingTime, 1010).unwrap(); // another domain
    assert_eq!(g.timers(), want[..2]);
    // A handler sets timers too.
    g.set_current_time(TimeDomain::ProcessingTime, 77);
    let again = g.timers()[0].clone();
    let again = PendingTimer { key: b"again".to_vec(), ..again };
    assert_eq!(g.timer(&[again.as_timer()]).unwrap(), [Ok(vec![])]);
    assert!(g.timers().contains(&pt(77, TimeDomain::ProcessingTime, b"again")));
    g.clear_timers();
    assert!(g.timers().is_empty());

    g.set_state_mode(StateMode::Failing);
    assert_eq!(crate::set_timer(b"a", TimeDomain::EventTime, 1), Err(Error::TIMER_REFUSED));
    assert_eq!(Error::TIMER_REFUSED.code(), code::STATE);
    assert_eq!(crate::delete_timer(b"a", TimeDomain::EventTime, 1), Err(Error::STATE_FAILED));
    let res = g.process(&recs).unwrap();
    assert_eq!(res[0].as_ref().unwrap_err().code, code::STATE);
}

// --- Configuration ---

mod config_guest {
    use crate::{Record, Result};

    /// Keeps the records whose value is the config entry "keep", read for
    /// every record.
    pub fn keep(r: Record<'_>) -> Result<bool> {
        Ok(crate::config("keep").as_deref() == r.value)
    }

    crate::export! { name: "configured", filter: keep }
}

#[test]
fn config_entries() {
    let mut g = config_guest::eddy_guest();
    // No configuration: every entry is absent.
    assert_eq!(crate::config("prefix"), None);
    let mut buf = b"old".to_vec();
    assert!(!crate::config_into("prefix", &mut buf));
    assert!(buf.is_empty());

    let long = vec![b'x'; 1000]; // over the first buffer: asks again
    let exact = vec![b'y'; 256]; // the first buffer's size
    g.set_config(&[("prefix", b"p-"), ("empty", b""), ("long", &long), ("exact", &exact), ("naïve", b"\xff\x00")]);
    assert_eq!(crate::config("prefix"), Some(b"p-".to_vec()));
    assert_eq!(crate::config("empty"), Some(vec![])); // present, empty
    assert_eq!(crate::config("long"), Some(long.clone()));
    assert_eq!(crate::config("naïve"), Some(b"\xff\x00".to_vec())); // values are bytes
    assert_eq!(crate::config("missing"), None);
    assert_eq!(crate::config("Prefix"), None);
    assert_eq!(crate::config(""), None);
    let mut buf = Vec::new();
    assert!(crate::config_into("exact", &mut buf));
    assert_eq!(buf, exact);
    assert!(crate::config_into("long", &mut buf));
    assert_eq!(buf, long);
    let cap = buf.capacity();
    assert!(crate::config_into("prefix", &mut buf));
    assert_eq!((buf.as_slice(), buf.capacity()), (&b"p-"[..], cap)); // the buffer is reused
    assert!(crate::config_into("empty", &mut buf));
    assert!(buf.is_empty());

    // Through the envelopes: any handler reads entries, at any time.
    g.set_config(&[("keep", b"b")]);
    assert_eq!(crate::config("prefix"), None); // replaced
    let recs = [Record::new(None, Some(b"a")), Record::new(None, Some(b"b")), Record::new(None, None)];
    let out = g.process(&recs).unwrap();
    assert_eq!(out.iter().map(|o| o.as_ref().unwrap().len()).collect::<Vec<_>>(), [0, 1, 0]);
    g.set_config(&[]);
    let out = g.process(&recs).unwrap();
    assert_eq!(out.iter().map(|o| o.as_ref().unwrap().len()).collect::<Vec<_>>(), [0, 0, 1]);

    // A new harness starts without configuration.
    g.set_config(&[("keep", b"a")]);
    drop(g);
    let _g = config_guest::eddy_guest();
    assert_eq!(crate::config("keep"), None);
}

// --- Allocation budget ---

mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        /// Allocations made by this thread.
        pub static ALLOCS: Cell<usize> = const { Cell::new(0) };
    }

    pub struct Counting;

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
            System.alloc(l)
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            System.dealloc(p, l)
        }
        unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
            let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
            System.realloc(p, l, n)
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;

    pub fn count() -> usize {
        ALLOCS.with(Cell::get)
    }
}

/// Once warm, a batch allocates nothing in the SDK (the handlers here do not
/// allocate either): decoding, Map, FlatMap with a long output, agg_add.
#[test]
fn warm_calls_do_not_allocate() {
    let check = |name: &str, call: crate::rt::CallFn, e: Export, input: &[u8]| {
        for _ in 0..2 {
            crate::rt::invoke(e, input, call).unwrap();
        }
        let before = counting::count();
        crate::rt::invoke(e, input, call).unwrap();
        assert_eq!(counting::count() - before, 0, "{} allocated", name);
    };
    let before = counting::count();
    let v: Vec<u8> = Vec::with_capacity(10);
    assert_eq!(counting::count() - before, 1, "the counter counts");
    drop(v);
    let h = [Header { name: "h", value: Some(b"v") }];
    let recs: Vec<Record> = (0..100)
        .map(|i| Record { key: Some(b"key"), value: Some(b"some value"), timestamp: i, headers: Headers::new(&h) })
        .collect();
    let mut input = Vec::new();
    msgpack::write_array_header(&mut input, recs.len());
    for r in &recs {
        input.push(0x94);
        msgpack::write_bin(&mut input, r.key);
        msgpack::write_bin(&mut input, r.value);
        msgpack::write_int(&mut input, r.timestamp);
        r.headers.write(&mut input);
    }
    let g = upper_guest::eddy_guest();
    // upper_guest::Upper reuses its buffer; explode emits 10 records each.
    check("map", upper_guest::__eddy_call, Export::Process, &input);
    check("flat_map", kinds_guest::__eddy_call, Export::Process, &input);
    check("key", kinds_guest::__eddy_call, Export::Key, &input);
    let mut groups = Vec::new();
    msgpack::write_array_header(&mut groups, 1);
    groups.extend_from_slice(&[0x93, 0xc0, 0xc4, 0x01, b'x']);
    groups.extend_from_slice(&input);
    check("agg_add", agg_guest::__eddy_call, Export::AggAdd, &groups);
    let mut timers = Vec::new();
    msgpack::write_array_header(&mut timers, 100);
    for i in 0..100 {
        timers.push(0x93);
        msgpack::write_bin(&mut timers, Some(if i % 2 == 0 { b"two" } else { b"many" }));
        msgpack::write_int(&mut timers, 1_700_000_000_000 + i);
        msgpack::write_int(&mut timers, i % 2);
    }
    check("timer", timer_guest::__eddy_call, Export::Timer, &timers);
    drop(g);
}
