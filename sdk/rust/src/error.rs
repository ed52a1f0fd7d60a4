//! Per-record errors and the error codes of ABI.md section 7.

use std::borrow::Cow;
use std::fmt;

/// Error codes of ABI.md section 7, as written in result envelopes.
pub mod code {
    /// Success.
    pub const OK: u8 = 0;
    /// The function refused the record.
    pub const REJECTED: u8 = 1;
    /// The record's payload could not be decoded by the function.
    pub const BAD_INPUT: u8 = 2;
    /// The user's code crashed on the record and the SDK caught it. Rust
    /// panics abort on wasm32-unknown-unknown, so this SDK never reports it:
    /// a panic traps and the host isolates the record.
    pub const PANIC: u8 = 3;
    /// The module does not implement the kind.
    pub const UNSUPPORTED: u8 = 4;
    /// The guest could not decode the host's envelope.
    pub const BAD_ENVELOPE: u8 = 5;
    /// A keyed-state host call failed.
    pub const STATE: u8 = 6;
    /// The first function-defined code.
    pub const USER_MIN: u8 = 64;
}

/// Why a handler failed one record (or one item). It never fails the rest of
/// the batch: the host sends the failed input record to the dead-letter topic
/// with the code and reason.
///
/// The reason is a `Cow<'static, str>`, so errors with a fixed reason do not
/// allocate:
///
/// ```
/// use eddy::Error;
///
/// let e = Error::rejected("poison record");
/// assert_eq!((e.code(), e.reason()), (1, "poison record"));
/// let e = Error::with_code(77, format!("unknown currency {}", "XYZ"));
/// assert_eq!(e.code(), 77);
/// let e = Error::with_code(7, "reserved codes become REJECTED");
/// assert_eq!(e.code(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: u8,
    reason: Cow<'static, str>,
}

/// The result type of handlers.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Returned by the state functions when the function has no state store:
    /// it runs in a step that is not stateful, or under `eddy test` without
    /// `--state`. Returned as is, it rejects the record (code REJECTED).
    pub const NO_STATE: Error =
        Error { code: code::REJECTED, reason: Cow::Borrowed("eddy: no keyed state store (the step is not stateful)") };

    /// Returned by the state functions when the host's state storage failed;
    /// returned as is, it fails the record with code STATE.
    pub const STATE_FAILED: Error =
        Error { code: code::STATE, reason: Cow::Borrowed("eddy: keyed state storage failed") };

    /// Returned by [`set_timer`](crate::set_timer) when the host refused
    /// the timer: the key or the task holds as many timers as the pipeline
    /// allows, the key is over 16 KiB, or the host's storage failed. For a
    /// limit the host fails the call whatever the function answers; as an
    /// answer it fails the record with code STATE.
    pub const TIMER_REFUSED: Error =
        Error { code: code::STATE, reason: Cow::Borrowed("eddy: timer refused by the host") };

    /// The function refused the record (code REJECTED, 1).
    pub fn rejected(reason: impl Into<Cow<'static, str>>) -> Error {
        Error { code: code::REJECTED, reason: reason.into() }
    }

    /// The record's payload could not be decoded (code BAD_INPUT, 2), as
    /// opposed to a record the function decoded and refused.
    pub fn bad_input(reason: impl Into<Cow<'static, str>>) -> Error {
        Error { code: code::BAD_INPUT, reason: reason.into() }
    }

    /// A function-defined code, which the host carries to the dead-letter
    /// record. `code` must be in 64–255 (the user range); any other code is
    /// reported as REJECTED.
    pub fn with_code(code: u8, reason: impl Into<Cow<'static, str>>) -> Error {
        let code = if code >= code::USER_MIN { code } else { code::REJECTED };
        Error { code, reason: reason.into() }
    }

    /// An error with any code of ABI.md section 7, for SDK code.
    pub(crate) const fn raw(code: u8, reason: &'static str) -> Error {
        Error { code, reason: Cow::Borrowed(reason) }
    }

    /// An error with any code and an owned reason, for SDK code.
    pub(crate) fn raw_owned(code: u8, reason: String) -> Error {
        Error { code, reason: Cow::Owned(reason) }
    }

    /// The error code (ABI.md section 7).
    pub fn code(&self) -> u8 {
        self.code
    }

    /// The reason, as the dead-letter record carries it.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Error {}

/// A `&'static str` rejects the record with that reason.
impl From<&'static str> for Error {
    fn from(reason: &'static str) -> Error {
        Error::rejected(reason)
    }
}

/// A `String` rejects the record with that reason.
impl From<String> for Error {
    fn from(reason: String) -> Error {
        Error::rejected(reason)
    }
}
