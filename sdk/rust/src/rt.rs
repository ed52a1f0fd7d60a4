//! The SDK's side of ABI.md sections 2 and 5: input envelope in, output
//! envelope out. Used by the code that [`export!`](crate::export) generates;
//! not a stable API.
//!
//! # Why it looks the way it does
//!
//! The per-record path allocates nothing once warm. Records are decoded in a
//! first pass into a reused vector of spans (offsets into the input, so no
//! lifetime is stretched), which also validates the whole envelope before
//! any user code runs (ABI.md 6.4). Handlers then get [`Record`] views into
//! the input, and the answers are appended to one output buffer that lives
//! until the next call (ABI.md 6.5 lets the guest reuse it). Handlers are
//! called through generics, not trait objects, so a small handler is inlined
//! into the loop.

use crate::error::{code, Error};
use crate::msgpack::{self, DecodeError, Reader};
use crate::record::{write_record, Emitter, Headers, Record};
use crate::timer::{TimeDomain, Timer};
use crate::{host, Aggregate, Filter, FlatMap, Join, KeyBy, Map, OnTimer, Timestamp};
use std::any::Any;
use std::borrow::Cow;
use std::fmt;

/// The exports of ABI.md section 2 that answer with an envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// `eddy_manifest`
    Manifest,
    /// `eddy_process`
    Process,
    /// `eddy_agg_init`
    AggInit,
    /// `eddy_agg_add`
    AggAdd,
    /// `eddy_agg_merge`
    AggMerge,
    /// `eddy_agg_result`
    AggResult,
    /// `eddy_join`
    Join,
    /// `eddy_key`
    Key,
    /// `eddy_timestamp`
    Timestamp,
    /// `eddy_timer`
    Timer,
}

impl Export {
    /// The export's name.
    pub fn name(self) -> &'static str {
        match self {
            Export::Manifest => "eddy_manifest",
            Export::Process => "eddy_process",
            Export::AggInit => "eddy_agg_init",
            Export::AggAdd => "eddy_agg_add",
            Export::AggMerge => "eddy_agg_merge",
            Export::AggResult => "eddy_agg_result",
            Export::Join => "eddy_join",
            Export::Key => "eddy_key",
            Export::Timestamp => "eddy_timestamp",
            Export::Timer => "eddy_timer",
        }
    }

    /// The export called `name`, if any.
    pub fn from_name(name: &str) -> Option<Export> {
        const ALL: [Export; 10] = [
            Export::Manifest,
            Export::Process,
            Export::AggInit,
            Export::AggAdd,
            Export::AggMerge,
            Export::AggResult,
            Export::Join,
            Export::Key,
            Export::Timestamp,
            Export::Timer,
        ];
        ALL.iter().copied().find(|e| e.name() == name)
    }

    /// Reports whether the export belongs to the kind `aggregate`.
    pub fn is_aggregate(self) -> bool {
        matches!(self, Export::AggInit | Export::AggAdd | Export::AggMerge | Export::AggResult)
    }
}

/// A failure of a whole call: the export reports the message through the
/// `error` host function and returns `-code`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallError {
    /// The error code (ABI.md section 7).
    pub code: u8,
    /// The reason.
    pub message: Cow<'static, str>,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "code {}: {}", self.code, self.message)
    }
}

impl std::error::Error for CallError {}

/// The function that `export!` generates: it runs an export on an input
/// envelope and appends the output envelope.
pub type CallFn = fn(Export, &[u8], &mut Vec<u8>) -> Result<(), CallError>;

/// Holds one handler, made on first use. The type is erased so that the
/// macro can declare the static without naming the handler's type; the
/// downcast costs one comparison per call, not per record.
pub struct Slot(Option<Box<dyn Any>>);

impl Slot {
    /// An empty slot.
    pub const fn new() -> Slot {
        Slot(None)
    }

    /// The handler, made by `make` if the slot is empty.
    #[inline]
    pub fn get<H: 'static>(&mut self, make: impl FnOnce() -> H) -> &mut H {
        if self.0.is_none() {
            self.0 = Some(Box::new(make()));
        }
        match self.0.as_mut().and_then(|b| b.downcast_mut::<H>()) {
            Some(h) => h,
            None => unreachable!("eddy: a handler slot holds another type"),
        }
    }
}

