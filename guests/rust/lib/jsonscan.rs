//! The small, allocation-free JSON scanning the reference guests need:
//! validating a document, finding one top-level member of an object, and
//! recognising a number. It is a port of `guests/go/internal/jsonscan`, so
//! the Rust guests accept and refuse exactly what the Go guests do.
//!
//! The scanner follows RFC 8259 as Go's encoding/json does: the same
//! documents are valid (invalid UTF-8 inside strings is accepted, as
//! `json.Valid` accepts it), nesting is limited to [`MAX_DEPTH`], and when an
//! object repeats a member name the last one wins.
//!
//! Build: as an rlib by `guests/rust/build.sh`; test natively with
//! `rustc --edition 2021 --test jsonscan.rs -o /tmp/jsonscan && /tmp/jsonscan`.

use std::fmt;

/// The deepest nesting accepted, as in encoding/json.
pub const MAX_DEPTH: usize = 10000;

/// Why [`field`] refused a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Valid JSON that is not an object.
    NotObject,
    /// Not valid JSON.
    Syntax,
}

impl Error {
    /// The message, as the Go guests word it.
    pub fn message(self) -> &'static str {
        match self {
            Error::NotObject => "value is not a JSON object",
            Error::Syntax => "value is not valid JSON",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// Reports whether `doc` is one valid JSON value, optionally surrounded by
/// white space.
pub fn valid(doc: &[u8]) -> bool {
    scan(doc, b"", false).is_some()
}

/// Checks that `doc` is a valid JSON object (optionally surrounded by white
/// space) and returns the raw text of the value of its top-level member
/// called `name`, without surrounding white space; `None` when there is no
/// such member. Members of nested objects and text inside strings never
/// match. If the name appears more than once, the last value is returned.
pub fn field<'a>(doc: &'a [u8], name: &str) -> Result<Option<&'a [u8]>, Error> {
    match scan(doc, name.as_bytes(), true) {
        None => Err(Error::Syntax),
        Some(s) if !s.object => Err(Error::NotObject),
        Some(s) => Ok(s.value),
    }
}

/// Reports whether `tok` is exactly one JSON number, with no surrounding
/// white space.
pub fn is_number(tok: &[u8]) -> bool {
    skip_number(tok, 0) == Some(tok.len())
}

/// Trims JSON white space from `doc` and returns what is left if it is one
/// JSON number.
pub fn number(doc: &[u8]) -> Option<&[u8]> {
    let start = ws(doc, 0);
    let end = skip_number(doc, start)?;
    if ws(doc, end) != doc.len() {
        return None;
    }
    Some(&doc[start..end])
}

/// The value of `tok`, one JSON number, as an `f64`; `None` when it is
/// outside the `f64` range (Go's `strconv.ParseFloat` reports `ErrRange`).
/// Integers of up to 15 digits are converted directly, exactly.
pub fn float(tok: &[u8]) -> Option<f64> {
    let digits = tok.strip_prefix(b"-").unwrap_or(tok);
    if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
        let v = digits.iter().fold(0i64, |v, &c| v * 10 + (c - b'0') as i64) as f64;
        return Some(if digits.len() != tok.len() { -v } else { v });
    }
    // A JSON number is valid Rust float syntax.
    let v: f64 = std::str::from_utf8(tok).ok()?.parse().ok()?;
    if v.is_infinite() {
        return None;
    }
    Some(v)
}

/// What [`scan`] found.
struct Scan<'a> {
    value: Option<&'a [u8]>,
    object: bool,
}

/// Validates `doc` as one JSON value (with optional surrounding white
/// space); `None` if it is not valid. With `matching` set it also returns
/// the raw value of the last top-level member called `name` when `doc` is
/// an object.
///
/// It is one state machine with an explicit stack, rather than a recursive
/// descent, so that deep nesting cannot exhaust the Wasm stack.
fn scan<'a>(doc: &'a [u8], name: &[u8], matching: bool) -> Option<Scan<'a>> {
    #[derive(Clone, Copy)]
    enum State {
        Value,
        After,
        Member,
    }
    let mut stack = Stack::new(); // b'{' or b'[' per open container
    let n = doc.len();
    let mut i = ws(doc, 0);
    let object = i < n && doc[i] == b'{';
    let mut value: Option<&[u8]> = None;
    let mut val_start = 0;
    let mut is_match = false;
    let mut state = State::Value;
    loop {
        match state {
            State::Value => {
                if i >= n {
                    return None;
                }
                let c = doc[i];
                match c {
                    b'{' | b'[' => {
                        if stack.len() >= MAX_DEPTH {
                            return None;
                        }
                        stack.push(c);
                        i = ws(doc, i + 1);
                        if i >= n {
                            return None;
                        }
                        if doc[i] == c + 2 {
                            // '}' or ']'
                            stack.pop();
                            i += 1;
                            state = State::After;
                        } else if c == b'{' {
                            state = State::Member;
                        }
                        continue;
                    }
                    b'"' => i = skip_string(doc, i + 1)?.0,
                    b't' => i = literal(doc, i, b"true")?,
                    b'f' => i = literal(doc, i, b"false")?,
                    b'n' => i = literal(doc, i, b"null")?,
                    _ => i = skip_number(doc, i)?,
                }
                state = State::After;
            }
            State::After => {
                if is_match && stack.len() == 1 {
                    value = Some(&doc[val_start..i]);
                    is_match = false;
                }
                i = ws(doc, i);
                let top = match stack.last() {
                    None => return if i == n { Some(Scan { value, object }) } else { None },
                    Some(&t) => t,
                };
                if i >= n {
                    return None;
                }
                if doc[i] == b',' {
                    i = ws(doc, i + 1);
                    state = if top == b'{' { State::Member } else { State::Value };
                } else if doc[i] == top + 2 {
                    stack.pop();
                    i += 1;
                } else {
                    return None;
                }
            }
            State::Member => {
                if i >= n || doc[i] != b'"' {
                    return None;
                }
                let start = i + 1;
                let (end, escaped) = skip_string(doc, start)?;
                let key = &doc[start..end - 1];
                i = ws(doc, end);
                if i >= n || doc[i] != b':' {
                    return None;
                }
                i = ws(doc, i + 1);
                if matching && stack.len() == 1 && key_equals(key, escaped, name) {
                    val_start = i;
                    is_match = true;
                }
                state = State::Value;
            }
        }
    }
}

