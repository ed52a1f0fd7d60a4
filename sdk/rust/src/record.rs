//! Records and headers (ABI.md section 5.2).

use crate::msgpack::{self, Reader};
use std::fmt;

/// A Kafka-style record: the input and output of process, key and timestamp
/// handlers.
///
/// `None` is a Kafka null, which is not the same as an empty slice; the SDK
/// keeps the difference in both directions.
///
/// # Lifetimes
///
/// An input record is a view into the host's input buffer: its key, value
/// and headers borrow it for `'a`, the duration of the call, and cost no
/// copy. Copy the bytes you keep longer (in your handler's state, for
/// example) with `to_vec`. Output records may borrow the input record, the
/// handler (`&'a mut self`, for a buffer it reuses) or static data: the SDK
/// encodes them before it calls the handler again.
///
/// Returning the input record with some fields changed keeps the others:
///
/// ```
/// # use eddy::Record;
/// fn shout(mut r: Record<'_>) -> eddy::Result<Record<'_>> {
///     r.value = Some(b"HEY");
///     Ok(r)
/// }
/// let r = shout(Record::new(Some(b"k"), Some(b"hey"))).unwrap();
/// assert_eq!(r.value, Some(&b"HEY"[..]));
/// assert_eq!(r.key, Some(&b"k"[..]));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record<'a> {
    /// The record key; `None` is a null key.
    pub key: Option<&'a [u8]>,
    /// The record value; `None` is a null value (a tombstone).
    pub value: Option<&'a [u8]>,
    /// Milliseconds since the Unix epoch, UTC. An output record whose
    /// timestamp equals its input's is written as "inherit" (nil).
    pub timestamp: i64,
    /// The record headers, in order. An output record carries exactly the
    /// headers it holds: returning the input record keeps its headers, and
    /// [`Headers::NONE`] drops them.
    pub headers: Headers<'a>,
}

impl<'a> Record<'a> {
    /// A record with this key and value, timestamp 0 and no headers.
    pub const fn new(key: Option<&'a [u8]>, value: Option<&'a [u8]>) -> Record<'a> {
        Record { key, value, timestamp: 0, headers: Headers::NONE }
    }

    /// Returns `self` sent to the named output of its step (ABI.md, "Named
    /// outputs"): the pipeline file gives a map, filter or flat_map step its
    /// outputs (`outputs: [name, ...]`), and later steps read one as
    /// `<step>.<name>`. A record sent to no output stays the step's own
    /// output; one sent to a name the step does not have is dead-lettered.
    /// The host takes the header off before the record goes on.
    ///
    /// The result's headers are `self`'s without any earlier
    /// [`HEADER_OUTPUT`] header, followed by `eddy.output: name`. They are a
    /// view over `self`'s headers and `name`, so nothing is copied or
    /// allocated, and `self` is not changed: a flat_map may send the same
    /// record to several outputs.
    ///
    /// ```
    /// # use eddy::{Header, Headers, Record, HEADER_OUTPUT};
    /// let list = [Header { name: "source", value: Some(b"web") }];
    /// let r = Record { headers: Headers::new(&list), ..Record::new(None, Some(b"{}")) };
    /// let o = r.to_output("objects");
    /// assert_eq!(o.headers.get(HEADER_OUTPUT), Some(Some(&b"objects"[..])));
    /// assert_eq!(o.headers.len(), 2);
    /// assert_eq!(r.headers.len(), 1);
    /// ```
    pub fn to_output(mut self, name: &'a str) -> Record<'a> {
        self.headers.output = Some(name);
        self
    }

    /// A copy of `self` that owns its bytes and outlives the call.
    pub fn to_owned_record(&self) -> OwnedRecord {
        OwnedRecord {
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            timestamp: self.timestamp,
            headers: self.headers.iter().map(|h| (h.name.to_owned(), h.value.map(<[u8]>::to_vec))).collect(),
        }
    }
}

/// A record that owns its bytes: what [`Record::to_owned_record`] returns and
/// what the native test harness ([`crate::testing`]) hands back.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnedRecord {
    /// The key; `None` is a null key.
    pub key: Option<Vec<u8>>,
    /// The value; `None` is a null value.
    pub value: Option<Vec<u8>>,
    /// Milliseconds since the Unix epoch, UTC.
    pub timestamp: i64,
    /// The headers, in order: name and value (`None` is a null value).
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// The header naming the output of its step that an output record goes to
/// (ABI.md, "Named outputs"). [`Record::to_output`] sets it.
pub const HEADER_OUTPUT: &str = "eddy.output";