// --- Manifest (ABI.md section 4) ---

/// Kind bit: process.
pub const KIND_PROCESS: u8 = 1;
/// Kind bit: aggregate.
pub const KIND_AGGREGATE: u8 = 2;
/// Kind bit: join.
pub const KIND_JOIN: u8 = 4;
/// Kind bit: key.
pub const KIND_KEY: u8 = 8;
/// Kind bit: timestamp.
pub const KIND_TIMESTAMP: u8 = 16;
/// Kind bit: timer.
pub const KIND_TIMER: u8 = 32;

const KIND_NAMES: [(u8, &str); 6] = [
    (KIND_PROCESS, "process"),
    (KIND_AGGREGATE, "aggregate"),
    (KIND_JOIN, "join"),
    (KIND_KEY, "key"),
    (KIND_TIMESTAMP, "timestamp"),
    (KIND_TIMER, "timer"),
];

/// What the manifest says.
#[derive(Default)]
pub struct Manifest {
    /// The function's name.
    pub name: Option<&'static str>,
    /// The function's version.
    pub version: Option<&'static str>,
    kinds: u8,
}

impl Manifest {
    /// An empty manifest.
    pub fn new() -> Manifest {
        Manifest::default()
    }

    /// Adds a kind (a `KIND_*` bit).
    pub fn kind(&mut self, k: u8) {
        self.kinds |= k;
    }

    /// Appends the manifest map.
    pub fn write(&self, b: &mut Vec<u8>) {
        let name = self.name.filter(|s| !s.is_empty());
        let version = self.version.filter(|s| !s.is_empty());
        msgpack::write_map_header(b, 3 + name.is_some() as usize + version.is_some() as usize);
        msgpack::write_str(b, "abi");
        msgpack::write_int(b, 1);
        msgpack::write_str(b, "kinds");
        msgpack::write_array_header(b, self.kinds.count_ones() as usize);
        for (bit, kind) in KIND_NAMES {
            if self.kinds & bit != 0 {
                msgpack::write_str(b, kind);
            }
        }
        if let Some(name) = name {
            msgpack::write_str(b, "name");
            msgpack::write_str(b, name);
        }
        if let Some(version) = version {
            msgpack::write_str(b, "version");
            msgpack::write_str(b, version);
        }
        msgpack::write_str(b, "sdk");
        msgpack::write_str(b, crate::SDK_VERSION);
    }
}

// --- Buffers reused across calls ---

/// A byte range of the input envelope; `off == NIL` is a nil.
#[derive(Clone, Copy, Default)]
struct Span {
    off: u32,
    len: u32,
}

const NIL: u32 = u32::MAX;

impl Span {
    #[inline]
    fn of(input: &[u8], v: Option<&[u8]>) -> Span {
        match v {
            None => Span { off: NIL, len: 0 },
            Some(s) => Span { off: (s.as_ptr() as usize - input.as_ptr() as usize) as u32, len: s.len() as u32 },
        }
    }

    #[inline]
    fn get(self, input: &[u8]) -> Option<&[u8]> {
        if self.off == NIL {
            None
        } else {
            input.get(self.off as usize..self.off as usize + self.len as usize)
        }
    }
}

/// A decoded Record: spans of the input.
#[derive(Clone, Copy, Default)]
struct RawRecord {
    key: Span,
    value: Span,
    timestamp: i64,
    headers: Span,
    header_count: u32,
}

impl RawRecord {
    #[inline]
    fn view<'a>(&self, input: &'a [u8]) -> Record<'a> {
        Record {
            key: self.key.get(input),
            value: self.value.get(input),
            timestamp: self.timestamp,
            headers: if self.header_count == 0 {
                Headers::NONE
            } else {
                Headers::encoded(self.headers.get(input).unwrap_or_default(), self.header_count)
            },
        }
    }
}

/// A decoded [key, a, b] or [key, acc] item of eddy_join, eddy_agg_merge or
/// eddy_agg_result.
#[derive(Clone, Copy, Default)]
struct RawItem {
    key: Span,
    a: Span,
    b: Span,
}

