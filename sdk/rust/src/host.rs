//! Host functions of ABI.md section 3, imported from module `eddy`, and
//! their in-memory stand-ins for native builds (unit tests with `rustc
//! --test`), which the [`crate::testing`] module inspects.
//!
//! On wasm32 an import is only linked if it is called, so a guest imports
//! only what it uses.

#[cfg(target_arch = "wasm32")]
mod imp {
    #[link(wasm_import_module = "eddy")]
    extern "C" {
        #[link_name = "log"]
        fn import_log(level: i32, ptr: *const u8, len: u32);
        #[link_name = "error"]
        fn import_error(code: i32, ptr: *const u8, len: u32);
        #[link_name = "state_get"]
        fn import_state_get(kptr: *const u8, klen: u32, vptr: *mut u8, vcap: u32) -> i32;
        #[link_name = "state_put"]
        fn import_state_put(kptr: *const u8, klen: u32, vptr: *const u8, vlen: u32) -> i32;
        #[link_name = "state_delete"]
        fn import_state_delete(kptr: *const u8, klen: u32) -> i32;
        #[link_name = "counter_add"]
        fn import_counter_add(nptr: *const u8, nlen: u32, delta: i64);
        #[link_name = "timer_set"]
        fn import_timer_set(kptr: *const u8, klen: u32, domain: i32, time: i64) -> i32;
        #[link_name = "timer_delete"]
        fn import_timer_delete(kptr: *const u8, klen: u32, domain: i32, time: i64) -> i32;
        #[link_name = "time_now"]
        fn import_time_now(domain: i32) -> i64;
        #[link_name = "config_get"]
        fn import_config_get(nptr: *const u8, nlen: u32, vptr: *mut u8, vcap: u32) -> i32;
    }

    pub fn log(level: i32, msg: &str) {
        unsafe { import_log(level, msg.as_ptr(), msg.len() as u32) }
    }

    pub fn error(code: i32, msg: &str) {
        unsafe { import_error(code, msg.as_ptr(), msg.len() as u32) }
    }

    /// Safety: `vptr` must be writable for `vcap` bytes.
    pub unsafe fn state_get(key: &[u8], vptr: *mut u8, vcap: usize) -> i32 {
        import_state_get(key.as_ptr(), key.len() as u32, vptr, vcap as u32)
    }

    pub fn state_put(key: &[u8], value: &[u8]) -> i32 {
        unsafe { import_state_put(key.as_ptr(), key.len() as u32, value.as_ptr(), value.len() as u32) }
    }

    pub fn state_delete(key: &[u8]) -> i32 {
        unsafe { import_state_delete(key.as_ptr(), key.len() as u32) }
    }

    pub fn counter_add(name: &str, delta: i64) {
        unsafe { import_counter_add(name.as_ptr(), name.len() as u32, delta) }
    }

    pub fn timer_set(key: &[u8], domain: i32, time: i64) -> i32 {
        unsafe { import_timer_set(key.as_ptr(), key.len() as u32, domain, time) }
    }

    pub fn timer_delete(key: &[u8], domain: i32, time: i64) -> i32 {
        unsafe { import_timer_delete(key.as_ptr(), key.len() as u32, domain, time) }
    }

    pub fn time_now(domain: i32) -> i64 {
        unsafe { import_time_now(domain) }
    }

