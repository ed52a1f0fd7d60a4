//! Poison is an Eddy process function for dead-letter tests. It upper-cases
//! every value (ASCII and single-character Unicode upper case, as Go's
//! bytes.ToUpper) except three:
//!
//! - "poison" is rejected: code REJECTED, reason "poison record";
//! - "panic" panics with "panic record". Panics abort on
//!   wasm32-unknown-unknown, so the instance traps and the host isolates the
//!   record (the Go guest's SDK catches its panic and reports PANIC);
//! - "code77" fails with the user code 77, reason "code 77 record".
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib poison.rs -o poison.wasm

use eddy::{Error, Map, Record, Result};

#[derive(Default)]
struct Poison {
    buf: String,
}

impl Map for Poison {
    fn map<'a>(&'a mut self, mut r: Record<'a>) -> Result<Record<'a>> {
        match r.value {
            Some(b"poison") => return Err(Error::rejected("poison record")),
            Some(b"panic") => panic!("panic record"),
            Some(b"code77") => return Err(Error::with_code(77, "code 77 record")),
            Some(v) => {
                self.buf.clear();
                to_upper(&mut self.buf, v);
                r.value = Some(self.buf.as_bytes());
            }
            None => {}
        }
        Ok(r)
    }
}

/// Appends the upper case of `s` as Go's bytes.ToUpper does: characters
/// without a single-character upper case are kept, and every invalid UTF-8
/// byte becomes U+FFFD.
fn to_upper(d: &mut String, mut s: &[u8]) {
    while !s.is_empty() {
        let (valid, bad) = match std::str::from_utf8(s) {
            Ok(v) => (v, 0),
            Err(e) => {
                let n = e.valid_up_to();
                // Safety: from_utf8 checked the first n bytes.
                let v = unsafe { std::str::from_utf8_unchecked(&s[..n]) };
                (v, e.error_len().unwrap_or(s.len() - n))
            }
        };
        for c in valid.chars() {
            let mut up = c.to_uppercase();
            d.push(match (up.next(), up.next()) {
                (Some(u), None) => u,
                _ => c,
            });
        }
        d.extend(std::iter::repeat('\u{fffd}').take(bad));
        s = &s[valid.len() + bad..];
    }
}

eddy::export! {
    name: "poison",
    version: "1.0.0",
    map: Poison::default(),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fails_three_values() {
        let mut g = eddy_guest();
        let vals: [&[u8]; 4] = [b"fine", b"poison", b"code77", b"also fine"];
        let recs: Vec<Record> = vals.iter().map(|v| Record::new(None, Some(v))).collect();
        let out = g.process(&recs).unwrap();
        assert_eq!(out[0].as_ref().unwrap()[0].value.as_deref(), Some(&b"FINE"[..]));
        let f = out[1].as_ref().unwrap_err();
        assert_eq!((f.code, f.reason.as_str()), (1, "poison record"));
        let f = out[2].as_ref().unwrap_err();
        assert_eq!((f.code, f.reason.as_str()), (77, "code 77 record"));
        assert_eq!(out[3].as_ref().unwrap()[0].value.as_deref(), Some(&b"ALSO FINE"[..]));
        let mut s = String::new();
        to_upper(&mut s, b"stra\xc3\x9fe a\xe2\x82b\xff");
        assert_eq!(s, "STRAßE A\u{fffd}\u{fffd}B\u{fffd}");
    }

    #[test]
    #[should_panic(expected = "panic record")]
    fn panics() {
        let mut g = eddy_guest();
        let _ = g.process(&[Record::new(None, Some(b"panic"))]);
    }
}
