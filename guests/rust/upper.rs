//! Upper is an Eddy process function that upper-cases record values.
//!
//! ASCII values (the common case) are upper-cased eight bytes at a time into
//! one buffer reused for every record (the SDK encodes each result before
//! the next call), with no allocation. A value with non-ASCII bytes takes a
//! slow path that maps every character to its single-character upper case,
//! as Go's `unicode.ToUpper` does: "straße" → "STRAßE", since ß has no
//! one-character upper case. Invalid UTF-8 bytes are kept as they are. A
//! null value stays null.
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib upper.rs -o upper.wasm

use eddy::{Map, Record, Result};

/// The handler: its buffer holds the output value, reused for every record.
#[derive(Default)]
struct Upper {
    buf: Vec<u8>,
}

impl Map for Upper {
    fn map<'a>(&'a mut self, mut r: Record<'a>) -> Result<Record<'a>> {
        if let Some(s) = r.value {
            self.buf.clear();
            if !upper_ascii(&mut self.buf, s) {
                self.buf.clear();
                upper_slow(&mut self.buf, s);
            }
            r.value = Some(&self.buf);
        }
        Ok(r)
    }
}

const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
const ONES: u64 = 0x0101_0101_0101_0101;

/// Upper-cases eight ASCII bytes held in `x`. For bytes below 0x80, adding
/// 0x80-'a' sets the high bit of those >= 'a' and adding 0x80-'z'-1 that of
/// those > 'z', so the difference marks 'a'..='z'; 0x20 is the case bit.
#[inline]
fn upper8(x: u64) -> u64 {
    let lower = (x + (0x80 - b'a' as u64) * ONES) & !(x + (0x80 - b'z' as u64 - 1) * ONES) & HIGH_BITS;
    x ^ (lower >> 2)
}

#[inline]
fn word(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().unwrap())
}

/// Appends the upper-case form of `s` to the empty `d` and reports true, or
/// reports false if `s` is not all ASCII (`d` then holds garbage).
///
/// The host interrupts long calls by checking a flag at every loop
/// iteration, which costs more than the work of a short iteration, so `s`
/// is read 32 and then 8 bytes at a time, with one branch per block, and the
/// last bytes are done as one overlapping word.
fn upper_ascii(d: &mut Vec<u8>, s: &[u8]) -> bool {
    let n = s.len();
    d.resize(n, 0);
    let mut src = s.chunks_exact(32);
    let mut dst = d.chunks_exact_mut(32);
    for (i, o) in (&mut src).zip(&mut dst) {
        let (x0, x1, x2, x3) = (word(&i[0..]), word(&i[8..]), word(&i[16..]), word(&i[24..]));
        if (x0 | x1 | x2 | x3) & HIGH_BITS != 0 {
            return false;
        }
        o[0..8].copy_from_slice(&upper8(x0).to_le_bytes());
        o[8..16].copy_from_slice(&upper8(x1).to_le_bytes());
        o[16..24].copy_from_slice(&upper8(x2).to_le_bytes());
        o[24..32].copy_from_slice(&upper8(x3).to_le_bytes());
    }
    let done = n - src.remainder().len();
    let mut i = done;
    while n - i >= 8 {
        let x = word(&s[i..]);
        if x & HIGH_BITS != 0 {
            return false;
        }
        d[i..i + 8].copy_from_slice(&upper8(x).to_le_bytes());
        i += 8;
    }
    if i == n {
        return true;
    }
    if n >= 8 {
        // Fewer than 8 bytes left: redo the last 8, which overlap bytes
        // already done (reading s, so doing them twice is harmless).
        let x = word(&s[n - 8..]);
        if x & HIGH_BITS != 0 {
            return false;
        }
        d[n - 8..].copy_from_slice(&upper8(x).to_le_bytes());
        return true;
    }
    for (o, &c) in d[i..].iter_mut().zip(&s[i..]) {
        if c >= 0x80 {
            return false;
        }
        *o = c.to_ascii_uppercase();
    }
    true
}

/// Appends the upper-case form of any `s`, character by character.
fn upper_slow(d: &mut Vec<u8>, s: &[u8]) {
    let mut rest = s;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(v) => (v, 0),
            Err(e) => {
                let n = e.valid_up_to();
                // Safety: from_utf8 checked the first n bytes.
                let v = unsafe { std::str::from_utf8_unchecked(&rest[..n]) };
                (v, e.error_len().unwrap_or(rest.len() - n))
            }
        };
        for c in valid.chars() {
            let mut up = c.to_uppercase();
            let u = match (up.next(), up.next()) {
                (Some(u), None) => u,
                _ => c, // no single-character upper case (ß): keep it
            };
            let mut tmp = [0u8; 4];
            d.extend_from_slice(u.encode_utf8(&mut tmp).as_bytes());
        }
        let n = valid.len();
        d.extend_from_slice(&rest[n..n + bad]); // keep invalid bytes
        rest = &rest[n + bad..];
    }
}

eddy::export! {
    name: "upper",
    version: "1.0.0",
    map: Upper::default(),
}

#[cfg(test)]
mod tests {
    use super::*;
    use eddy::Headers;

    fn up(s: &[u8]) -> Vec<u8> {
        let mut g = eddy_guest();
        let out = g.process(&[Record::new(None, Some(s))]).unwrap();
        out[0].as_ref().unwrap()[0].value.clone().unwrap()
    }

    #[test]
    fn upper_cases() {
        assert_eq!(up(b"the quick brown fox jumps over the lazy dog"), b"THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG");
        assert_eq!(up(b"az{`@[AZ09"), b"AZ{`@[AZ09");
        assert_eq!(up("straße café".as_bytes()), "STRAßE CAFÉ".as_bytes());
        assert_eq!(up("àáâãäåæçèéêëìíîïðñòóôõö÷øùúûüýþÿ".as_bytes()), "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ÷ØÙÚÛÜÝÞŸ".as_bytes());
        assert_eq!(up(b"a\xffb\xe2\x82"), b"A\xffB\xe2\x82");
        assert_eq!(up(b""), b"");
        let long: Vec<u8> = (0..200u8).map(|i| b'a' + i % 26).collect();
        let want: Vec<u8> = long.iter().map(u8::to_ascii_uppercase).collect();
        for n in 0..long.len() {
            assert_eq!(up(&long[..n]), &want[..n], "{}", n);
        }
        let mut mixed = long.clone();
        mixed[150] = 0xc3;
        mixed[151] = 0xa9;
        assert_eq!(&up(&mixed)[148..153], b"ST\xc3\x89W");
    }

    #[test]
    fn null_value_and_headers() {
        let mut g = eddy_guest();
        let h = [eddy::Header { name: "h", value: Some(b"v") }];
        let r = Record { key: Some(b"k"), value: None, timestamp: 7, headers: Headers::new(&h) };
        let out = g.process(&[r]).unwrap();
        let o = &out[0].as_ref().unwrap()[0];
        assert_eq!((o.key.as_deref(), o.value.as_deref(), o.timestamp), (Some(&b"k"[..]), None, 7));
        assert_eq!(o.headers, vec![("h".to_owned(), Some(b"v".to_vec()))]);
    }
}