/// One record header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header<'a> {
    /// The header name.
    pub name: &'a str,
    /// The header value; `None` is a null value.
    pub value: Option<&'a [u8]>,
}

/// The headers of a record: either a view of the encoded headers of an input
/// record (decoded as they are iterated, never copied), or a slice of
/// [`Header`]s built by the handler; [`Record::to_output`] adds an output
/// name to either.
///
/// ```
/// # use eddy::{Header, Headers};
/// let list = [Header { name: "source", value: Some(b"web") }];
/// let h = Headers::new(&list);
/// assert_eq!(h.get("source"), Some(Some(&b"web"[..])));
/// assert_eq!(h.len(), 1);
/// assert!(Headers::NONE.is_empty());
/// ```
#[derive(Clone, Copy)]
pub struct Headers<'a> {
    repr: Repr<'a>,
    /// Set by [`Record::to_output`]: the headers are then `repr`'s without
    /// any [`HEADER_OUTPUT`] header, followed by `eddy.output: output`. A
    /// view rather than a new list, because a `Record` borrows everything
    /// it holds and has nowhere to keep a list it would build.
    output: Option<&'a str>,
}

#[derive(Clone, Copy)]
enum Repr<'a> {
    /// `count` [name, value] pairs, msgpack-encoded (already validated), as
    /// they follow the array header in the input.
    Encoded {
        bytes: &'a [u8],
        count: u32,
    },
    List(&'a [Header<'a>]),
}

impl<'a> Headers<'a> {
    /// No headers.
    pub const NONE: Headers<'static> = Headers { repr: Repr::List(&[]), output: None };

    /// Headers made of `list`.
    pub const fn new(list: &'a [Header<'a>]) -> Headers<'a> {
        Headers { repr: Repr::List(list), output: None }
    }

    /// Headers encoded as `count` msgpack [str, bytes?] pairs that the
    /// decoder has validated.
    pub(crate) fn encoded(bytes: &'a [u8], count: u32) -> Headers<'a> {
        Headers { repr: Repr::Encoded { bytes, count }, output: None }
    }

    /// The number of headers.
    pub fn len(&self) -> usize {
        match (self.repr, self.output) {
            (Repr::Encoded { count, .. }, None) => count as usize,
            (Repr::List(l), None) => l.len(),
            (_, Some(_)) => self.iter().len(),
        }
    }

    /// Reports whether there are no headers.
    pub fn is_empty(&self) -> bool {
        self.output.is_none() && self.len() == 0
    }

    /// The headers in order.
    pub fn iter(&self) -> HeaderIter<'a> {
        let base = match self.repr {
            Repr::Encoded { bytes, count } => IterRepr::Encoded(Reader::new(bytes), count),
            Repr::List(l) => IterRepr::List(l.iter()),
        };
        // The count is known only by looking for the headers left out.
        let output = self.output.map(|name| {
            let mut kept = base.clone();
            let mut n = 1;
            while let Some(h) = kept.next() {
                n += (h.name != HEADER_OUTPUT) as usize;
            }
            (name, n)
        });
        HeaderIter { base, output }
    }

    /// The value of the last header called `name`: `None` if there is none,
    /// `Some(None)` if its value is null.
    pub fn get(&self, name: &str) -> Option<Option<&'a [u8]>> {
        self.iter().filter(|h| h.name == name).last().map(|h| h.value)
    }

    /// Appends the headers as a msgpack array.
    pub(crate) fn write(&self, b: &mut Vec<u8>) {
        if let (Repr::Encoded { bytes, count }, None) = (self.repr, self.output) {
            // The input's headers, as they came: one copy.
            msgpack::write_array_header(b, count as usize);
            b.extend_from_slice(bytes);
            return;
        }
        let it = self.iter();
        msgpack::write_array_header(b, it.len());
        for h in it {
            b.push(0x92);
            msgpack::write_str(b, h.name);
            msgpack::write_bin(b, h.value);
        }
    }
}

impl Default for Headers<'_> {
    fn default() -> Self {
        Headers::NONE
    }
}

impl PartialEq for Headers<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Headers<'_> {}

