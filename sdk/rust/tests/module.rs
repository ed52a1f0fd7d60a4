//! A module that calls every host function of the SDK, which
//! `sdk/rust/test.sh` builds for wasm32 to check which `eddy` imports a
//! module links: with `--cfg no_config` it reads no configuration, with
//! `--cfg no_timers` it calls no timer function, and with both it uses
//! neither (the imports of each call are linked only into modules that
//! make it).

use eddy::{state, Emitter, Record, Result, Timer};

#[derive(Default)]
struct Touch {
    buf: Vec<u8>,
    prefix: Option<Vec<u8>>,
}

impl eddy::Filter for Touch {
    fn keep(&mut self, r: Record<'_>) -> Result<bool> {
        let key = r.key.unwrap_or_default();
        #[cfg(not(no_config))]
        if self.prefix.is_none() {
            self.prefix = Some(eddy::config("prefix").unwrap_or_default());
        }
        eddy::log(eddy::Level::Debug, "touch");
        eddy::count("touched", 1);
        if state::get_into(key, &mut self.buf)? {
            state::delete(key)?;
        }
        state::put(key, self.prefix.as_deref().unwrap_or_default())?;
        #[cfg(not(no_timers))]
        {
            let now = eddy::current_time(eddy::TimeDomain::EventTime);
            eddy::delete_timer(key, eddy::TimeDomain::EventTime, now)?;
            eddy::set_timer(key, eddy::TimeDomain::EventTime, r.timestamp + 1000)?;
        }
        Ok(false)
    }
}

fn fire(t: Timer<'_>, out: &mut Emitter<'_>) -> Result<()> {
    out.emit(Record::new(Some(t.key), None));
    Ok(())
}

eddy::export! {
    name: "module",
    filter: Touch::default(),
    timer: fire,
}