/// A decoded Timer of eddy_timer. A nil key (the ABI says bytes, never
/// nil) is read as an empty one.
#[derive(Clone, Copy)]
struct RawTimer {
    key: Span,
    time: i64,
    domain: TimeDomain,
}

impl RawTimer {
    #[inline]
    fn view<'a>(&self, input: &'a [u8]) -> Timer<'a> {
        Timer { key: self.key.get(input).unwrap_or_default(), time: self.time, domain: self.domain }
    }
}

/// A decoded Group of eddy_agg_add (its key is not kept: Add does not take
/// it); its records are `recs[lo..hi]`.
#[derive(Clone, Copy, Default)]
struct RawGroup {
    acc: Span,
    lo: usize,
    hi: usize,
}

struct Scratch {
    recs: Vec<RawRecord>,
    items: Vec<RawItem>,
    groups: Vec<RawGroup>,
    timers: Vec<RawTimer>,
    /// The current accumulator and the scratch copy handed to Add.
    acc: Vec<u8>,
    work: Vec<u8>,
    /// Records of the current group that were not folded.
    rec_errs: Vec<(usize, Error)>,
}

static mut SCRATCH: Scratch = Scratch {
    recs: Vec::new(),
    items: Vec::new(),
    groups: Vec::new(),
    timers: Vec::new(),
    acc: Vec::new(),
    work: Vec::new(),
    rec_errs: Vec::new(),
};

/// The SDK's scratch space.
///
/// Safety: an instance is single-threaded and never re-entered (ABI.md 6),
/// so one call at a time uses it; natively, [`crate::testing::Guest`]
/// serialises calls.
#[inline]
fn scratch() -> &'static mut Scratch {
    unsafe { &mut *std::ptr::addr_of_mut!(SCRATCH) }
}

// --- The Wasm exports ---

/// The eddy_alloc region: one buffer that grows and is reused.
static mut INBUF: Vec<u8> = Vec::new();
/// The output envelope; it lives until the next call.
static mut OUT: Vec<u8> = Vec::new();
static mut STARTED: bool = false;

/// The smallest eddy_alloc region, so that small batches do not grow the
/// buffer in many steps.
const MIN_ALLOC: usize = 64 << 10;

/// `eddy_alloc`: a region of at least `size` bytes that stays untouched
/// until the next call of `eddy_alloc`, or 0 if it cannot be had.
pub fn alloc(size: u32) -> u32 {
    let size = size as usize;
    if size > i32::MAX as usize {
        return 0;
    }
    // Safety: single-threaded, and never called during another export.
    let inbuf = unsafe { &mut *std::ptr::addr_of_mut!(INBUF) };
    if inbuf.capacity() < size || inbuf.capacity() == 0 {
        let want = size.max(2 * inbuf.capacity()).max(MIN_ALLOC).min(i32::MAX as usize);
        let mut v = Vec::new();
        if v.try_reserve_exact(want).is_err() && v.try_reserve_exact(size).is_err() {
            return 0;
        }
        v.resize(v.capacity(), 0);
        *inbuf = v;
    }
    inbuf.as_ptr() as usize as u32
}

/// Runs once, on the first call of any export: installs a panic hook that
/// logs the message before the instance traps.
fn start() {
    // Safety: single-threaded.
    unsafe {
        if STARTED {
            return;
        }
        STARTED = true;
    }
    std::panic::set_hook(Box::new(|info| {
        host::log(crate::Level::Error as i32, &format!("eddy: {}", info));
    }));
}

