//! The msgpack subset of the Eddy guest ABI (ABI.md section 5.1): nil, bool,
//! integers of every width, str, bin, arrays and maps.
//!
//! Writing is done with `write_*` functions that append to a caller's
//! `Vec<u8>` in the shortest form; a caller that reuses its vector encodes
//! without allocating. Reading is done with a [`Reader`], whose byte results
//! are views into the input, not copies.
//!
//! Accumulators of an aggregate function are opaque bytes to the host, so a
//! function may use this module to encode them as msgpack, or any encoding
//! of its own.
//!
//! ```
//! use eddy::msgpack::{self, Reader};
//!
//! let mut b = Vec::new();
//! msgpack::write_array_header(&mut b, 2);
//! msgpack::write_int(&mut b, -3);
//! msgpack::write_bin(&mut b, Some(b"hi"));
//! assert_eq!(b, [0x92, 0xfd, 0xc4, 0x02, b'h', b'i']);
//!
//! let mut r = Reader::new(&b);
//! assert_eq!(r.array_len().unwrap(), 2);
//! assert_eq!(r.int().unwrap(), -3);
//! assert_eq!(r.bytes().unwrap(), Some(&b"hi"[..]));
//! ```

use core::fmt;

/// Format bytes of the subset.
pub mod format {
    /// nil
    pub const NIL: u8 = 0xc0;
    /// false
    pub const FALSE: u8 = 0xc2;
    /// true
    pub const TRUE: u8 = 0xc3;
    /// bin 8
    pub const BIN8: u8 = 0xc4;
    /// bin 16
    pub const BIN16: u8 = 0xc5;
    /// bin 32
    pub const BIN32: u8 = 0xc6;
    /// uint 8
    pub const UINT8: u8 = 0xcc;
    /// uint 16
    pub const UINT16: u8 = 0xcd;
    /// uint 32
    pub const UINT32: u8 = 0xce;
    /// uint 64
    pub const UINT64: u8 = 0xcf;
    /// int 8
    pub const INT8: u8 = 0xd0;
    /// int 16
    pub const INT16: u8 = 0xd1;
    /// int 32
    pub const INT32: u8 = 0xd2;
    /// int 64
    pub const INT64: u8 = 0xd3;
    /// str 8
    pub const STR8: u8 = 0xd9;
    /// str 16
    pub const STR16: u8 = 0xda;
    /// str 32
    pub const STR32: u8 = 0xdb;
    /// array 16
    pub const ARRAY16: u8 = 0xdc;
    /// array 32
    pub const ARRAY32: u8 = 0xdd;
    /// map 16
    pub const MAP16: u8 = 0xde;
    /// map 32
    pub const MAP32: u8 = 0xdf;
}

use format::*;

/// The deepest nesting [`Reader::skip`] accepts, so that hostile input cannot
/// exhaust the stack.
pub const MAX_DEPTH: usize = 64;

