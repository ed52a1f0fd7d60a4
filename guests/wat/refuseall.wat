;; An aggregate that refuses every record with BAD_INPUT (code 2) and keeps
;; the empty accumulator: aggregate/merge-consistency must fail on it (it
;; would compare initial accumulators; it used to pass). Every export answers
;; one group only (what that case sends): eddy_agg_add reads the group's key,
;; accumulator and record count; merge answers an empty accumulator, result
;; nil (emit nothing).
;; Build: wat2wasm refuseall.wat -o ../../testdata/wat/refuseall.wasm (or guests/wat/build.sh)
(module
  (memory (export "memory") 2)
  (func (export "eddy_abi_v1"))
  ;; eddy_alloc: the input region starts at 64 KiB; grow memory to fit.
  (func (export "eddy_alloc") (param $n i32) (result i32)
    (local $need i32)
    (local.set $need (i32.add (i32.const 65536) (local.get $n)))
    (block $ok
      (loop $grow
        (br_if $ok (i32.le_u (local.get $need) (i32.mul (memory.size) (i32.const 65536))))
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then (return (i32.const 0))))
        (br $grow)))
    (i32.const 65536))
  ;; {"abi": 1, "kinds": ["aggregate"]} at offset 16, 23 bytes.
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a9aggregate")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000017))
  ;; eddy_agg_init: [0, bin ""] at offset 48.
  (data (i32.const 48) "\92\00\c4\00")
  (func (export "eddy_agg_init") (param i32 i32) (result i64) (i64.const 0x0000003000000004))
  ;; eddy_agg_merge: [[0, bin ""]] at offset 56; eddy_agg_result: [[0, nil]] at 64.
  (data (i32.const 56) "\91\92\00\c4\00")
  (func (export "eddy_agg_merge") (param i32 i32) (result i64) (i64.const 0x0000003800000005))
  (data (i32.const 64) "\91\92\00\c0")
  (func (export "eddy_agg_result") (param i32 i32) (result i64) (i64.const 0x0000004000000004))
  ;; skip: the offset after the bytes? (nil or bin/str 8/16/32) at $p.
  (func $skip (param $p i32) (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.eq (local.get $c) (i32.const 0xc0)) (then (return (i32.add (local.get $p) (i32.const 1)))))
    (if (i32.eq (local.get $c) (i32.const 0xc4)) (then (return (i32.add (local.get $p)
      (i32.add (i32.const 2) (i32.load8_u offset=1 (local.get $p)))))))
    (if (i32.eq (local.get $c) (i32.const 0xc5)) (then (return (i32.add (local.get $p) (i32.add (i32.const 3)
      (i32.or (i32.shl (i32.load8_u offset=1 (local.get $p)) (i32.const 8)) (i32.load8_u offset=2 (local.get $p))))))))
    ;; bin32
    (i32.add (local.get $p) (i32.add (i32.const 5) (i32.or (i32.or
      (i32.shl (i32.load8_u offset=1 (local.get $p)) (i32.const 24))
      (i32.shl (i32.load8_u offset=2 (local.get $p)) (i32.const 16))) (i32.or
      (i32.shl (i32.load8_u offset=3 (local.get $p)) (i32.const 8))
      (i32.load8_u offset=4 (local.get $p)))))))
  ;; eddy_agg_add: [[k, acc, [Record x n]]] -> [[bin "", [[i, 2, ""] x n]]]
  (func (export "eddy_agg_add") (param $ptr i32) (param $len i32) (result i64)
    (local $p i32) (local $c i32) (local $n i32) (local $out i32) (local $o i32) (local $i i32) (local $need i32)
    (if (i32.ne (i32.load8_u (local.get $ptr)) (i32.const 0x91)) (then (return (i64.const -5))))
    ;; past [G=1, the group's 0x93, key, acc
    (local.set $p (call $skip (call $skip (i32.add (local.get $ptr) (i32.const 2)))))
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.eq (i32.and (local.get $c) (i32.const 0xf0)) (i32.const 0x90))
      (then (local.set $n (i32.and (local.get $c) (i32.const 0x0f))))
      (else (if (i32.eq (local.get $c) (i32.const 0xdc))
        (then (local.set $n (i32.or
          (i32.shl (i32.load8_u offset=1 (local.get $p)) (i32.const 8))
          (i32.load8_u offset=2 (local.get $p)))))
        (else (local.set $n (i32.or (i32.or
          (i32.shl (i32.load8_u offset=1 (local.get $p)) (i32.const 24))
          (i32.shl (i32.load8_u offset=2 (local.get $p)) (i32.const 16))) (i32.or
          (i32.shl (i32.load8_u offset=3 (local.get $p)) (i32.const 8))
          (i32.load8_u offset=4 (local.get $p)))))))))
    (local.set $out (i32.add (local.get $ptr) (local.get $len)))
    ;; 9 bytes of head, 8 per record error
    (local.set $need (i32.add (local.get $out) (i32.add (i32.const 9) (i32.mul (local.get $n) (i32.const 8)))))
    (block $ok
      (loop $grow
        (br_if $ok (i32.le_u (local.get $need) (i32.mul (memory.size) (i32.const 65536))))
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then (return (i64.const -1))))
        (br $grow)))
    ;; 91 92 c4 00 dd nnnn
    (i32.store8 (local.get $out) (i32.const 0x91))
    (i32.store8 offset=1 (local.get $out) (i32.const 0x92))
    (i32.store8 offset=2 (local.get $out) (i32.const 0xc4))
    (i32.store8 offset=3 (local.get $out) (i32.const 0x00))
    (i32.store8 offset=4 (local.get $out) (i32.const 0xdd))
    (i32.store8 offset=5 (local.get $out) (i32.shr_u (local.get $n) (i32.const 24)))
    (i32.store8 offset=6 (local.get $out) (i32.shr_u (local.get $n) (i32.const 16)))
    (i32.store8 offset=7 (local.get $out) (i32.shr_u (local.get $n) (i32.const 8)))
    (i32.store8 offset=8 (local.get $out) (local.get $n))
    (local.set $o (i32.add (local.get $out) (i32.const 9)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        ;; 93 ce iiii 02 a0
        (i32.store8 (local.get $o) (i32.const 0x93))
        (i32.store8 offset=1 (local.get $o) (i32.const 0xce))
        (i32.store8 offset=2 (local.get $o) (i32.shr_u (local.get $i) (i32.const 24)))
        (i32.store8 offset=3 (local.get $o) (i32.shr_u (local.get $i) (i32.const 16)))
        (i32.store8 offset=4 (local.get $o) (i32.shr_u (local.get $i) (i32.const 8)))
        (i32.store8 offset=5 (local.get $o) (local.get $i))
        (i32.store8 offset=6 (local.get $o) (i32.const 0x02))
        (i32.store8 offset=7 (local.get $o) (i32.const 0xa0))
        (local.set $o (i32.add (local.get $o) (i32.const 8)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $each)))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
            (i64.extend_i32_u (i32.sub (local.get $o) (local.get $out)))))
)
