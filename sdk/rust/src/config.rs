//! Configuration (ABI.md section 3, "Configuration").
//!
//! A step of the pipeline file may give its function configuration
//! entries (`config:` in the pipeline file): values written in the file,
//! or secrets that the node reads from its environment or from files when
//! it starts. Each entry has a name (UTF-8) and a value (bytes, at most
//! 64 KiB). Any handler of any kind may read them, at any time.
//!
//! Reading an entry is a host call (host import `eddy.config_get`, linked
//! only into modules that call [`config`] or [`config_into`]). The entries
//! do not change while an instance lives (a node started with another
//! configuration makes new instances), so a handler may read an entry once
//! and keep it: the handler expression of [`export!`](crate::export) runs
//! once per instance, or a handler reads on its first record.
//!
//! ```no_run
//! use eddy::{Map, Record, Result};
//!
//! /// Puts the step's config entry "prefix" before each value.
//! struct Prefix {
//!     prefix: Vec<u8>,
//!     buf: Vec<u8>,
//! }
//!
//! impl Map for Prefix {
//!     fn map<'a>(&'a mut self, mut r: Record<'a>) -> Result<Record<'a>> {
//!         self.buf.clear();
//!         self.buf.extend_from_slice(&self.prefix);
//!         self.buf.extend_from_slice(r.value.unwrap_or_default());
//!         r.value = Some(&self.buf);
//!         Ok(r)
//!     }
//! }
//!
//! eddy::export! {
//!     map: Prefix { prefix: eddy::config("prefix").unwrap_or_default(), buf: Vec::new() },
//! }
//! # fn main() {}
//! ```
//!
//! The host never logs a value; a function that logs a secret shows it.

use crate::host;

/// How many times [`config_into`] grows its buffer and asks again before it
/// gives up (a value changes size between two asks only if the host
/// misbehaves).
const MAX_TRIES: usize = 4;

/// Reads the value of the step's config entry `name` into `buf`, replacing
/// its contents, and reports whether the step has the entry (`buf` is then
/// empty if not). An entry with an empty value is present: `true` and an
/// empty `buf`.
///
/// `buf` grows to the size of the value (the host answers with the size
/// when the buffer is too small, and the SDK asks again).
pub fn config_into(name: &str, buf: &mut Vec<u8>) -> bool {
    buf.clear();
    if buf.capacity() < 256 {
        buf.reserve(256);
    }
    for _ in 0..MAX_TRIES {
        let cap = buf.capacity();
        // Safety: the host writes at most `cap` bytes at the pointer.
        let n = unsafe { host::config_get(name, buf.as_mut_ptr(), cap) };
        match n {
            n if n < 0 => return false,
            n if n as usize <= cap => {
                // Safety: the host wrote n <= cap bytes.
                unsafe { buf.set_len(n as usize) };
                return true;
            }
            // Too small: nothing was copied. Grow and ask again.
            n => buf.reserve(n as usize),
        }
    }
    buf.clear();
    false
}

/// The value of the step's config entry `name`, a copy the function may
/// keep; `None` when the step has no entry of that name (or no
/// configuration). See [`config_into`] to reuse a buffer, and
/// `String::from_utf8` for a text value.
///
/// ```no_run
/// let url = eddy::config("url").unwrap_or_else(|| b"http://localhost".to_vec());
/// ```
pub fn config(name: &str) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    if config_into(name, &mut buf) {
        Some(buf)
    } else {
        None
    }
}
