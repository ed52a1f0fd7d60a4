//! Joiner is an Eddy join function: it combines the left and right values of
//! a key, which must be JSON, into {"left":L,"right":R}, with the values
//! inserted as they are and null for a missing side. A side that is present
//! but not valid JSON (an empty value included) fails the pair with
//! BAD_INPUT; when both sides are missing nothing is emitted.
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib --extern jsonscan=libjsonscan.rlib \
//!         joiner.rs -o joiner.wasm

use eddy::{Error, Join, Result};

/// The handler: its buffer holds the joined value, reused for every pair.
#[derive(Default)]
struct Joiner {
    buf: Vec<u8>,
}

impl Join for Joiner {
    fn join<'a>(
        &'a mut self,
        _key: Option<&'a [u8]>,
        left: Option<&'a [u8]>,
        right: Option<&'a [u8]>,
    ) -> Result<Option<&'a [u8]>> {
        if left.is_none() && right.is_none() {
            return Ok(None);
        }
        if left.map_or(false, |v| !jsonscan::valid(v)) {
            return Err(Error::bad_input("left value is not valid JSON"));
        }
        if right.map_or(false, |v| !jsonscan::valid(v)) {
            return Err(Error::bad_input("right value is not valid JSON"));
        }
        let b = &mut self.buf;
        b.clear();
        b.extend_from_slice(b"{\"left\":");
        b.extend_from_slice(left.unwrap_or(b"null"));
        b.extend_from_slice(b",\"right\":");
        b.extend_from_slice(right.unwrap_or(b"null"));
        b.push(b'}');
        Ok(Some(&self.buf))
    }
}

eddy::export! {
    name: "joiner",
    version: "1.0.0",
    join: Joiner::default(),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins() {
        let mut g = eddy_guest();
        let out = g
            .join(&[
                (Some(b"u1"), Some(br#"{"a":1}"#), Some(b"2")),
                (None, None, Some(b"[]")),
                (None, None, None),
                (None, Some(b""), None),
                (None, Some(b"1"), Some(b"{")),
            ])
            .unwrap();
        assert_eq!(out[0].as_ref().unwrap().as_deref(), Some(&br#"{"left":{"a":1},"right":2}"#[..]));
        assert_eq!(out[1].as_ref().unwrap().as_deref(), Some(&br#"{"left":null,"right":[]}"#[..]));
        assert_eq!(out[2].as_ref().unwrap().as_deref(), None);
        assert_eq!(out[3].as_ref().unwrap_err().reason, "left value is not valid JSON");
        assert_eq!(out[4].as_ref().unwrap_err().reason, "right value is not valid JSON");
    }
}
