;; A guest that fails in ways the host must name precisely (issue 14,
;; "errors that say what happened"). eddy_process reads the first byte of its
;; one record's value (nil key, bin8 value: the byte is at ptr+5):
;;   'g': memory.grow by 4096 pages (256 MiB, over the default 128 MiB
;;        limit), refused, then traps as an allocator would;
;;   'm': returns the most negative i64;
;;   'b': returns -(2^40);
;;   'u': returns -300 (no ABI code);
;;   'r': returns -9 (a reserved code).
;; eddy_alloc traps for a region over 1 MiB.
;; Build: wat2wasm failures.wat -o failures.wasm (or build.sh)
(module
  (memory (export "memory") 2)
  (func (export "eddy_abi_v1"))
  (func (export "eddy_alloc") (param $n i32) (result i32)
    (if (i32.gt_u (local.get $n) (i32.const 0x100000)) (then unreachable))
    (i32.const 16384))
  ;; {"abi": 1, "kinds": ["process"]} at offset 16, 21 bytes.
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a7process")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000015))
  (func (export "eddy_process") (param $ptr i32) (param $len i32) (result i64)
    (local $c i32)
    (local.set $c (i32.load8_u (i32.add (local.get $ptr) (i32.const 5))))
    (if (i32.eq (local.get $c) (i32.const 0x67))
      (then
        (if (i32.eq (memory.grow (i32.const 4096)) (i32.const -1)) (then unreachable))))
    (if (i32.eq (local.get $c) (i32.const 0x6d)) (then (return (i64.const 0x8000000000000000))))
    (if (i32.eq (local.get $c) (i32.const 0x62)) (then (return (i64.const -1099511627776))))
    (if (i32.eq (local.get $c) (i32.const 0x75)) (then (return (i64.const -300))))
    (if (i32.eq (local.get $c) (i32.const 0x72)) (then (return (i64.const -9))))
    (i64.const -1))
)
