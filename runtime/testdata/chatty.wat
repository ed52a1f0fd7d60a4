;; A guest that adds to a new counter name on every step and logs a
;; 1,000,000-byte line (issue 14, item 8). eddy_process, for any one-record
;; batch: counter_add("c" + 4 bytes of i, 1) for i in 0..1499, then
;; log(info, 1 MB of zero bytes), then answers [[0, []]].
;; Build: wat2wasm chatty.wat -o chatty.wasm (or build.sh)
(module
  (import "eddy" "counter_add" (func $counter_add (param i32 i32 i64)))
  (import "eddy" "log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 20)
  (func (export "eddy_abi_v1"))
  (func (export "eddy_alloc") (param $n i32) (result i32) (i32.const 65536))
  ;; {"abi": 1, "kinds": ["process"]} at offset 16, 21 bytes.
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a7process")
  (data (i32.const 48) "c")
  (data (i32.const 64) "\91\92\00\90")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000015))
  (func (export "eddy_process") (param $ptr i32) (param $len i32) (result i64)
    (local $i i32)
    (loop $next
      (i32.store (i32.const 49) (local.get $i))
      (call $counter_add (i32.const 48) (i32.const 5) (i64.const 1))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $next (i32.lt_u (local.get $i) (i32.const 1500))))
    (call $log (i32.const 1) (i32.const 0x20000) (i32.const 1000000))
    (i64.const 0x0000004000000004))
)
