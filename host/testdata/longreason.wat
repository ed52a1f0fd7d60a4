;; A guest that fails records with a 60,000,000-byte reason (issue 14,
;; item 4). It expects one record per call (batch_size: 1) with a nil key,
;; so that its value's first byte is at ptr+5 (bin8), and answers:
;;   'x': calls error(1, 60 MB) and fails the whole call (-1);
;;   'r': a failed Result [1, reason] whose reason is 60 MB;
;;   else: one output record, value "ok".
;; The reason is memory's zero bytes from 4 MiB on.
;; Build: wat2wasm longreason.wat -o longreason.wasm
(module
  (import "eddy" "error" (func $error (param i32 i32 i32)))
  (memory (export "memory") 1000)
  (func (export "eddy_abi_v1"))
  (func (export "eddy_alloc") (param $n i32) (result i32)
    ;; Inputs may be as large as a Kafka record: room up to 3 MiB, below
    ;; the answers.
    (if (result i32) (i32.gt_u (local.get $n) (i32.const 0x300000))
      (then (i32.const 0))
      (else (i32.const 65536))))
  ;; {"abi": 1, "kinds": ["process"]} at offset 16, 21 bytes.
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a7process")
  ;; [[1, str32 60,000,000]] just before 4 MiB; the reason follows.
  (data (i32.const 0x3ffff8) "\91\92\01\db\03\93\87\00")
  ;; [[0, [[nil, "ok", nil, nil]]]]
  (data (i32.const 64) "\91\92\00\91\94\c0\a2ok\c0\c0")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000015))
  (func (export "eddy_process") (param $ptr i32) (param $len i32) (result i64)
    (local $c i32)
    (local.set $c (i32.load8_u (i32.add (local.get $ptr) (i32.const 5))))
    (if (i32.eq (i32.load8_u (i32.add (local.get $ptr) (i32.const 3))) (i32.const 0xc6))
      (then (local.set $c (i32.load8_u (i32.add (local.get $ptr) (i32.const 8))))))
    (if (i32.eq (local.get $c) (i32.const 0x78))
      (then
        (call $error (i32.const 1) (i32.const 0x400000) (i32.const 60000000))
        (return (i64.const -1))))
    (if (i32.eq (local.get $c) (i32.const 0x72))
      (then (return (i64.const 0x003ffff803938708)))) ;; ptr 0x3ffff8, len 8 + 60,000,000
    (i64.const 0x000000400000000b))
)
