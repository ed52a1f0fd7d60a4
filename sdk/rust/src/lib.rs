//! The Rust guest SDK for Eddy: it turns Rust functions into an Eddy
//! function, a WebAssembly module that speaks the guest ABI v1 (`abi/ABI.md`
//! in the Eddy repository). It has no dependencies and builds with rustc
//! 1.63 or later for `wasm32-unknown-unknown`.
//!
//! # Usage
//!
//! A guest is a `cdylib` crate that implements handler traits (or writes
//! plain functions) and names them in one [`export!`]:
//!
//! ```
//! use eddy::{Record, Result};
//!
//! fn shout(mut r: Record<'_>) -> Result<Record<'_>> {
//!     if r.value == Some(b"") {
//!         return Err(eddy::Error::rejected("empty value"));
//!     }
//!     r.value = Some(b"HEY");
//!     Ok(r)
//! }
//!
//! eddy::export! {
//!     name: "shout",
//!     version: "1.0.0",
//!     map: shout,
//! }
//! # fn main() {
//! # let mut g = eddy_guest();
//! # let out = g.process(&[Record::new(None, Some(b"hi"))]).unwrap();
//! # assert_eq!(out[0].as_ref().unwrap()[0].value.as_deref(), Some(&b"HEY"[..]));
//! # }
//! ```
//!
//! Build it for Wasm (the README explains the flags):
//!
//! ```text
//! F="--edition 2021 --target wasm32-unknown-unknown -C opt-level=3 -C panic=abort -C target-feature=+bulk-memory"
//! rustc $F --crate-type rlib --crate-name eddy -o build/libeddy.rlib eddy-sdk/src/lib.rs
//! rustc $F --crate-type cdylib -C lto=fat -C linker=wasm-ld-14 -C strip=symbols \
//!     --extern eddy=build/libeddy.rlib -o shout.wasm shout.rs
//! ```
//!
//! # Kinds
//!
//! | `export!` entry | kind | handler trait |
//! |---|---|---|
//! | `map` | process | [`Map`]: one record in, one out |
//! | `filter` | process | [`Filter`]: keep or drop |
//! | `flat_map` | process | [`FlatMap`]: zero or more records out |
//! | `aggregate` | aggregate | [`Aggregate`]: init, add, merge, result |
//! | `join` | join | [`Join`] |
//! | `key` | key | [`KeyBy`] |
//! | `timestamp` | timestamp | [`Timestamp`] |
//! | `timer` | timer | [`OnTimer`]: timers that fired ([`timer`](mod@timer)) |
//!
//! A module has at most one process entry and one of each other kind; a
//! `timer` entry goes beside the process entry of a stateful step. Each
//! entry's value is an expression that makes the handler; it is evaluated
//! once per instance, on the first call of its kind, and the handler then
//! lives as long as the instance, so it can keep reusable buffers. Plain
//! functions and non-capturing closures with the trait's signature implement
//! the traits of the record kinds.
//!
//! # Errors
//!
//! A handler fails one record, never the batch, by returning an [`Error`]:
//! [`Error::rejected`] (REJECTED), [`Error::bad_input`] (BAD_INPUT) or
//! [`Error::with_code`] (a code of 64–255). A panic aborts on
//! `wasm32-unknown-unknown`: the instance traps, the host discards it and
//! retries the batch in halves until the record that panicked is isolated,
//! and that record fails with the cause `trap`. The SDK logs the panic
//! message at error level first.
//!
//! # Memory and speed
//!
//! Input records are views into the host's input buffer (no copy), the
//! answer is encoded into one output buffer reused for every call, and the
//! SDK's own scratch space is reused too: once warmed up, the per-record
//! path allocates nothing beyond what handlers do.
//!
//! # Host functions
//!
//! [`log()`] and [`log!`] write to the host's log, [`count`] adds to a
//! metric, [`state`] reads and writes keyed state, and [`set_timer`],
//! [`delete_timer`] and [`current_time`] handle timers ([`timer`](mod@timer)),
//! and [`config()`] and [`config_into`] read the step's configuration
//! ([`config`](mod@config)). In native builds they use in-memory stand-ins
//! that [`testing`] inspects and presets.
//!
//! # Concurrency
//!
//! A Wasm instance is single-threaded and the host never calls an instance
//! from two threads, nor re-enters it from a host function: handlers need no
//! locking.

#![warn(missing_docs)]

pub mod msgpack;

mod error;
mod host;
mod record;
#[doc(hidden)]
pub mod rt;
pub mod state;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;
#[cfg(test)]
mod tests;
pub mod timer;

