;; A map guest that makes an output record far larger than its input (issue
;; 14: an oversized output record must not stop the node). It expects one
;; record per call (batch_size: 1) with a nil key and a value of at most 255
;; bytes (bin8), so that the value's length is at ptr+4 and its bytes at
;; ptr+5, and answers:
;;   a value starting with 'B': one record whose value is 3,000,000 zero
;;     bytes (the answer is prebuilt at 1 MiB);
;;   else: one record with the input's value (an echo).
;; Output timestamps are nil: the input's.
;; Build: wat2wasm amplify.wat -o amplify.wasm
(module
  (memory (export "memory") 64)
  (func (export "eddy_abi_v1"))
  (func (export "eddy_alloc") (param $n i32) (result i32)
    (if (result i32) (i32.gt_u (local.get $n) (i32.const 0x70000))
      (then (i32.const 0))
      (else (i32.const 65536))))
  ;; {"abi": 1, "kinds": ["process"]} at offset 16, 21 bytes.
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a7process")
  ;; The echo's answer at 0x80000: [[0, [[nil, bin8 ...]]]]; the value and
  ;; the trailing nil, nil are written per call.
  (data (i32.const 0x80000) "\91\92\00\91\94\c0\c4")
  ;; The big answer at 0x100000: [[0, [[nil, bin32 3,000,000, ...]]]] then
  ;; nil, nil after the (zero) value.
  (data (i32.const 0x100000) "\91\92\00\91\94\c0\c6\00\2d\c6\c0")
  (data (i32.const 0x3dc6cb) "\c0\c0")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000015))
  (func (export "eddy_process") (param $ptr i32) (param $len i32) (result i64)
    (local $n i32)
    (if (i32.eq (i32.load8_u (i32.add (local.get $ptr) (i32.const 5))) (i32.const 0x42))
      (then (return (i64.const 0x00100000002dc6cd)))) ;; ptr 0x100000, len 3,000,013
    (local.set $n (i32.load8_u (i32.add (local.get $ptr) (i32.const 4))))
    (i32.store8 (i32.const 0x80007) (local.get $n))
    (memory.copy (i32.const 0x80008) (i32.add (local.get $ptr) (i32.const 5)) (local.get $n))
    (i32.store16 (i32.add (i32.const 0x80008) (local.get $n)) (i32.const 0xc0c0))
    ;; ptr 0x80000, len 8 + n + 2
    (i64.or (i64.const 0x0008000000000000) (i64.extend_i32_u (i32.add (local.get $n) (i32.const 10)))))
)