/// A value the [`Reader`] could not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The input ends inside a value, or an array or map announces more
    /// elements than there are bytes left.
    Short,
    /// The value at `offset` is not what the decoder wanted.
    Type {
        /// Byte offset of the offending value.
        offset: usize,
        /// What the decoder expected.
        want: &'static str,
        /// The format byte found.
        got: u8,
    },
    /// An integer at `offset` does not fit the type asked for.
    Overflow {
        /// Byte offset of the integer.
        offset: usize,
    },
    /// Nesting deeper than [`MAX_DEPTH`] at `offset`.
    TooDeep {
        /// Byte offset of the value that is too deep.
        offset: usize,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DecodeError::Short => f.write_str("msgpack: unexpected end of input"),
            DecodeError::Type { offset, want, got } => {
                write!(f, "msgpack: at byte {}: want {}, got format 0x{:x}", offset, want, got)
            }
            DecodeError::Overflow { offset } => {
                write!(f, "msgpack: at byte {}: integer out of range", offset)
            }
            DecodeError::TooDeep { offset } => {
                write!(f, "msgpack: at byte {}: nested deeper than {}", offset, MAX_DEPTH)
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// Appends nil.
#[inline]
pub fn write_nil(b: &mut Vec<u8>) {
    b.push(NIL);
}

/// Appends a bool.
#[inline]
pub fn write_bool(b: &mut Vec<u8>, v: bool) {
    b.push(if v { TRUE } else { FALSE });
}

/// Appends a signed integer in its shortest form; non-negative values use the
/// unsigned formats, as msgpack recommends.
#[inline]
pub fn write_int(b: &mut Vec<u8>, v: i64) {
    if v >= 0 {
        write_uint(b, v as u64);
    } else if v >= -32 {
        b.push(v as u8);
    } else if v >= i8::MIN as i64 {
        b.extend_from_slice(&[INT8, v as u8]);
    } else if v >= i16::MIN as i64 {
        b.push(INT16);
        b.extend_from_slice(&(v as i16).to_be_bytes());
    } else if v >= i32::MIN as i64 {
        b.push(INT32);
        b.extend_from_slice(&(v as i32).to_be_bytes());
    } else {
        b.push(INT64);
        b.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends an unsigned integer in its shortest form.
#[inline]
pub fn write_uint(b: &mut Vec<u8>, v: u64) {
    if v <= 0x7f {
        b.push(v as u8);
    } else if v <= u8::MAX as u64 {
        b.extend_from_slice(&[UINT8, v as u8]);
    } else if v <= u16::MAX as u64 {
        b.push(UINT16);
        b.extend_from_slice(&(v as u16).to_be_bytes());
    } else if v <= u32::MAX as u64 {
        b.push(UINT32);
        b.extend_from_slice(&(v as u32).to_be_bytes());
    } else {
        b.push(UINT64);
        b.extend_from_slice(&v.to_be_bytes());
    }
}

/// Appends the header of a bin of `n` bytes; the caller appends the bytes.
#[inline]
pub fn write_bin_header(b: &mut Vec<u8>, n: usize) {
    if n <= u8::MAX as usize {
        b.extend_from_slice(&[BIN8, n as u8]);
    } else if n <= u16::MAX as usize {
        b.push(BIN16);
        b.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        b.push(BIN32);
        b.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// Appends `v` as bin, or nil when `v` is `None`. `None` is not the same as
/// an empty slice: Kafka tells a null key from an empty one.
#[inline]
pub fn write_bin(b: &mut Vec<u8>, v: Option<&[u8]>) {
    match v {
        None => b.push(NIL),
        Some(v) => {
            b.reserve(v.len() + 5);
            write_bin_header(b, v.len());
            b.extend_from_slice(v);
        }
    }
}

/// Appends the header of a str of `n` bytes; the caller appends the bytes.
#[inline]
pub fn write_str_header(b: &mut Vec<u8>, n: usize) {
    if n < 32 {
        b.push(0xa0 | n as u8);
    } else if n <= u8::MAX as usize {
        b.extend_from_slice(&[STR8, n as u8]);
    } else if n <= u16::MAX as usize {
        b.push(STR16);
        b.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        b.push(STR32);
        b.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// Appends `v` as str.
#[inline]
pub fn write_str(b: &mut Vec<u8>, v: &str) {
    b.reserve(v.len() + 5);
    write_str_header(b, v.len());
    b.extend_from_slice(v.as_bytes());
}

/// Appends the header of an array of `n` elements.
#[inline]
pub fn write_array_header(b: &mut Vec<u8>, n: usize) {
    if n < 16 {
        b.push(0x90 | n as u8);
    } else if n <= u16::MAX as usize {
        b.push(ARRAY16);
        b.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        b.push(ARRAY32);
        b.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// Appends the header of a map of `n` key-value pairs.
#[inline]
pub fn write_map_header(b: &mut Vec<u8>, n: usize) {
    if n < 16 {
        b.push(0x80 | n as u8);
    } else if n <= u16::MAX as usize {
        b.push(MAP16);
        b.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        b.push(MAP32);
        b.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// Decodes values from a byte slice, front to back.
///
/// Slices returned by [`bytes`](Reader::bytes) and [`str`](Reader::str) are
/// views into the input. A method that fails returns the error and leaves
/// the reader where it was, so a caller may try another type.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    #[inline]
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// A reader at offset `pos` of `buf` (clamped to its length).
    #[inline]
    pub fn at(buf: &'a [u8], pos: usize) -> Self {
        Reader { buf, pos: pos.min(buf.len()) }
    }

    /// The offset of the next value.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The number of bytes not read yet.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The whole input.
    #[inline]
    pub fn input(&self) -> &'a [u8] {
        self.buf
    }

    /// The format byte of the next value, without consuming it.
    #[inline]
    pub fn peek(&self) -> Result<u8, DecodeError> {
        self.buf.get(self.pos).copied().ok_or(DecodeError::Short)
    }

    /// Reports whether the next value is nil.
    #[inline]
    pub fn is_nil(&self) -> bool {
        self.buf.get(self.pos) == Some(&NIL)
    }

    #[inline]
    fn type_error(&self, want: &'static str, got: u8) -> DecodeError {
        DecodeError::Type { offset: self.pos, want, got }
    }

    /// Reads `n` (1, 2, 4 or 8) big-endian bytes at `at` as an unsigned
    /// number. It is written without a loop: the host checks for
    /// interruption at every loop iteration, which costs more than this.
    #[inline]
    fn be(&self, at: usize, n: usize) -> Result<u64, DecodeError> {
        let s = self.buf.get(at..at + n).ok_or(DecodeError::Short)?;
        Ok(match n {
            1 => s[0] as u64,
            2 => u16::from_be_bytes([s[0], s[1]]) as u64,
            4 => u32::from_be_bytes([s[0], s[1], s[2], s[3]]) as u64,
            _ => u64::from_be_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]),
        })
    }

    /// Reads nil.
    pub fn nil(&mut self) -> Result<(), DecodeError> {
        let c = self.peek()?;
        if c != NIL {
            return Err(self.type_error("nil", c));
        }
        self.pos += 1;
        Ok(())
    }

    /// Reads a bool.
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        let c = self.peek()?;
        let v = match c {
            TRUE => true,
            FALSE => false,
            _ => return Err(self.type_error("bool", c)),
        };
        self.pos += 1;
        Ok(v)
    }

    /// Reads an integer of any width as an `i64`; a uint 64 above
    /// `i64::MAX` is an overflow.
    #[inline]
    pub fn int(&mut self) -> Result<i64, DecodeError> {
        let c = self.peek()?;
        let p = self.pos + 1;
        let (v, n) = match c {
            0x00..=0x7f => (c as i64, 0),
            0xe0..=0xff => (c as i8 as i64, 0),
            UINT8 => (self.be(p, 1)? as i64, 1),
            UINT16 => (self.be(p, 2)? as i64, 2),
            UINT32 => (self.be(p, 4)? as i64, 4),
            UINT64 => {
                let v = self.be(p, 8)?;
                if v > i64::MAX as u64 {
                    return Err(DecodeError::Overflow { offset: self.pos });
                }
                (v as i64, 8)
            }
            INT8 => (self.be(p, 1)? as u8 as i8 as i64, 1),
            INT16 => (self.be(p, 2)? as u16 as i16 as i64, 2),
            INT32 => (self.be(p, 4)? as u32 as i32 as i64, 4),
            INT64 => (self.be(p, 8)? as i64, 8),
            _ => return Err(self.type_error("int", c)),
        };
        self.pos = p + n;
        Ok(v)
    }

    /// Reads a non-negative integer of any width as a `u64`.
    pub fn uint(&mut self) -> Result<u64, DecodeError> {
        let c = self.peek()?;
        if c == UINT64 {
            let v = self.be(self.pos + 1, 8)?;
            self.pos += 9;
            return Ok(v);
        }
        let start = self.pos;
        let v = self.int()?;
        if v < 0 {
            self.pos = start;
            return Err(DecodeError::Overflow { offset: start });
        }
        Ok(v as u64)
    }

    /// Reads the length of an array or map header `c` whose 16- and 32-bit
    /// formats are `f16`/`f32` and fix format is `fix` (mask 0xf0).
    #[inline]
    fn container(&mut self, fix: u8, f16: u8, f32: u8, want: &'static str) -> Result<usize, DecodeError> {
        let c = self.peek()?;
        let p = self.pos + 1;
        let (n, h) = if c & 0xf0 == fix {
            ((c & 0x0f) as usize, 0)
        } else if c == f16 {
            (self.be(p, 2)? as usize, 2)
        } else if c == f32 {
            (self.be(p, 4)? as usize, 4)
        } else {
            return Err(self.type_error(want, c));
        };
        // Every element takes at least one byte (two for a map pair).
        let min = if fix == 0x80 { n.saturating_mul(2) } else { n };
        if min > self.buf.len() - (p + h) {
            return Err(DecodeError::Short);
        }
        self.pos = p + h;
        Ok(n)
    }

    /// Reads an array header and returns the number of elements.
    #[inline]
    pub fn array_len(&mut self) -> Result<usize, DecodeError> {
        self.container(0x90, ARRAY16, ARRAY32, "array")
    }

    /// Reads a map header and returns the number of key-value pairs.
    #[inline]
    pub fn map_len(&mut self) -> Result<usize, DecodeError> {
        self.container(0x80, MAP16, MAP32, "map")
    }

    /// Reads the header of a bin or str `c` and returns where its payload
    /// starts and how long it is.
    #[inline]
    fn payload(&self, c: u8, allow_bin: bool, allow_str: bool) -> Option<Result<(usize, usize), DecodeError>> {
        let p = self.pos + 1;
        let (start, n) = match c {
            0xa0..=0xbf if allow_str => (p, (c & 0x1f) as usize),
            BIN8 if allow_bin => (p + 1, self.buf.get(p).map(|&n| n as usize)?),
            STR8 if allow_str => (p + 1, self.buf.get(p).map(|&n| n as usize)?),
            BIN16 if allow_bin => (p + 2, self.be(p, 2).ok()? as usize),
            STR16 if allow_str => (p + 2, self.be(p, 2).ok()? as usize),
            BIN32 if allow_bin => (p + 4, self.be(p, 4).ok()? as usize),
            STR32 if allow_str => (p + 4, self.be(p, 4).ok()? as usize),
            _ => return None,
        };
        if n > self.buf.len().saturating_sub(start) {
            return Some(Err(DecodeError::Short));
        }
        Some(Ok((start, n)))
    }

    /// Reads the ABI's *bytes?*: a bin or str as a view into the input, or
    /// `None` for nil.
    #[inline]
    pub fn bytes(&mut self) -> Result<Option<&'a [u8]>, DecodeError> {
        let c = self.peek()?;
        if c == NIL {
            self.pos += 1;
            return Ok(None);
        }
        match self.payload(c, true, true) {
            Some(Ok((start, n))) => {
                self.pos = start + n;
                Ok(Some(&self.buf[start..start + n]))
            }
            Some(Err(e)) => Err(e),
            None if matches!(c, BIN8 | BIN16 | BIN32 | STR8 | STR16 | STR32) => Err(DecodeError::Short),
            None => Err(self.type_error("bytes", c)),
        }
    }

    /// Reads a str as raw bytes (not checked to be UTF-8), a view into the
    /// input.
    #[inline]
    pub fn str_bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let c = self.peek()?;
        match self.payload(c, false, true) {
            Some(Ok((start, n))) => {
                self.pos = start + n;
                Ok(&self.buf[start..start + n])
            }
            Some(Err(e)) => Err(e),
            None if matches!(c, STR8 | STR16 | STR32) => Err(DecodeError::Short),
            None => Err(self.type_error("str", c)),
        }
    }

    /// Reads a str that must be valid UTF-8.
    pub fn str(&mut self) -> Result<&'a str, DecodeError> {
        let start = self.pos;
        let b = self.str_bytes()?;
        match core::str::from_utf8(b) {
            Ok(s) => Ok(s),
            Err(_) => {
                self.pos = start;
                Err(DecodeError::Type { offset: start, want: "UTF-8 str", got: self.buf[start] })
            }
        }
    }

    /// Skips one value of the subset, with everything nested in it. Floats,
    /// ext types and other formats outside the subset are an error.
    pub fn skip(&mut self) -> Result<(), DecodeError> {
        let start = self.pos;
        let r = self.skip_depth(0);
        if r.is_err() {
            self.pos = start;
        }
        r
    }

    fn skip_depth(&mut self, depth: usize) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep { offset: self.pos });
        }
        let c = self.peek()?;
        match c {
            NIL | TRUE | FALSE => {
                self.pos += 1;
                Ok(())
            }
            0x00..=0x7f | 0xe0..=0xff | UINT8 | UINT16 | UINT32 | INT8 | INT16 | INT32 | INT64 => {
                self.int().map(|_| ())
            }
            UINT64 => self.uint().map(|_| ()),
            0xa0..=0xbf | STR8 | STR16 | STR32 | BIN8 | BIN16 | BIN32 => self.bytes().map(|_| ()),
            0x90..=0x9f | ARRAY16 | ARRAY32 => {
                let n = self.array_len()?;
                for _ in 0..n {
                    self.skip_depth(depth + 1)?;
                }
                Ok(())
            }
            0x80..=0x8f | MAP16 | MAP32 => {
                let n = self.map_len()?;
                for _ in 0..2 * n {
                    self.skip_depth(depth + 1)?;
                }
                Ok(())
            }
            _ => Err(self.type_error("a value of the msgpack subset", c)),
        }
    }
}
