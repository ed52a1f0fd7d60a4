;; A guest whose loop iterations are slow (issue 14, item 9): eddy_process
;; fills 127 MiB of memory on every iteration of an endless loop. Checking
;; only loop iterations, the guest returned to Go once every 65,536 fills
;; (minutes), and a garbage collection starting meanwhile stopped the whole
;; process, the watchdog included, until then.
;; Build: wat2wasm slowfill.wat -o slowfill.wasm (or build.sh)
(module
  (memory (export "memory") 2033) ;; 127 MiB + 64 KiB, under the 128 MiB limit
  (func (export "eddy_abi_v1"))
  (func (export "eddy_alloc") (param $n i32) (result i32) (i32.const 1024))
  ;; {"abi": 1, "kinds": ["process"]} at offset 16, 21 bytes.
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a7process")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000015))
  (func (export "eddy_process") (param $ptr i32) (param $len i32) (result i64)
    (loop $forever
      (memory.fill (i32.const 65536) (i32.const 1) (i32.const 133169152))
      (br $forever))
    (i64.const 0))
)
