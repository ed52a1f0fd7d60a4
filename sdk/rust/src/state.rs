//! Keyed state (ABI.md section 3).
//!
//! The host scopes the store to the pipeline step and the partition; records
//! with the same Kafka key always reach the same partition, so state keyed by
//! the record key (optionally with a suffix) is consistent. Writes are visible
//! to later reads at once, and are committed atomically with the output of
//! the call.
//!
//! Every function fails with [`Error::NO_STATE`] (code REJECTED) when the
//! step has no state store, and with [`Error::STATE_FAILED`] (code STATE)
//! when the host's storage failed; a handler may return either as is.
//!
//! ```no_run
//! # fn f(key: &[u8]) -> eddy::Result<()> {
//! let mut buf = Vec::new();
//! let n = if eddy::state::get_into(key, &mut buf)? { buf.len() } else { 0 };
//! eddy::state::put(key, n.to_string().as_bytes())?;
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use crate::host;

/// How many times [`get_into`] grows its buffer and asks again before it
/// gives up (the value may change size between two asks only if the host
/// misbehaves).
const MAX_TRIES: usize = 4;

/// Reads the value stored under `key` into `buf`, replacing its contents,
/// and reports whether there is one (`buf` is then empty if not).
///
/// `buf` grows to the size of the value (the host answers with the size when
/// the buffer is too small, and the SDK asks again), so a buffer reused
/// across records makes reads allocation-free once it has grown.
pub fn get_into(key: &[u8], buf: &mut Vec<u8>) -> Result<bool> {
    buf.clear();
    if buf.capacity() < 64 {
        buf.reserve(64);
    }
    for _ in 0..MAX_TRIES {
        let cap = buf.capacity();
        // Safety: the host writes at most `cap` bytes at the pointer.
        let n = unsafe { host::state_get(key, buf.as_mut_ptr(), cap) };
        match n {
            -1 => return Ok(false),
            -2 => return Err(Error::NO_STATE),
            n if n < 0 => return Err(Error::STATE_FAILED),
            n if n as usize <= cap => {
                // Safety: the host wrote n <= cap bytes.
                unsafe { buf.set_len(n as usize) };
                return Ok(true);
            }
            // Too small: nothing was copied. Grow and ask again.
            n => buf.reserve(n as usize + n as usize / 4),
        }
    }
    Err(Error::STATE_FAILED)
}

/// Reads the value stored under `key` into a new vector; `None` if there is
/// none. See [`get_into`] to reuse a buffer.
pub fn get(key: &[u8]) -> Result<Option<Vec<u8>>> {
    let mut buf = Vec::new();
    Ok(if get_into(key, &mut buf)? { Some(buf) } else { None })
}

/// Stores `value` under `key`, replacing any previous value. The host copies
/// both during the call.
pub fn put(key: &[u8], value: &[u8]) -> Result<()> {
    status(host::state_put(key, value))
}

/// Removes `key`; deleting an absent key is not an error.
pub fn delete(key: &[u8]) -> Result<()> {
    status(host::state_delete(key))
}

fn status(rc: i32) -> Result<()> {
    match rc {
        0 => Ok(()),
        -2 => Err(Error::NO_STATE),
        _ => Err(Error::STATE_FAILED),
    }
}
