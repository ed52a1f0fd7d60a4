//! {{.Name}} is an Eddy process function: it upper-cases record values.
//!
//! Build with ./build.sh (writes {{.Name}}.wasm), test natively with
//! ./build.sh test, and try it with the host:
//!
//!     eddy test {{.Name}}.wasm --input records.jsonl

use eddy::{Error, Map, Record, Result};

/// The handler. It lives as long as the Wasm instance, so its buffer is
/// reused for every record.
#[derive(Default)]
struct Upper {
    buf: Vec<u8>,
}

impl Map for Upper {
    fn map<'a>(&'a mut self, mut r: Record<'a>) -> Result<Record<'a>> {
        let value = match r.value {
            Some(v) => v,
            None => return Ok(r), // a null value stays null
        };
        let text = std::str::from_utf8(value).map_err(|_| Error::bad_input("value is not UTF-8"))?;
        self.buf.clear();
        for c in text.chars() {
            // Upper-case characters that have a one-character upper case.
            let mut up = c.to_uppercase();
            let c = match (up.next(), up.next()) {
                (Some(u), None) => u,
                _ => c,
            };
            let mut tmp = [0u8; 4];
            self.buf.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
        }
        r.value = Some(&self.buf);
        Ok(r)
    }
}

eddy::export! {
    name: "{{.Name}}",
    version: "0.1.0",
    map: Upper::default(),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_cases() {
        let mut g = eddy_guest();
        let out = g.process(&[Record::new(Some(b"k"), Some("hi café".as_bytes()))]).unwrap();
        let rec = &out[0].as_ref().unwrap()[0];
        assert_eq!(rec.value.as_deref(), Some("HI CAFÉ".as_bytes()));
        assert_eq!(rec.key.as_deref(), Some(&b"k"[..]));
    }

    #[test]
    fn rejects_invalid_utf8() {
        let mut g = eddy_guest();
        let out = g.process(&[Record::new(None, Some(b"\xff"))]).unwrap();
        assert_eq!(out[0].as_ref().unwrap_err().code, eddy::code::BAD_INPUT);
    }
}