impl fmt::Debug for Headers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for Headers<'a> {
    type Item = Header<'a>;
    type IntoIter = HeaderIter<'a>;
    fn into_iter(self) -> HeaderIter<'a> {
        self.iter()
    }
}

/// An iterator over [`Headers`].
#[derive(Clone)]
pub struct HeaderIter<'a> {
    base: IterRepr<'a>,
    /// The output name of [`Record::to_output`], not yet returned, and the
    /// number of headers left, it included.
    output: Option<(&'a str, usize)>,
}

#[derive(Clone)]
enum IterRepr<'a> {
    Encoded(Reader<'a>, u32),
    List(std::slice::Iter<'a, Header<'a>>),
}

impl<'a> IterRepr<'a> {
    fn next(&mut self) -> Option<Header<'a>> {
        match self {
            IterRepr::List(it) => it.next().copied(),
            IterRepr::Encoded(r, left) => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                // The decoder validated these bytes: this cannot fail.
                r.array_len().ok()?;
                let name = r.str().ok()?;
                let value = r.bytes().ok()?;
                Some(Header { name, value })
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            IterRepr::List(it) => it.len(),
            IterRepr::Encoded(_, left) => *left as usize,
        }
    }
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = Header<'a>;

    fn next(&mut self) -> Option<Header<'a>> {
        let (name, left) = match &mut self.output {
            None => return self.base.next(),
            Some((name, left)) => (*name, left),
        };
        while let Some(h) = self.base.next() {
            if h.name != HEADER_OUTPUT {
                *left -= 1;
                return Some(h);
            }
        }
        self.output = None;
        Some(Header { name: HEADER_OUTPUT, value: Some(name.as_bytes()) })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match self.output {
            None => self.base.len(),
            Some((_, left)) => left,
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for HeaderIter<'_> {}

/// Appends an output Record. A timestamp equal to the input's (`in_ts`) is
/// written as nil, which ABI.md 5.2 defines as the same value in one byte.
#[inline]
pub(crate) fn write_record(b: &mut Vec<u8>, r: &Record<'_>, in_ts: i64) {
    let kl = r.key.map_or(0, <[u8]>::len);
    let vl = r.value.map_or(0, <[u8]>::len);
    b.reserve(kl + vl + 24);
    b.push(0x94);
    msgpack::write_bin(b, r.key);
    msgpack::write_bin(b, r.value);
    if r.timestamp == in_ts {
        b.push(msgpack::format::NIL);
    } else {
        msgpack::write_int(b, r.timestamp);
    }
    if r.headers.is_empty() {
        b.push(0x90);
    } else {
        r.headers.write(b);
    }
}

/// Collects the output records of a [`FlatMap`](crate::FlatMap) or
/// [`OnTimer`](crate::OnTimer) handler, encoding each one at once into the
/// SDK's output buffer.
pub struct Emitter<'o> {
    out: &'o mut Vec<u8>,
    count: usize,
    in_ts: i64,
    /// A timer's emitter: a timestamp of 0 stands for the timer's time.
    zero_inherits: bool,
}

impl<'o> Emitter<'o> {
    pub(crate) fn new(out: &'o mut Vec<u8>, in_ts: i64) -> Self {
        Emitter { out, count: 0, in_ts, zero_inherits: false }
    }

    /// The emitter of a timer at `time`: records with timestamp 0 or
    /// `time` get the timer's time.
    pub(crate) fn for_timer(out: &'o mut Vec<u8>, time: i64) -> Self {
        Emitter { out, count: 0, in_ts: time, zero_inherits: true }
    }

    /// Emits one output record. Its bytes are copied at once, so `r` may
    /// borrow anything that lives through this call.
    ///
    /// In a flat_map, a timestamp equal to the input record's is written as
    /// "inherit" (nil). In a timer handler, a timestamp of 0 (as
    /// [`Record::new`] makes) or equal to the timer's time gives the record
    /// the timer's time, written as nil.
    #[inline]
    pub fn emit(&mut self, r: Record<'_>) {
        if self.zero_inherits && r.timestamp == 0 {
            write_record(self.out, &Record { timestamp: self.in_ts, ..r }, self.in_ts);
        } else {
            write_record(self.out, &r, self.in_ts);
        }
        self.count += 1;
    }

    /// The number of records emitted so far.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Reports whether no record has been emitted yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}