pub use error::{code, Error, Result};
pub use record::{Emitter, Header, HeaderIter, Headers, OwnedRecord, Record, HEADER_OUTPUT};
pub use timer::{current_time, delete_timer, set_timer, TimeDomain, Timer, NO_TIME};

// Declared after the others: with rustc 1.63, a module declared before them
// changes the bytes of guests that do not use it (testdata/rust), one
// declared last does not.
pub mod config;

pub use config::{config, config_into};

/// What the manifest reports in its `sdk` key.
pub const SDK_VERSION: &str = "rust/0.1.0";

/// A process function that maps every record to exactly one record.
///
/// The output may borrow the input record or the handler (a buffer it
/// reuses): the SDK encodes it before the next call. Returning the input
/// record with a new value keeps its key, timestamp and headers.
///
/// ```
/// use eddy::{Map, Record, Result};
///
/// /// Reverses values, in one buffer reused for every record.
/// #[derive(Default)]
/// struct Reverse {
///     buf: Vec<u8>,
/// }
///
/// impl Map for Reverse {
///     fn map<'a>(&'a mut self, mut r: Record<'a>) -> Result<Record<'a>> {
///         if let Some(v) = r.value {
///             self.buf.clear();
///             self.buf.extend(v.iter().rev());
///             r.value = Some(&self.buf);
///         }
///         Ok(r)
///     }
/// }
/// ```
pub trait Map {
    /// Maps one record.
    fn map<'a>(&'a mut self, r: Record<'a>) -> Result<Record<'a>>;
}

impl<F> Map for F
where
    F: for<'a> FnMut(Record<'a>) -> Result<Record<'a>>,
{
    #[inline]
    fn map<'a>(&'a mut self, r: Record<'a>) -> Result<Record<'a>> {
        self(r)
    }
}

/// A process function that keeps (passes on unchanged, headers included) or
/// drops each record.
pub trait Filter {
    /// Reports whether to keep `r`.
    fn keep(&mut self, r: Record<'_>) -> Result<bool>;
}

impl<F> Filter for F
where
    F: for<'a> FnMut(Record<'a>) -> Result<bool>,
{
    #[inline]
    fn keep(&mut self, r: Record<'_>) -> Result<bool> {
        self(r)
    }
}

/// A process function that turns each record into zero or more records,
/// emitted in order.
///
/// ```
/// use eddy::{Emitter, Headers, Record, Result};
///
/// /// One record per comma-separated field of the value.
/// fn fields(r: Record<'_>, out: &mut Emitter<'_>) -> Result<()> {
///     for f in r.value.unwrap_or_default().split(|&c| c == b',') {
///         out.emit(Record { value: Some(f), headers: Headers::NONE, ..r });
///     }
///     Ok(())
/// }
/// ```
pub trait FlatMap {
    /// Emits the records that `r` becomes. If it returns an error, the
    /// records emitted for `r` are discarded and `r` fails.
    fn flat_map(&mut self, r: Record<'_>, out: &mut Emitter<'_>) -> Result<()>;
}

impl<F> FlatMap for F
where
    F: for<'a, 'b, 'c> FnMut(Record<'a>, &'b mut Emitter<'c>) -> Result<()>,
{
    #[inline]
    fn flat_map(&mut self, r: Record<'_>, out: &mut Emitter<'_>) -> Result<()> {
        self(r, out)
    }
}

/// A key extractor (kind `key`): the record's new key, `None` for a null
/// key. It may borrow the record or the handler.
pub trait KeyBy {
    /// Returns the new key of `r`.
    fn key<'a>(&'a mut self, r: Record<'a>) -> Result<Option<&'a [u8]>>;
}

impl<F> KeyBy for F
where
    F: for<'a> FnMut(Record<'a>) -> Result<Option<&'a [u8]>>,
{
    #[inline]
    fn key<'a>(&'a mut self, r: Record<'a>) -> Result<Option<&'a [u8]>> {
        self(r)
    }
}

/// An event-time extractor (kind `timestamp`).
pub trait Timestamp {
    /// Returns the event time of `r`, in milliseconds since the Unix epoch,
    /// UTC.
    fn timestamp(&mut self, r: Record<'_>) -> Result<i64>;
}

impl<F> Timestamp for F
where
    F: for<'a> FnMut(Record<'a>) -> Result<i64>,
{
    #[inline]
    fn timestamp(&mut self, r: Record<'_>) -> Result<i64> {
        self(r)
    }
}

