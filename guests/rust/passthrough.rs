//! Passthrough is an Eddy process function that returns every record
//! unchanged: the baseline for benchmarks of the host and the Rust SDK.
//!
//! Build (build.sh builds every guest): see build.sh for the exact rustc
//! invocation; in short
//!
//!     rustc --edition 2021 --target wasm32-unknown-unknown --crate-type cdylib -C opt-level=3 \
//!         -C target-feature=+bulk-memory \
//!         -C linker=wasm-ld-14 --extern eddy=libeddy.rlib passthrough.rs -o passthrough.wasm

use eddy::{Record, Result};

fn passthrough(r: Record<'_>) -> Result<Record<'_>> {
    Ok(r)
}

eddy::export! {
    name: "passthrough",
    version: "1.0.0",
    map: passthrough,
}
