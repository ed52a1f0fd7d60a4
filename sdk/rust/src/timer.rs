//! Timers (ABI.md section 3, "Timers").
//!
//! A function in a step with keyed state (a `map`, `filter` or `flat_map`
//! step with `state: true`) may set timers for a key: at an event time,
//! which fires when the step's watermark reaches it, or at a processing
//! time, which fires when the node's clock does. A timer that fires is
//! handed to the module's timer handler (the `timer` entry of
//! [`export!`](crate::export), an [`OnTimer`](crate::OnTimer)), which may
//! read and write keyed state, set and delete timers, and emit records.
//! Timers are kept with the step's state: they survive restarts and fire
//! once under `exactly_once`.
//!
//! A key, a domain and a time make one timer: setting it twice keeps one.
//! Timer changes follow the state writes of their call (a call that fails
//! as a whole leaves the timers as they were).
//!
//! ```no_run
//! use eddy::{Record, Result, TimeDomain};
//!
//! /// Moves the key's timer to one second after each of its records.
//! fn touch(r: Record<'_>) -> Result<bool> {
//!     let key = r.key.unwrap_or_default();
//!     eddy::set_timer(key, TimeDomain::EventTime, r.timestamp + 1000)?;
//!     Ok(false)
//! }
//! ```

use crate::error::{Error, Result};
use crate::host;

/// The clock a timer is set on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimeDomain {
    /// Event time (0): the timer fires when the step's watermark reaches
    /// its time.
    EventTime = 0,
    /// Processing time (1): the timer fires when the node's clock reaches
    /// its time.
    ProcessingTime = 1,
}

impl TimeDomain {
    /// The domain numbered `d` in the ABI (0 event, 1 processing).
    pub fn from_i64(d: i64) -> Option<TimeDomain> {
        match d {
            0 => Some(TimeDomain::EventTime),
            1 => Some(TimeDomain::ProcessingTime),
            _ => None,
        }
    }
}

/// A timer that fired: the key it was set for, its time in milliseconds
/// since the Unix epoch (UTC) and its domain. The key is a view into the
/// call's input, valid during the call; copy it (`to_vec`) to keep it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timer<'a> {
    /// The key the timer was set for.
    pub key: &'a [u8],
    /// The timer's time, in ms since the Unix epoch, UTC.
    pub time: i64,
    /// The timer's domain.
    pub domain: TimeDomain,
}

/// What [`current_time`] answers when the time is not known: `i64::MIN`.
pub const NO_TIME: i64 = i64::MIN;

/// Sets a timer for `key` at `at` (ms since the Unix epoch, UTC) in
/// `domain` (host import `eddy.timer_set`). Setting a timer that exists
/// keeps one. A timer at or before the step's current time fires at the
/// next firing of the step's timers.
///
/// It fails with [`Error::NO_STATE`] (REJECTED) when the step has no
/// timers (it has no state), and with [`Error::TIMER_REFUSED`] (STATE)
/// when the host refused the timer: a key or task holding as many timers
/// as the pipeline allows, a key over 16 KiB, or a storage failure. For a
/// limit the host then fails the call whatever the function answers, and
/// the record that set the timer goes to the dead-letter topic.
pub fn set_timer(key: &[u8], domain: TimeDomain, at: i64) -> Result<()> {
    match host::timer_set(key, domain as i32, at) {
        0 => Ok(()),
        -2 => Err(Error::NO_STATE),
        _ => Err(Error::TIMER_REFUSED),
    }
}

/// Deletes the timer for `key` at `at` in `domain` (host import
/// `eddy.timer_delete`); deleting one that does not exist is not an error.
/// It fails with [`Error::NO_STATE`] when the step has no timers, and
/// with [`Error::STATE_FAILED`] when the host's storage failed.
pub fn delete_timer(key: &[u8], domain: TimeDomain, at: i64) -> Result<()> {
    match host::timer_delete(key, domain as i32, at) {
        0 => Ok(()),
        -2 => Err(Error::NO_STATE),
        _ => Err(Error::STATE_FAILED),
    }
}

/// The step's current time in `domain`, in ms since the Unix epoch (host
/// import `eddy.time_now`): its watermark ([`TimeDomain::EventTime`]) or
/// the node's clock ([`TimeDomain::ProcessingTime`]). It is [`NO_TIME`]
/// (`i64::MIN`) when it is not known: no watermark yet, or a step without
/// timers.
pub fn current_time(domain: TimeDomain) -> i64 {
    host::time_now(domain as i32)
}
