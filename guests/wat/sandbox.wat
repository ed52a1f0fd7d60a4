;; Test fixture for the sandbox: reads the WASI clock and random source and
;; reports them through eddy.log (24 raw bytes: 8 of time, 16 of randomness),
;; then writes 500 lines to stdout. Answers an empty batch only (`90`).
;; Build: wat2wasm sandbox.wat -o ../../testdata/wat/sandbox.wasm (or guests/wat/build.sh)
(module
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "eddy" "log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 2)
  (func (export "eddy_abi_v1"))
  (func (export "eddy_alloc") (param $n i32) (result i32) (i32.const 65536))
  ;; {"abi": 1, "kinds": ["process"]} at offset 16, 21 bytes.
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a7process")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000015))
  ;; iovec at 200: {ptr 216, len 12}; the line at 216; the answer at 300.
  (data (i32.const 200) "\d8\00\00\00\0c\00\00\00")
  (data (i32.const 216) "stdout line\n")
  (data (i32.const 300) "\90")
  (func (export "eddy_process") (param $ptr i32) (param $len i32) (result i64)
    (local $i i32)
    (drop (call $clock (i32.const 0) (i64.const 0) (i32.const 100)))
    (drop (call $random (i32.const 108) (i32.const 16)))
    (call $log (i32.const 1) (i32.const 100) (i32.const 24))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (i32.const 500)))
        (drop (call $write (i32.const 1) (i32.const 200) (i32.const 1) (i32.const 232)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $each)))
    (i64.const 0x0000012c00000001))
)
