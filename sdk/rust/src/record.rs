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
/// [`Header`]s built by the handler.
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
pub struct Headers<'a>(Repr<'a>);

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
    pub const NONE: Headers<'static> = Headers(Repr::List(&[]));

    /// Headers made of `list`.
    pub const fn new(list: &'a [Header<'a>]) -> Headers<'a> {
        Headers(Repr::List(list))
    }

    /// Headers encoded as `count` msgpack [str, bytes?] pairs that the
    /// decoder has validated.
    pub(crate) fn encoded(bytes: &'a [u8], count: u32) -> Headers<'a> {
        Headers(Repr::Encoded { bytes, count })
    }

    /// The number of headers.
    pub fn len(&self) -> usize {
        match self.0 {
            Repr::Encoded { count, .. } => count as usize,
            Repr::List(l) => l.len(),
        }
    }

    /// Reports whether there are no headers.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The headers in order.
    pub fn iter(&self) -> HeaderIter<'a> {
        match self.0 {
            Repr::Encoded { bytes, count } => HeaderIter(IterRepr::Encoded(Reader::new(bytes), count)),
            Repr::List(l) => HeaderIter(IterRepr::List(l.iter())),
        }
    }

    /// The value of the last header called `name`: `None` if there is none,
    /// `Some(None)` if its value is null.
    pub fn get(&self, name: &str) -> Option<Option<&'a [u8]>> {
        self.iter().filter(|h| h.name == name).last().map(|h| h.value)
    }

    /// Appends the headers as a msgpack array.
    pub(crate) fn write(&self, b: &mut Vec<u8>) {
        match self.0 {
            Repr::Encoded { bytes, count } => {
                msgpack::write_array_header(b, count as usize);
                b.extend_from_slice(bytes);
            }
            Repr::List(l) => {
                msgpack::write_array_header(b, l.len());
                for h in l {
                    b.push(0x92);
                    msgpack::write_str(b, h.name);
                    msgpack::write_bin(b, h.value);
                }
            }
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
pub struct HeaderIter<'a>(IterRepr<'a>);

#[derive(Clone)]
enum IterRepr<'a> {
    Encoded(Reader<'a>, u32),
    List(std::slice::Iter<'a, Header<'a>>),
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = Header<'a>;

    fn next(&mut self) -> Option<Header<'a>> {
        match &mut self.0 {
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

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            IterRepr::List(it) => it.len(),
            IterRepr::Encoded(_, left) => *left as usize,
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

/// Collects the output records of a [`FlatMap`](crate::FlatMap) handler,
/// encoding each one at once into the SDK's output buffer.
pub struct Emitter<'o> {
    out: &'o mut Vec<u8>,
    count: usize,
    in_ts: i64,
}

impl<'o> Emitter<'o> {
    pub(crate) fn new(out: &'o mut Vec<u8>, in_ts: i64) -> Self {
        Emitter { out, count: 0, in_ts }
    }

    /// Emits one output record. Its bytes are copied at once, so `r` may
    /// borrow anything that lives through this call.
    #[inline]
    pub fn emit(&mut self, r: Record<'_>) {
        write_record(self.out, &r, self.in_ts);
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