/// The body of every export: finds the input in the eddy_alloc region, runs
/// `call` and packs the answer as `(ptr << 32) | len`, or reports the error
/// and returns `-code`.
pub fn export(e: Export, ptr: u32, len: u32, call: CallFn) -> i64 {
    start();
    let input: &[u8] = if e == Export::Manifest || e == Export::AggInit || len == 0 {
        &[]
    } else {
        // Safety: the host wrote the envelope into the region and does not
        // touch it during the call; nothing else writes it.
        let inbuf = unsafe { &*std::ptr::addr_of!(INBUF) };
        let base = inbuf.as_ptr() as usize;
        let (ptr, len) = (ptr as usize, len as usize);
        if ptr < base || ptr - base > inbuf.len() || len > inbuf.len() - (ptr - base) {
            let msg = format!("{}: input is not inside the eddy_alloc region", e.name());
            host::error(code::BAD_ENVELOPE as i32, &msg);
            return -(code::BAD_ENVELOPE as i64);
        }
        &inbuf[ptr - base..ptr - base + len]
    };
    match invoke(e, input, call) {
        Ok(out) => ((out.as_ptr() as usize as u32 as i64) << 32) | out.len() as u32 as i64,
        Err(err) => {
            host::error(err.code as i32, &format!("{}: {}", e.name(), err.message));
            -(err.code as i64)
        }
    }
}

/// Runs `call` on `input` into the output buffer, which it returns (valid
/// until the next call).
pub(crate) fn invoke(e: Export, input: &[u8], call: CallFn) -> Result<&'static [u8], CallError> {
    // Safety: single-threaded; the previous answer has been copied by now.
    let out = unsafe { &mut *std::ptr::addr_of_mut!(OUT) };
    out.clear();
    call(e, input, out)?;
    Ok(&out[..])
}

// --- Decoding input envelopes ---

/// A malformed input envelope.
enum Malformed {
    Msgpack(DecodeError),
    Shape(&'static str),
}

impl From<DecodeError> for Malformed {
    fn from(e: DecodeError) -> Self {
        Malformed::Msgpack(e)
    }
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Malformed::Msgpack(e) => e.fmt(f),
            Malformed::Shape(s) => f.write_str(s),
        }
    }
}

fn bad_envelope(what: fmt::Arguments<'_>) -> CallError {
    CallError { code: code::BAD_ENVELOPE, message: Cow::Owned(format!("malformed input envelope: {}", what)) }
}

/// Reads the item count of an envelope; a count that cannot be read fails
/// the whole call.
fn count(r: &mut Reader<'_>) -> Result<usize, CallError> {
    r.array_len().map_err(|e| bad_envelope(format_args!("{}", e)))
}

/// Checks that the envelope ended with its last item.
fn trailing(r: &Reader<'_>) -> Result<(), Malformed> {
    if r.remaining() != 0 {
        return Err(Malformed::Shape("trailing bytes after the last item"));
    }
    Ok(())
}

/// Decodes one Record (ABI.md 5.2) into spans of `input`.
#[inline]
fn read_record(r: &mut Reader<'_>, input: &[u8], rec: &mut RawRecord) -> Result<(), Malformed> {
    if r.array_len()? != 4 {
        return Err(Malformed::Shape("a record is not an array of 4 elements"));
    }
    rec.key = Span::of(input, r.bytes()?);
    rec.value = Span::of(input, r.bytes()?);
    rec.timestamp = if r.is_nil() {
        // Input timestamps are ints; be lenient.
        r.nil()?;
        0
    } else {
        r.int()?
    };
    rec.header_count = 0;
    if r.is_nil() {
        r.nil()?;
        return Ok(());
    }
    let n = r.array_len()?;
    let start = r.position();
    for _ in 0..n {
        if r.array_len()? != 2 {
            return Err(Malformed::Shape("a header is not an array of 2 elements"));
        }
        r.str()?;
        r.bytes()?;
    }
    rec.headers = Span { off: start as u32, len: (r.position() - start) as u32 };
    rec.header_count = n as u32;
    Ok(())
}

/// Decodes `[Record × n]` into `recs`. The outer error fails the call; the
/// inner one (with the count) fails every item with BAD_ENVELOPE.
fn read_records(input: &[u8], recs: &mut Vec<RawRecord>) -> Result<(usize, Result<(), String>), CallError> {
    let mut r = Reader::new(input);
    let n = count(&mut r)?;
    recs.clear();
    recs.reserve(n);
    for i in 0..n {
        let mut rec = RawRecord::default();
        if let Err(e) = read_record(&mut r, input, &mut rec) {
            return Ok((n, Err(format!("malformed input envelope: record {}: {}", i, e))));
        }
        recs.push(rec);
    }
    if let Err(e) = trailing(&r) {
        return Ok((n, Err(format!("malformed input envelope: {}", e))));
    }
    Ok((n, Ok(())))
}