/// A timer function (kind `timer`): called for each timer of the step that
/// fires (see [`timer`](mod@timer)); it may read and write keyed state,
/// set and delete timers, and emit records, which are outputs of the step.
///
/// Records are emitted as in a [`FlatMap`]; a record whose timestamp is 0
/// (as [`Record::new`] makes) or the timer's time gets the timer's time. An
/// error sends the timer to the dead-letter topic and discards the records
/// emitted for it.
///
/// ```
/// use eddy::{Emitter, Record, Result, Timer};
///
/// /// Emits one record per timer, with the timer's key and time.
/// fn remind(t: Timer<'_>, out: &mut Emitter<'_>) -> Result<()> {
///     out.emit(Record::new(Some(t.key), Some(b"due")));
///     Ok(())
/// }
/// ```
pub trait OnTimer {
    /// Handles the timer `t` that fired, emitting the records it becomes.
    fn on_timer(&mut self, t: Timer<'_>, out: &mut Emitter<'_>) -> Result<()>;
}

impl<F> OnTimer for F
where
    F: for<'a, 'b, 'c> FnMut(Timer<'a>, &'b mut Emitter<'c>) -> Result<()>,
{
    #[inline]
    fn on_timer(&mut self, t: Timer<'_>, out: &mut Emitter<'_>) -> Result<()> {
        self(t, out)
    }
}

/// A join function (kind `join`): combines the left and right values of a
/// key. A missing side is `None`; returning `None` emits nothing.
pub trait Join {
    /// Returns the joined value.
    fn join<'a>(
        &'a mut self,
        key: Option<&'a [u8]>,
        left: Option<&'a [u8]>,
        right: Option<&'a [u8]>,
    ) -> Result<Option<&'a [u8]>>;
}

impl<F> Join for F
where
    F: for<'a> FnMut(Option<&'a [u8]>, Option<&'a [u8]>, Option<&'a [u8]>) -> Result<Option<&'a [u8]>>,
{
    #[inline]
    fn join<'a>(
        &'a mut self,
        key: Option<&'a [u8]>,
        left: Option<&'a [u8]>,
        right: Option<&'a [u8]>,
    ) -> Result<Option<&'a [u8]>> {
        self(key, left, right)
    }
}

/// An aggregate function (kind `aggregate`): the host keeps one accumulator
/// per key and window, and folds records into it.
///
/// Accumulators are bytes in the function's own encoding; the host stores
/// them between calls and never looks inside. A new version of a function
/// must read the accumulators of the version it replaces.
///
/// ```
/// use eddy::{Aggregate, Record, Result};
///
/// /// Counts records; the accumulator is a little-endian u64.
/// #[derive(Default)]
/// struct Count {
///     out: Vec<u8>,
/// }
///
/// fn decode(acc: &[u8]) -> Result<u64> {
///     let b: [u8; 8] = acc.try_into().map_err(|_| eddy::Error::rejected("bad accumulator"))?;
///     Ok(u64::from_le_bytes(b))
/// }
///
/// impl Aggregate for Count {
///     fn init(&mut self, acc: &mut Vec<u8>) -> Result<()> {
///         acc.extend_from_slice(&0u64.to_le_bytes());
///         Ok(())
///     }
///     fn add(&mut self, acc: &mut Vec<u8>, _r: Record<'_>) -> Result<()> {
///         let n = decode(acc)? + 1;
///         acc.copy_from_slice(&n.to_le_bytes());
///         Ok(())
///     }
///     fn merge(&mut self, _key: Option<&[u8]>, a: &[u8], b: &[u8], out: &mut Vec<u8>) -> Result<()> {
///         out.extend_from_slice(&(decode(a)? + decode(b)?).to_le_bytes());
///         Ok(())
///     }
///     fn result<'a>(&'a mut self, _key: Option<&'a [u8]>, acc: &'a [u8]) -> Result<Option<&'a [u8]>> {
///         self.out.clear();
///         self.out.extend_from_slice(decode(acc)?.to_string().as_bytes());
///         Ok(Some(&self.out))
///     }
/// }
/// ```
pub trait Aggregate {
    /// Writes the initial accumulator into `acc`, which is empty. The
    /// default leaves it empty.
    fn init(&mut self, acc: &mut Vec<u8>) -> Result<()> {
        let _ = acc;
        Ok(())
    }

    /// Folds `r` into `acc`, in place. `acc` is a scratch copy: if `add`
    /// returns an error the record is reported as not folded and the
    /// accumulator stays as it was before.
    fn add(&mut self, acc: &mut Vec<u8>, r: Record<'_>) -> Result<()>;

    /// Merges the accumulators of two session windows of the same key into
    /// `out`, which is empty; it must be associative. The default fails
    /// with UNSUPPORTED, which fails session windows.
    fn merge(&mut self, key: Option<&[u8]>, a: &[u8], b: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let _ = (key, a, b, out);
        Err(Error::raw(code::UNSUPPORTED, "this aggregate function has no merge"))
    }

    /// Turns an accumulator into the output value; `None` emits nothing.
    /// The default emits the accumulator itself.
    fn result<'a>(&'a mut self, key: Option<&'a [u8]>, acc: &'a [u8]) -> Result<Option<&'a [u8]>> {
        let _ = key;
        Ok(Some(acc))
    }
}