    /// Safety: `vptr` must be writable for `vcap` bytes.
    pub unsafe fn config_get(name: &str, vptr: *mut u8, vcap: usize) -> i32 {
        import_config_get(name.as_ptr(), name.len() as u32, vptr, vcap as u32)
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod imp {
    use std::cell::RefCell;
    use std::collections::{BTreeMap, BTreeSet};

    /// What the stand-in state store (and timer service) does.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum StateMode {
        /// No state store: every state and timer call answers -2 and
        /// `time_now` the minimum i64 (the default, as under `eddy test`
        /// without `--state`).
        Absent,
        /// An in-memory store and timer service.
        Memory,
        /// Every state and timer call answers -3, a host storage error.
        Failing,
    }

    pub struct Native {
        pub mode: StateMode,
        pub state: BTreeMap<Vec<u8>, Vec<u8>>,
        pub counters: BTreeMap<String, i64>,
        pub logs: Vec<(i32, String)>,
        pub last_error: Option<(i32, String)>,
        /// The timers set and not deleted: (key, domain, time).
        pub timers: BTreeSet<(Vec<u8>, i32, i64)>,
        /// What `time_now` answers for domains 0 and 1.
        pub now: [i64; 2],
        /// The step's config entries (empty: no configuration).
        pub config: BTreeMap<String, Vec<u8>>,
    }

    thread_local! {
        pub static NATIVE: RefCell<Native> = RefCell::new(Native {
            mode: StateMode::Absent,
            state: BTreeMap::new(),
            counters: BTreeMap::new(),
            logs: Vec::new(),
            last_error: None,
            timers: BTreeSet::new(),
            now: [i64::MIN; 2],
            config: BTreeMap::new(),
        });
    }

    pub fn log(level: i32, msg: &str) {
        NATIVE.with(|n| n.borrow_mut().logs.push((level, msg.to_owned())));
    }

    pub fn error(code: i32, msg: &str) {
        NATIVE.with(|n| n.borrow_mut().last_error = Some((code, msg.to_owned())));
    }

    /// Safety: `vptr` must be writable for `vcap` bytes.
    pub unsafe fn state_get(key: &[u8], vptr: *mut u8, vcap: usize) -> i32 {
        NATIVE.with(|n| {
            let n = n.borrow();
            match n.mode {
                StateMode::Absent => -2,
                StateMode::Failing => -3,
                StateMode::Memory => match n.state.get(key) {
                    None => -1,
                    Some(v) => {
                        if v.len() <= vcap {
                            std::ptr::copy_nonoverlapping(v.as_ptr(), vptr, v.len());
                        }
                        v.len() as i32
                    }
                },
            }
        })
    }

    pub fn state_put(key: &[u8], value: &[u8]) -> i32 {
        NATIVE.with(|n| {
            let mut n = n.borrow_mut();
            match n.mode {
                StateMode::Absent => -2,
                StateMode::Failing => -3,
                StateMode::Memory => {
                    n.state.insert(key.to_vec(), value.to_vec());
                    0
                }
            }
        })
    }

    pub fn state_delete(key: &[u8]) -> i32 {
        NATIVE.with(|n| {
            let mut n = n.borrow_mut();
            match n.mode {
                StateMode::Absent => -2,
                StateMode::Failing => -3,
                StateMode::Memory => {
                    n.state.remove(key);
                    0
                }
            }
        })
    }

    pub fn counter_add(name: &str, delta: i64) {
        NATIVE.with(|n| *n.borrow_mut().counters.entry(name.to_owned()).or_insert(0) += delta);
    }

    pub fn timer_set(key: &[u8], domain: i32, time: i64) -> i32 {
        NATIVE.with(|n| {
            let mut n = n.borrow_mut();
            match n.mode {
                StateMode::Absent => -2,
                StateMode::Failing => -3,
                StateMode::Memory if domain != 0 && domain != 1 => -3,
                StateMode::Memory => {
                    n.timers.insert((key.to_vec(), domain, time));
                    0
                }
            }
        })
    }

    pub fn timer_delete(key: &[u8], domain: i32, time: i64) -> i32 {
        NATIVE.with(|n| {
            let mut n = n.borrow_mut();
            match n.mode {
                StateMode::Absent => -2,
                StateMode::Failing => -3,
                StateMode::Memory if domain != 0 && domain != 1 => -3,
                StateMode::Memory => {
                    n.timers.remove(&(key.to_vec(), domain, time));
                    0
                }
            }
        })
    }

    pub fn time_now(domain: i32) -> i64 {
        NATIVE.with(|n| {
            let n = n.borrow();
            match (n.mode, domain) {
                (StateMode::Absent, _) => i64::MIN,
                (_, 0) | (_, 1) => n.now[domain as usize],
                _ => i64::MIN,
            }
        })
    }

    /// Safety: `vptr` must be writable for `vcap` bytes.
    pub unsafe fn config_get(name: &str, vptr: *mut u8, vcap: usize) -> i32 {
        NATIVE.with(|n| match n.borrow().config.get(name) {
            None => -1,
            Some(v) => {
                if v.len() <= vcap {
                    std::ptr::copy_nonoverlapping(v.as_ptr(), vptr, v.len());
                }
                v.len() as i32
            }
        })
    }
}

pub(crate) use imp::*;