/// Decodes `[[key, a, b] × n]` (width 3) or `[[key, acc] × n]` (width 2).
fn read_items(input: &[u8], width: usize, items: &mut Vec<RawItem>) -> Result<(usize, Result<(), String>), CallError> {
    let mut r = Reader::new(input);
    let n = count(&mut r)?;
    items.clear();
    items.resize(n, RawItem::default());
    for (i, it) in items.iter_mut().enumerate() {
        let res = (|| -> Result<(), Malformed> {
            if r.array_len()? != width {
                return Err(Malformed::Shape("an item has the wrong number of elements"));
            }
            it.key = Span::of(input, r.bytes()?);
            it.a = Span::of(input, r.bytes()?);
            it.b = if width == 3 { Span::of(input, r.bytes()?) } else { Span::default() };
            Ok(())
        })();
        if let Err(e) = res {
            return Ok((n, Err(format!("malformed input envelope: item {}: {}", i, e))));
        }
    }
    if let Err(e) = trailing(&r) {
        return Ok((n, Err(format!("malformed input envelope: {}", e))));
    }
    Ok((n, Ok(())))
}

/// Decodes `[[key, time, domain] × n]`, the Timers of eddy_timer.
fn read_timers(input: &[u8], timers: &mut Vec<RawTimer>) -> Result<(usize, Result<(), String>), CallError> {
    let mut r = Reader::new(input);
    let n = count(&mut r)?;
    timers.clear();
    timers.reserve(n);
    for i in 0..n {
        let res = (|| -> Result<RawTimer, Malformed> {
            if r.array_len()? != 3 {
                return Err(Malformed::Shape("a timer is not an array of 3 elements"));
            }
            let key = Span::of(input, r.bytes()?);
            let time = r.int()?;
            let domain = TimeDomain::from_i64(r.int()?)
                .ok_or(Malformed::Shape("a timer's domain is not 0 (event) or 1 (processing)"))?;
            Ok(RawTimer { key, time, domain })
        })();
        match res {
            Ok(t) => timers.push(t),
            Err(e) => return Ok((n, Err(format!("malformed input envelope: timer {}: {}", i, e)))),
        }
    }
    if let Err(e) = trailing(&r) {
        return Ok((n, Err(format!("malformed input envelope: {}", e))));
    }
    Ok((n, Ok(())))
}

// --- Encoding answers ---

/// Appends a failed Result: [code, reason].
#[inline]
fn write_failure(b: &mut Vec<u8>, code: u8, reason: &str) {
    b.push(0x92);
    msgpack::write_int(b, code as i64);
    msgpack::write_str(b, reason);
}

#[inline]
fn write_error(b: &mut Vec<u8>, e: &Error) {
    write_failure(b, e.code(), e.reason());
}

/// Answers `n` items with the same failure.
fn fail_all(b: &mut Vec<u8>, n: usize, code: u8, reason: &str) {
    for _ in 0..n {
        write_failure(b, code, reason);
    }
}

/// Appends a successful Result header: [0, ...
#[inline]
fn write_ok(b: &mut Vec<u8>) {
    b.extend_from_slice(&[0x92, 0x00]);
}

/// Appends `v` as bin, writing `None` as an empty bin: accumulators are never
/// nil.
#[inline]
fn write_non_nil(b: &mut Vec<u8>, v: Option<&[u8]>) {
    msgpack::write_bin(b, Some(v.unwrap_or_default()));
}

// --- The kinds ---

/// Decodes a batch of records and answers each with `step`: the shared body
/// of eddy_process, eddy_key and eddy_timestamp.
#[inline]
fn records<'i>(
    input: &'i [u8],
    out: &mut Vec<u8>,
    mut step: impl FnMut(Record<'i>, &mut Vec<u8>),
) -> Result<(), CallError> {
    let s = scratch();
    let (n, res) = read_records(input, &mut s.recs)?;
    msgpack::write_array_header(out, n);
    if let Err(msg) = res {
        fail_all(out, n, code::BAD_ENVELOPE, &msg);
        return Ok(());
    }
    for raw in s.recs.iter() {
        step(raw.view(input), out);
    }
    Ok(())
}