/// The severity of a log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Debug, 0.
    Debug = 0,
    /// Info, 1.
    Info = 1,
    /// Warn, 2.
    Warn = 2,
    /// Error, 3.
    Error = 3,
}

/// Writes `msg` to the host's structured log at `level` (host import
/// `eddy.log`). The host may rate-limit a function's log lines, so do not log
/// per record at Info or above. It does not allocate.
pub fn log(level: Level, msg: &str) {
    host::log(level as i32, msg);
}

/// Formats its arguments as `format!` does and logs the result:
/// `eddy::log!(eddy::Level::Debug, "{} records", n)`.
#[macro_export]
macro_rules! log {
    ($level:expr, $($arg:tt)+) => {
        $crate::log($level, &::std::format!($($arg)+))
    };
}

/// Adds `delta` to the counter called `name`, a metric the host exports
/// (host import `eddy.counter_add`). It is cheap enough to call per record.
pub fn count(name: &str, delta: i64) {
    host::counter_add(name, delta);
}

/// Makes the module an Eddy function: it names the handlers of the kinds the
/// module implements and generates the exports of ABI.md section 2 and the
/// manifest.
///
/// ```text
/// eddy::export! {
///     name: "wordkey",          // optional: the function's name
///     version: "1.0.0",         // optional: the function's version
///     key: first_word,          // any of: map, filter, flat_map (one of
///     timestamp: EventTime::new(), // them), aggregate, join, key, timestamp,
/// }                             // timer
/// ```
///
/// Each handler expression is evaluated once per instance, on the first call
/// of its kind. Use `export!` once per crate, at its root. On wasm32 it
/// defines the `#[no_mangle]` exports; in native builds it defines instead
/// `fn eddy_guest() -> eddy::testing::Guest`, which drives the handlers
/// through the same envelopes in unit tests.
#[macro_export]
macro_rules! export {
    ($($field:ident : $value:expr),+ $(,)?) => {
        #[doc(hidden)]
        pub fn __eddy_call(
            __eddy_e: $crate::rt::Export,
            __eddy_in: &[u8],
            __eddy_out: &mut ::std::vec::Vec<u8>,
        ) -> ::core::result::Result<(), $crate::rt::CallError> {
            if let $crate::rt::Export::Manifest = __eddy_e {
                let mut m = $crate::rt::Manifest::new();
                $( $crate::__eddy_manifest!(m, $field, $value); )+
                m.write(__eddy_out);
                return ::core::result::Result::Ok(());
            }
            $( $crate::__eddy_arm!(__eddy_e, __eddy_in, __eddy_out, $field, $value); )+
            $crate::rt::unsupported(__eddy_e, __eddy_in, __eddy_out)
        }

        #[cfg(target_arch = "wasm32")]
        const _: () = {
            #[no_mangle]
            pub extern "C" fn eddy_abi_v1() {}

            #[no_mangle]
            pub extern "C" fn eddy_alloc(size: u32) -> u32 {
                $crate::rt::alloc(size)
            }

            #[no_mangle]
            pub extern "C" fn eddy_manifest() -> i64 {
                $crate::rt::export($crate::rt::Export::Manifest, 0, 0, __eddy_call)
            }

            $( $crate::__eddy_exports!($field); )+
        };

        /// The native test harness of this module's handlers.
        #[cfg(not(target_arch = "wasm32"))]
        #[allow(dead_code)]
        pub fn eddy_guest() -> $crate::testing::Guest {
            $crate::testing::Guest::new(__eddy_call)
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __eddy_manifest {
    ($m:ident, name, $v:expr) => {
        $m.name = ::core::option::Option::Some($v);
    };
    ($m:ident, version, $v:expr) => {
        $m.version = ::core::option::Option::Some($v);
    };
    ($m:ident, map, $v:expr) => {
        $m.kind($crate::rt::KIND_PROCESS);
    };
    ($m:ident, filter, $v:expr) => {
        $m.kind($crate::rt::KIND_PROCESS);
    };
    ($m:ident, flat_map, $v:expr) => {
        $m.kind($crate::rt::KIND_PROCESS);
    };
    ($m:ident, aggregate, $v:expr) => {
        $m.kind($crate::rt::KIND_AGGREGATE);
    };
    ($m:ident, join, $v:expr) => {
        $m.kind($crate::rt::KIND_JOIN);
    };
    ($m:ident, key, $v:expr) => {
        $m.kind($crate::rt::KIND_KEY);
    };
    ($m:ident, timestamp, $v:expr) => {
        $m.kind($crate::rt::KIND_TIMESTAMP);
    };
    ($m:ident, timer, $v:expr) => {
        $m.kind($crate::rt::KIND_TIMER);
    };
    ($m:ident, $other:ident, $v:expr) => {
        ::core::compile_error!(::core::concat!(
            "eddy::export!: unknown entry `",
            ::core::stringify!($other),
            "` (want name, version, map, filter, flat_map, aggregate, join, key, timestamp or timer)"
        ));
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __eddy_arm {
    ($e:ident, $in:ident, $out:ident, name, $v:expr) => {};
    ($e:ident, $in:ident, $out:ident, version, $v:expr) => {};
    ($e:ident, $in:ident, $out:ident, map, $v:expr) => {
        $crate::__eddy_arm!(@one $e, $in, $out, Process, map, $v);
    };
    ($e:ident, $in:ident, $out:ident, filter, $v:expr) => {
        $crate::__eddy_arm!(@one $e, $in, $out, Process, filter, $v);
    };
    ($e:ident, $in:ident, $out:ident, flat_map, $v:expr) => {
        $crate::__eddy_arm!(@one $e, $in, $out, Process, flat_map, $v);
    };
    ($e:ident, $in:ident, $out:ident, join, $v:expr) => {
        $crate::__eddy_arm!(@one $e, $in, $out, Join, join, $v);
    };
    ($e:ident, $in:ident, $out:ident, key, $v:expr) => {
        $crate::__eddy_arm!(@one $e, $in, $out, Key, key, $v);
    };
    ($e:ident, $in:ident, $out:ident, timestamp, $v:expr) => {
        $crate::__eddy_arm!(@one $e, $in, $out, Timestamp, timestamp, $v);
    };
    ($e:ident, $in:ident, $out:ident, timer, $v:expr) => {
        $crate::__eddy_arm!(@one $e, $in, $out, Timer, timer, $v);
    };
    ($e:ident, $in:ident, $out:ident, aggregate, $v:expr) => {
        if $e.is_aggregate() {
            static mut SLOT: $crate::rt::Slot = $crate::rt::Slot::new();
            // Safety: an instance is single-threaded and never re-entered.
            let h = unsafe { (*::core::ptr::addr_of_mut!(SLOT)).get(|| $v) };
            return $crate::rt::aggregate(h, $e, $in, $out);
        }
    };
    ($e:ident, $in:ident, $out:ident, $other:ident, $v:expr) => {};
    (@one $e:ident, $in:ident, $out:ident, $export:ident, $run:ident, $v:expr) => {
        if let $crate::rt::Export::$export = $e {
            static mut SLOT: $crate::rt::Slot = $crate::rt::Slot::new();
            // Safety: an instance is single-threaded and never re-entered.
            let h = unsafe { (*::core::ptr::addr_of_mut!(SLOT)).get(|| $v) };
            return $crate::rt::$run(h, $in, $out);
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __eddy_exports {
    (name) => {};
    (version) => {};
    (map) => { $crate::__eddy_exports!(@fn eddy_process, Process); };
    (filter) => { $crate::__eddy_exports!(@fn eddy_process, Process); };
    (flat_map) => { $crate::__eddy_exports!(@fn eddy_process, Process); };
    (join) => { $crate::__eddy_exports!(@fn eddy_join, Join); };
    (key) => { $crate::__eddy_exports!(@fn eddy_key, Key); };
    (timestamp) => { $crate::__eddy_exports!(@fn eddy_timestamp, Timestamp); };
    (timer) => { $crate::__eddy_exports!(@fn eddy_timer, Timer); };
    (aggregate) => {
        $crate::__eddy_exports!(@fn eddy_agg_init, AggInit);
        $crate::__eddy_exports!(@fn eddy_agg_add, AggAdd);
        $crate::__eddy_exports!(@fn eddy_agg_merge, AggMerge);
        $crate::__eddy_exports!(@fn eddy_agg_result, AggResult);
    };
    ($other:ident) => {};
    (@fn $name:ident, $export:ident) => {
        #[no_mangle]
        pub extern "C" fn $name(ptr: u32, len: u32) -> i64 {
            $crate::rt::export($crate::rt::Export::$export, ptr, len, __eddy_call)
        }
    };
}
