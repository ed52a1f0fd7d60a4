//! Prefix is a configured Eddy map function: it puts the value of its
//! step's config entry "prefix" in front of each record's value (a null
//! value becomes the prefix alone); without the entry (or with an empty
//! one) it passes records unchanged. It reads the entry once per instance,
//! on its first record.
//!
//! Build (guests/rust/build.sh builds every guest, reproducibly):
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib prefix.rs -o prefix.wasm

use eddy::{Map, Record, Result};

/// The handler: the entry, once read, and the output value, reused for
/// every record.
#[derive(Default)]
struct Prefix {
    /// The entry "prefix" (empty when the step has none); `None` until the
    /// first record reads it.
    prefix: Option<Vec<u8>>,
    buf: Vec<u8>,
}

impl Map for Prefix {
    fn map<'a>(&'a mut self, mut r: Record<'a>) -> Result<Record<'a>> {
        let prefix = self.prefix.get_or_insert_with(|| eddy::config("prefix").unwrap_or_default());
        if prefix.is_empty() {
            return Ok(r);
        }
        self.buf.clear();
        self.buf.extend_from_slice(prefix);
        self.buf.extend_from_slice(r.value.unwrap_or_default());
        r.value = Some(&self.buf);
        Ok(r)
    }
}

eddy::export! {
    name: "prefix",
    version: "1.0.0",
    map: Prefix::default(),
}

#[cfg(test)]
mod tests {
    use super::*;
    use eddy::{Header, Headers};

    fn rec(value: Option<&'static [u8]>, ts: i64) -> Record<'static> {
        Record { timestamp: ts, ..Record::new(None, value) }
    }

    /// The values `p` maps `values` to.
    fn map_values(p: &mut Prefix, values: &[Option<&'static [u8]>]) -> Vec<Option<Vec<u8>>> {
        values.iter().map(|v| p.map(rec(*v, 1)).unwrap().value.map(<[u8]>::to_vec)).collect()
    }

    // The module's handler lives as long as the test program (every
    // eddy_guest() drives the same one), and reads the entry once: this is
    // the only test that calls the module through the envelopes.
    #[test]
    fn prefixes_through_the_envelopes() {
        let mut g = eddy_guest();
        let m = g.manifest().unwrap();
        assert_eq!(
            (m.kinds, m.name.as_deref(), m.version.as_deref()),
            (vec!["process".to_owned()], Some("prefix"), Some("1.0.0"))
        );
        g.set_config(&[("prefix", b"p-"), ("other", b"x")]);
        let h = [Header { name: "h", value: Some(b"1") }];
        let recs = [
            Record { timestamp: 3, headers: Headers::new(&h), ..Record::new(Some(b"k"), Some(b"v")) },
            rec(None, 4),
            rec(Some("ünï".as_bytes()), 5),
        ];
        let out = g.process(&recs).unwrap();
        let got: Vec<_> = out.iter().map(|o| o.as_ref().unwrap()[0].clone()).collect();
        assert_eq!(got[0].key.as_deref(), Some(&b"k"[..]));
        assert_eq!(got[0].value.as_deref(), Some(&b"p-v"[..]));
        assert_eq!(got[0].timestamp, 3);
        assert_eq!(got[0].headers, [("h".to_owned(), Some(b"1".to_vec()))]);
        assert_eq!((got[1].key.as_deref(), got[1].value.as_deref(), got[1].timestamp), (None, Some(&b"p-"[..]), 4));
        assert_eq!(got[2].value.as_deref(), Some("p-ünï".as_bytes()));
        // Read once: a later configuration does not reach this instance.
        g.set_config(&[("prefix", b"q-")]);
        let out = g.process(&[rec(Some(b"w"), 6)]).unwrap();
        assert_eq!(out[0].as_ref().unwrap()[0].value.as_deref(), Some(&b"p-w"[..]));
    }

    #[test]
    fn without_the_entry_records_pass_unchanged() {
        let mut g = eddy_guest();
        g.set_config(&[("other", b"x")]);
        let mut p = Prefix::default();
        assert_eq!(map_values(&mut p, &[Some(b"v"), None, Some(b"")]), [Some(b"v".to_vec()), None, Some(vec![])]);
        // Read once: an entry set later does not reach it.
        g.set_config(&[("prefix", b"p-")]);
        assert_eq!(map_values(&mut p, &[Some(b"v")]), [Some(b"v".to_vec())]);
        let mut p = Prefix::default();
        assert_eq!(
            map_values(&mut p, &[Some(b"v"), None, Some(b"")]),
            [Some(b"p-v".to_vec()), Some(b"p-".to_vec()), Some(b"p-".to_vec())]
        );
    }

    #[test]
    fn an_empty_entry_passes_records_unchanged() {
        let mut g = eddy_guest();
        g.set_config(&[("prefix", b"")]);
        let mut p = Prefix::default();
        assert_eq!(map_values(&mut p, &[Some(b"v"), None]), [Some(b"v".to_vec()), None]);
    }

    #[test]
    fn values_are_bytes() {
        let mut g = eddy_guest();
        let long = vec![b'-'; 5000];
        g.set_config(&[("prefix", &long)]);
        let mut p = Prefix::default();
        let mut want = long.clone();
        want.extend_from_slice(b"\xff\x00");
        assert_eq!(map_values(&mut p, &[Some(b"\xff\x00")]), [Some(want)]);
    }
}