/// eddy_process with a [`Map`]: [Record × N] → [Result × N], body = [Record].
pub fn map<H: Map>(h: &mut H, input: &[u8], out: &mut Vec<u8>) -> Result<(), CallError> {
    records(input, out, |r, out| match h.map(r) {
        Ok(o) => {
            out.extend_from_slice(&[0x92, 0x00, 0x91]);
            write_record(out, &o, r.timestamp);
        }
        Err(e) => write_error(out, &e),
    })
}

/// eddy_process with a [`Filter`]: body = [Record] (kept) or [] (dropped).
pub fn filter<H: Filter>(h: &mut H, input: &[u8], out: &mut Vec<u8>) -> Result<(), CallError> {
    records(input, out, |r, out| match h.keep(r) {
        Ok(true) => {
            out.extend_from_slice(&[0x92, 0x00, 0x91]);
            write_record(out, &r, r.timestamp);
        }
        Ok(false) => out.extend_from_slice(&[0x92, 0x00, 0x90]),
        Err(e) => write_error(out, &e),
    })
}

/// eddy_process with a [`FlatMap`]: body = [Record × k].
pub fn flat_map<H: FlatMap>(h: &mut H, input: &[u8], out: &mut Vec<u8>) -> Result<(), CallError> {
    records(input, out, |r, out| write_emitted(out, r.timestamp, false, |em| h.flat_map(r, em)))
}

