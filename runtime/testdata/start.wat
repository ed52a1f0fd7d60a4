;; A guest with a start section: the start function must run before any
;; export (eddy_manifest answers only after it), including when the host
;; turns it into an export to run it under its deadline. eddy_process never
;; returns.
;; Build: wat2wasm start.wat -o start.wasm (or build.sh)
(module
  (memory (export "memory") 2)
  (global $started (mut i32) (i32.const 0))
  (func $init (global.set $started (i32.const 1)))
  (start $init)
  (func (export "eddy_abi_v1"))
  (func (export "eddy_alloc") (param $n i32) (result i32) (i32.const 65536))
  ;; {"abi": 1, "kinds": ["process"]} at offset 16, 21 bytes.
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a7process")
  (func (export "eddy_manifest") (result i64)
    (if (result i64) (global.get $started)
      (then (i64.const 0x0000001000000015))
      (else (i64.const -1))))
  (func (export "eddy_process") (param $ptr i32) (param $len i32) (result i64)
    (loop $forever (br $forever))
    (i64.const 0))
)
