;; dropall.wat under the manifest name "upper": a correct filter that drops
;; every record, which is not the reference upper. Conformance must not check
;; it as one unless told to (--reference upper).
;; Build: wat2wasm namedupper.wat -o ../../testdata/wat/namedupper.wasm (or guests/wat/build.sh)
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
  ;; {"abi": 1, "kinds": ["process"], "name": "upper"} at offset 16, 32 bytes.
  (data (i32.const 16) "\83\a3abi\01\a5kinds\91\a7process\a4name\a5upper")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000020))
  ;; eddy_process: read N from the array header at ptr, write the answer at ptr+len.
  (func (export "eddy_process") (param $ptr i32) (param $len i32) (result i64)
    (local $n i32) (local $c i32) (local $out i32) (local $p i32) (local $i i32) (local $need i32)
    (local.set $c (i32.load8_u (local.get $ptr)))
    (if (i32.eq (i32.and (local.get $c) (i32.const 0xf0)) (i32.const 0x90))
      (then (local.set $n (i32.and (local.get $c) (i32.const 0x0f))))
      (else (if (i32.eq (local.get $c) (i32.const 0xdc))
        (then (local.set $n (i32.or
          (i32.shl (i32.load8_u offset=1 (local.get $ptr)) (i32.const 8))
          (i32.load8_u offset=2 (local.get $ptr)))))
        (else (local.set $n (i32.or (i32.or
          (i32.shl (i32.load8_u offset=1 (local.get $ptr)) (i32.const 24))
          (i32.shl (i32.load8_u offset=2 (local.get $ptr)) (i32.const 16))) (i32.or
          (i32.shl (i32.load8_u offset=3 (local.get $ptr)) (i32.const 8))
          (i32.load8_u offset=4 (local.get $ptr)))))))))
    (local.set $out (i32.add (local.get $ptr) (local.get $len)))
    ;; grow memory to fit 5 + 3N bytes of answer
    (local.set $need (i32.add (local.get $out) (i32.add (i32.const 5) (i32.mul (local.get $n) (i32.const 3)))))
    (block $ok
      (loop $grow
        (br_if $ok (i32.le_u (local.get $need) (i32.mul (memory.size) (i32.const 65536))))
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1)) (then (return (i64.const -5))))
        (br $grow)))
    ;; array32 header with N
    (i32.store8 (local.get $out) (i32.const 0xdd))
    (i32.store8 offset=1 (local.get $out) (i32.shr_u (local.get $n) (i32.const 24)))
    (i32.store8 offset=2 (local.get $out) (i32.shr_u (local.get $n) (i32.const 16)))
    (i32.store8 offset=3 (local.get $out) (i32.shr_u (local.get $n) (i32.const 8)))
    (i32.store8 offset=4 (local.get $out) (local.get $n))
    (local.set $p (i32.add (local.get $out) (i32.const 5)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (i32.store8 (local.get $p) (i32.const 0x92))
        (i32.store8 offset=1 (local.get $p) (i32.const 0x00))
        (i32.store8 offset=2 (local.get $p) (i32.const 0x90))
        (local.set $p (i32.add (local.get $p) (i32.const 3)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $each)))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
            (i64.extend_i32_u (i32.sub (local.get $p) (local.get $out)))))
)