/// Appends the Result of a handler that emits records: `[0, [Record × k]]`
/// or the handler's failure, which discards what it emitted. `ts` is the
/// time of the input record, or of the timer if `timer`.
#[inline]
fn write_emitted(out: &mut Vec<u8>, ts: i64, timer: bool, run: impl FnOnce(&mut Emitter<'_>) -> crate::Result<()>) {
    let start = out.len();
    // [0, [...]]: the array header is written as a fixarray and widened
    // below if 16 or more records were emitted.
    out.extend_from_slice(&[0x92, 0x00, 0x90]);
    let body = out.len();
    let mut em = if timer { Emitter::for_timer(out, ts) } else { Emitter::new(out, ts) };
    let res = run(&mut em);
    let k = em.len();
    match res {
        Err(e) => {
            out.truncate(start);
            write_error(out, &e);
        }
        Ok(()) if k < 16 => out[body - 1] = 0x90 | k as u8,
        Ok(()) => {
            // array 16 or 32: widen the header in place, no allocation.
            let hdr: ([u8; 5], usize) = if k <= u16::MAX as usize {
                let b = (k as u16).to_be_bytes();
                ([msgpack::format::ARRAY16, b[0], b[1], 0, 0], 3)
            } else {
                let b = (k as u32).to_be_bytes();
                ([msgpack::format::ARRAY32, b[0], b[1], b[2], b[3]], 5)
            };
            out.splice(body - 1..body, hdr.0[..hdr.1].iter().copied());
        }
    }
}

/// eddy_timer with an [`OnTimer`]: [Timer × N] → [Result × N], body =
/// [Record × k], where a nil timestamp is the timer's time.
pub fn timer<H: OnTimer>(h: &mut H, input: &[u8], out: &mut Vec<u8>) -> Result<(), CallError> {
    let s = scratch();
    let (n, res) = read_timers(input, &mut s.timers)?;
    msgpack::write_array_header(out, n);
    if let Err(msg) = res {
        fail_all(out, n, code::BAD_ENVELOPE, &msg);
        return Ok(());
    }
    for raw in s.timers.iter() {
        let t = raw.view(input);
        write_emitted(out, t.time, true, |em| h.on_timer(t, em));
    }
    Ok(())
}

/// eddy_key: body = the new key, bytes?.
pub fn key<H: KeyBy>(h: &mut H, input: &[u8], out: &mut Vec<u8>) -> Result<(), CallError> {
    records(input, out, |r, out| match h.key(r) {
        Ok(k) => {
            write_ok(out);
            msgpack::write_bin(out, k);
        }
        Err(e) => write_error(out, &e),
    })
}

/// eddy_timestamp: body = the event time, int.
pub fn timestamp<H: Timestamp>(h: &mut H, input: &[u8], out: &mut Vec<u8>) -> Result<(), CallError> {
    records(input, out, |r, out| match h.timestamp(r) {
        Ok(t) => {
            write_ok(out);
            msgpack::write_int(out, t);
        }
        Err(e) => write_error(out, &e),
    })
}

/// Decodes a batch of items and answers each with `step`: the shared body
/// of eddy_join, eddy_agg_merge and eddy_agg_result.
#[inline]
fn items<'i>(
    input: &'i [u8],
    width: usize,
    out: &mut Vec<u8>,
    mut step: impl FnMut(Option<&'i [u8]>, Option<&'i [u8]>, Option<&'i [u8]>, &mut Vec<u8>),
) -> Result<(), CallError> {
    let s = scratch();
    let (n, res) = read_items(input, width, &mut s.items)?;
    msgpack::write_array_header(out, n);
    if let Err(msg) = res {
        fail_all(out, n, code::BAD_ENVELOPE, &msg);
        return Ok(());
    }
    for it in s.items.iter() {
        step(it.key.get(input), it.a.get(input), it.b.get(input), out);
    }
    Ok(())
}

/// eddy_join: [[key, left, right] × N] → [Result × N], body = bytes?.
pub fn join<H: Join>(h: &mut H, input: &[u8], out: &mut Vec<u8>) -> Result<(), CallError> {
    items(input, 3, out, |k, l, r, out| match h.join(k, l, r) {
        Ok(v) => {
            write_ok(out);
            msgpack::write_bin(out, v);
        }
        Err(e) => write_error(out, &e),
    })
}

/// The four exports of the kind aggregate.
pub fn aggregate<H: Aggregate>(h: &mut H, e: Export, input: &[u8], out: &mut Vec<u8>) -> Result<(), CallError> {
    match e {
        Export::AggInit => {
            let s = scratch();
            s.acc.clear();
            match h.init(&mut s.acc) {
                Ok(()) => {
                    write_ok(out);
                    msgpack::write_bin(out, Some(&s.acc));
                }
                Err(e) => write_error(out, &e),
            }
            Ok(())
        }
        Export::AggAdd => agg_add(Some(h), input, out),
        Export::AggMerge => {
            let mut merged = std::mem::take(&mut scratch().work);
            let r = items(input, 3, out, |k, a, b, out| {
                merged.clear();
                match h.merge(k, a.unwrap_or_default(), b.unwrap_or_default(), &mut merged) {
                    Ok(()) => {
                        write_ok(out);
                        msgpack::write_bin(out, Some(&merged));
                    }
                    Err(e) => write_error(out, &e),
                }
            });
            scratch().work = merged;
            r
        }
        Export::AggResult => items(input, 2, out, |k, acc, _, out| match h.result(k, acc.unwrap_or_default()) {
            Ok(v) => {
                write_ok(out);
                msgpack::write_bin(out, v);
            }
            Err(e) => write_error(out, &e),
        }),
        _ => unsupported(e, input, out),
    }
}

/// The module has no aggregate: agg_add answers every record UNSUPPORTED.
struct NoAggregate;

impl Aggregate for NoAggregate {
    fn add(&mut self, _: &mut Vec<u8>, _: Record<'_>) -> crate::Result<()> {
        Err(NO_AGGREGATE)
    }
}

const NO_AGGREGATE: Error = Error::raw(code::UNSUPPORTED, "this module implements no aggregate function");

/// eddy_agg_add: [Group × G] → [Added × G], Added = [acc, [RecordError × e]].
///
/// Added has no failure code of its own, so an envelope that is not a valid
/// list of groups fails the whole call with BAD_ENVELOPE. With `h` None (no
/// aggregate), every record fails with UNSUPPORTED and the accumulators are
/// answered unchanged.
fn agg_add<H: Aggregate>(mut h: Option<&mut H>, input: &[u8], out: &mut Vec<u8>) -> Result<(), CallError> {
    let s = scratch();
    let mut r = Reader::new(input);
    let n = count(&mut r)?;
    s.groups.clear();
    s.recs.clear();
    for i in 0..n {
        let res = (|| -> Result<RawGroup, Malformed> {
            if r.array_len()? != 3 {
                return Err(Malformed::Shape("a group is not an array of 3 elements"));
            }
            r.bytes()?; // the key: Add does not take it
            let acc = Span::of(input, r.bytes()?);
            let k = r.array_len()?;
            let lo = s.recs.len();
            for _ in 0..k {
                let mut rec = RawRecord::default();
                read_record(&mut r, input, &mut rec)?;
                s.recs.push(rec);
            }
            Ok(RawGroup { acc, lo, hi: s.recs.len() })
        })();
        match res {
            Ok(g) => s.groups.push(g),
            Err(e) => return Err(bad_envelope(format_args!("group {}: {}", i, e))),
        }
    }
    if let Err(e) = trailing(&r) {
        return Err(bad_envelope(format_args!("{}", e)));
    }

    msgpack::write_array_header(out, n);
    let (groups, recs) = (&s.groups, &s.recs);
    let (acc, work, errs) = (&mut s.acc, &mut s.work, &mut s.rec_errs);
    for g in groups.iter() {
        errs.clear();
        let recs = &recs[g.lo..g.hi];
        out.push(0x92);
        match h.as_deref_mut() {
            None => {
                write_non_nil(out, g.acc.get(input));
                for i in 0..recs.len() {
                    errs.push((i, NO_AGGREGATE));
                }
            }
            Some(h) => {
                if fold(h, g.acc.get(input), recs, input, acc, work, errs) {
                    msgpack::write_bin(out, Some(acc));
                } else {
                    write_non_nil(out, g.acc.get(input));
                }
            }
        }
        msgpack::write_array_header(out, errs.len());
        for (i, e) in errs.iter() {
            out.push(0x93);
            msgpack::write_int(out, *i as i64);
            msgpack::write_int(out, e.code() as i64);
            msgpack::write_str(out, e.reason());
        }
    }
    Ok(())
}

/// Folds `recs` into the accumulator `start` (the initial one if None),
/// leaving the result in `acc` and the records it could not fold in `errs`.
/// It returns false if there is no accumulator to answer (the initial one
/// could not be made).
///
/// Add gets a scratch copy of the accumulator (`work`), so a failed Add
/// leaves the previous accumulator intact, and the input envelope is never
/// written.
fn fold<H: Aggregate>(
    h: &mut H,
    start: Option<&[u8]>,
    recs: &[RawRecord],
    input: &[u8],
    acc: &mut Vec<u8>,
    work: &mut Vec<u8>,
    errs: &mut Vec<(usize, Error)>,
) -> bool {
    acc.clear();
    match start {
        Some(a) => acc.extend_from_slice(a),
        None => {
            if let Err(e) = h.init(acc) {
                let e = Error::raw_owned(e.code(), format!("initial accumulator: {}", e.reason()));
                for i in 0..recs.len() {
                    errs.push((i, e.clone()));
                }
                return false;
            }
        }
    }
    for (i, raw) in recs.iter().enumerate() {
        work.clear();
        work.extend_from_slice(acc);
        match h.add(work, raw.view(input)) {
            Ok(()) => std::mem::swap(acc, work),
            Err(e) => errs.push((i, e)),
        }
    }
    true
}

/// Answers an export of a kind this module does not implement.
pub fn unsupported(e: Export, input: &[u8], out: &mut Vec<u8>) -> Result<(), CallError> {
    let reason = match e {
        Export::Manifest => unreachable!(),
        Export::AggAdd => return agg_add::<NoAggregate>(None, input, out),
        Export::AggInit => {
            write_error(out, &NO_AGGREGATE);
            return Ok(());
        }
        Export::AggMerge | Export::AggResult => "this module implements no aggregate function",
        Export::Process => "this module implements no process function",
        Export::Join => "this module implements no join function",
        Export::Key => "this module implements no key function",
        Export::Timestamp => "this module implements no timestamp function",
        Export::Timer => "this module implements no timer function",
    };
    let mut r = Reader::new(input);
    let n = count(&mut r)?;
    msgpack::write_array_header(out, n);
    fail_all(out, n, code::UNSUPPORTED, reason);
    Ok(())
}