/// The stack of open containers: the first 64 levels live on the call
/// stack, so that ordinary documents are scanned without allocating.
struct Stack {
    small: [u8; 64],
    len: usize,
    big: Vec<u8>,
}

impl Stack {
    fn new() -> Stack {
        Stack { small: [0; 64], len: 0, big: Vec::new() }
    }

    #[inline]
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn push(&mut self, c: u8) {
        if self.len < self.small.len() {
            self.small[self.len] = c;
        } else {
            self.big.push(c);
        }
        self.len += 1;
    }

    #[inline]
    fn pop(&mut self) {
        self.len -= 1;
        if self.len >= self.small.len() {
            self.big.pop();
        }
    }

    #[inline]
    fn last(&self) -> Option<&u8> {
        match self.len {
            0 => None,
            n if n <= self.small.len() => Some(&self.small[n - 1]),
            _ => self.big.last(),
        }
    }
}

/// Checks for the literal `lit` at `i` and returns the index after it.
#[inline]
fn literal(doc: &[u8], i: usize, lit: &[u8]) -> Option<usize> {
    if doc.get(i..i + lit.len())? == lit {
        Some(i + lit.len())
    } else {
        None
    }
}

/// The index of the first non-white-space byte at or after `i`.
#[inline]
fn ws(doc: &[u8], mut i: usize) -> usize {
    while i < doc.len() && matches!(doc[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Skips the contents of a string that starts at `i` (just after the
/// opening quote) and returns the index after the closing quote and whether
/// the string holds escapes; `None` if the string is not valid.
fn skip_string(doc: &[u8], mut i: usize) -> Option<(usize, bool)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const QUOTES: u64 = b'"' as u64 * ONES;
    const SLASHES: u64 = b'\\' as u64 * ONES;
    let mut escaped = false;
    loop {
        // Eight bytes at a time to the first '"', '\\' or control byte
        // (the host's interruption check at every loop iteration costs more
        // than a byte's work): (x - 0x01..) & !x & 0x80.. marks zero bytes
        // (exactly, up to the first one), (x - 0x20..) & !x & 0x80.. bytes
        // below 0x20.
        while doc.len() - i >= 8 {
            let x = u64::from_le_bytes(doc[i..i + 8].try_into().unwrap());
            let (q, s) = (x ^ QUOTES, x ^ SLASHES);
            let m = (q.wrapping_sub(ONES) & !q) | (s.wrapping_sub(ONES) & !s) | (x.wrapping_sub(0x20 * ONES) & !x);
            if m & HIGH != 0 {
                i += (m & HIGH).trailing_zeros() as usize / 8;
                break;
            }
            i += 8;
        }
        let c = *doc.get(i)?;
        match c {
            b'"' => return Some((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                match *doc.get(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
                    b'u' => {
                        if !doc.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        i += 6;
                    }
                    _ => return None,
                }
            }
            0..=0x1f => return None,
            _ => i += 1,
        }
    }
}

/// Skips a number at `i` and returns the index after it.
fn skip_number(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match *b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(i),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        let j = digits(i + 1);
        if j == i + 1 {
            return None;
        }
        i = j;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let j = digits(i);
        if j == i {
            return None;
        }
        i = j;
    }
    Some(i)
}

fn hex4(b: &[u8]) -> u32 {
    b[..4].iter().fold(0, |r, &c| r << 4 | (c as char).to_digit(16).unwrap_or(0))
}

/// Reports whether the raw contents of a (valid) string equal `name` once
/// unescaped. Names without escapes are compared directly.
fn key_equals(raw: &[u8], escaped: bool, name: &[u8]) -> bool {
    if !escaped {
        return raw == name;
    }
    let mut buf = Vec::with_capacity(raw.len());
    unescape(&mut buf, raw);
    buf == name
}

/// Appends the unescaped contents of a valid JSON string (without its
/// quotes) to `dst`. Lone surrogates become U+FFFD, as in encoding/json.
pub fn unescape(dst: &mut Vec<u8>, raw: &[u8]) {
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' {
            dst.push(c);
            i += 1;
            continue;
        }
        i += 1;
        let e = raw[i];
        i += 1;
        let ch = match e {
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let r = hex4(&raw[i..]);
                i += 4;
                if (0xd800..0xe000).contains(&r) {
                    let mut dec = None;
                    if r < 0xdc00 && i + 6 <= raw.len() && raw[i] == b'\\' && raw[i + 1] == b'u' {
                        let r2 = hex4(&raw[i + 2..]);
                        if (0xdc00..0xe000).contains(&r2) {
                            dec = char::from_u32(0x10000 + ((r - 0xd800) << 10) + (r2 - 0xdc00));
                        }
                    }
                    match dec {
                        Some(ch) => {
                            i += 6;
                            ch
                        }
                        None => '\u{fffd}',
                    }
                } else {
                    char::from_u32(r).unwrap_or('\u{fffd}')
                }
            }
            other => other as char, // '"', '\\', '/'
        };
        let mut tmp = [0u8; 4];
        dst.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_documents() {
        for doc in
            ["0", "-0", "1.5e3", " {} ", "[]", "\"a\\u00e9\\n\"", "{\"a\":[1,{\"b\":null}],\"c\":true}", "\"\u{ff}\""]
        {
            assert!(valid(doc.as_bytes()), "{}", doc);
        }
        assert!(valid(b"\"\xff\""), "invalid UTF-8 inside strings is accepted");
        for doc in [
            "",
            " ",
            "01",
            "1.",
            "-",
            "+1",
            "{",
            "{\"a\"}",
            "{\"a\":1,}",
            "[1,]",
            "tru",
            "\"\t\"",
            "\"\\x\"",
            "1 2",
            "nul",
        ] {
            assert!(!valid(doc.as_bytes()), "{}", doc);
        }
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(!valid(deep.as_bytes()));
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(valid(ok.as_bytes()));
    }

    #[test]
    fn fields() {
        let f = |doc: &str, name: &str| {
            field(doc.as_bytes(), name).map(|v| v.map(|v| std::str::from_utf8(v).unwrap().to_owned()))
        };
        assert_eq!(f("{\"amount\": 250 , \"x\":1}", "amount"), Ok(Some("250".into())));
        assert_eq!(f("{\"meta\":{\"amount\":1000},\"amount\":100}", "amount"), Ok(Some("100".into())));
        assert_eq!(f("{\"meta\":{\"amount\":1000}}", "amount"), Ok(None));
        assert_eq!(f("{\"a\":1,\"a\":[2]}", "a"), Ok(Some("[2]".into())));
        assert_eq!(f("{\"\\u0061mount\":5}", "amount"), Ok(Some("5".into())));
        assert_eq!(f("{\"s\":\"amount\"}", "amount"), Ok(None));
        assert_eq!(f("[1]", "a"), Err(Error::NotObject));
        assert_eq!(f("{", "a"), Err(Error::Syntax));
        assert_eq!(f("", "a"), Err(Error::Syntax));
    }

    #[test]
    fn numbers() {
        assert_eq!(number(b" 42 "), Some(&b"42"[..]));
        assert_eq!(number(b"4 2"), None);
        assert!(is_number(b"-1e3") && !is_number(b" 1"));
        assert_eq!(float(b"-0").map(|f| f.to_bits()), Some((-0.0f64).to_bits()));
        assert_eq!(float(b"1e400"), None);
        assert_eq!(float(b"1e-400"), Some(0.0));
        assert_eq!(float(b"123456789012345678"), Some(123456789012345678.0));
        assert_eq!(float(b"3.5"), Some(3.5));
    }

    #[test]
    fn long_strings() {
        for n in 0..40 {
            let body = "x".repeat(n);
            assert!(valid(format!("\"{}\"", body).as_bytes()));
            assert!(valid(format!("\"{}\\n{}\\u00e9\"", body, body).as_bytes()));
            assert!(!valid(format!("\"{}\t{}\"", body, body).as_bytes()));
            assert!(!valid(format!("\"{}", body).as_bytes()));
            let doc = format!("{{\"{}\":1,\"amount\":\"{}\\\"amount\"}}", body, body);
            assert_eq!(field(doc.as_bytes(), "amount").unwrap().unwrap().len(), n + 10);
        }
    }

    #[test]
    fn unescapes() {
        let mut b = Vec::new();
        unescape(&mut b, br#"a\n\u00e9\ud83d\ude00\ud800x\/"#);
        assert_eq!(String::from_utf8(b).unwrap(), "a\né😀\u{fffd}x/");
    }
}
