;; Hostile (issue 14, errors that say what happened): eddy_alloc traps when the
;; host asks for a region over 4 KiB (an envelope of more than 4 KiB); eddy_process
;; answers like a good map. The cause must say that the trap was in eddy_alloc.
;; Build: wat2wasm hostile-alloc-trap.wat -o ../../testdata/wat/hostile-alloc-trap.wasm (or guests/wat/build.sh)
(module
  (memory (export "memory") 2)
  (func (export "eddy_abi_v1"))
  ;; The probe marker: a batch holding these bytes (the deploy probe's first
  ;; record has the key eddy-probe) is answered well, so that the module
  ;; deploys and turns hostile on the records that follow. The hostile-module
  ;; test overwrites them to get a variant that is hostile to the probe too.
  (data (i32.const 8) "eddy-probe")
  ;; {"abi": 1, "kinds": ["process"]} at offset 32, 21 bytes.
  (data (i32.const 32) "\82\a3abi\01\a5kinds\91\a7process")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000002000000015))
  ;; $grow_to: grows memory to at least $n bytes; 0 when refused.
  (func $grow_to (param $n i32) (result i32)
    (local $have i32)
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $n) (local.get $have))
      (then (return (i32.ne (i32.const -1) (memory.grow
        (i32.shr_u (i32.add (i32.sub (local.get $n) (local.get $have)) (i32.const 65535)) (i32.const 16)))))))
    (i32.const 1))
  ;; $count: the element count of the msgpack array header at $p.
  (func $count (param $p i32) (result i32)
    (local $b i32)
    (local.set $b (i32.load8_u (local.get $p)))
    (if (i32.eq (i32.and (local.get $b) (i32.const 0xf0)) (i32.const 0x90))
      (then (return (i32.and (local.get $b) (i32.const 15)))))
    (if (i32.eq (local.get $b) (i32.const 0xdc))
      (then (return (i32.or (i32.shl (i32.load8_u offset=1 (local.get $p)) (i32.const 8)) (i32.load8_u offset=2 (local.get $p))))))
    (i32.or
      (i32.or (i32.shl (i32.load8_u offset=1 (local.get $p)) (i32.const 24)) (i32.shl (i32.load8_u offset=2 (local.get $p)) (i32.const 16)))
      (i32.or (i32.shl (i32.load8_u offset=3 (local.get $p)) (i32.const 8)) (i32.load8_u offset=4 (local.get $p)))))
  ;; $benign: whether the envelope [$p, $p+$n) holds the probe marker.
  (func $benign (param $p i32) (param $n i32) (result i32)
    (local $last i32)
    (if (i32.lt_u (local.get $n) (i32.const 10)) (then (return (i32.const 0))))
    (local.set $last (i32.add (local.get $p) (i32.sub (local.get $n) (i32.const 10))))
    (loop $scan
      (if (i32.and (i64.eq (i64.load (local.get $p)) (i64.load (i32.const 8)))
                   (i32.eq (i32.load16_u offset=8 (local.get $p)) (i32.load16_u (i32.const 16))))
        (then (return (i32.const 1))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (br_if $scan (i32.le_u (local.get $p) (local.get $last))))
    (i32.const 0))
  ;; $ok: the good answer for $n records, one record [nil, "ok", nil, []] each,
  ;; built at 1 KiB (room for 5,860 records below the input region).
  (data (i32.const 80) "\92\00\91\94\c0\c4\02ok\c0\90")
  (func $ok (param $n i32) (result i64)
    (local $q i32)
    (if (i32.gt_u (local.get $n) (i32.const 5860)) (then (return (i64.const -1))))
    (i32.store8 (i32.const 1024) (i32.const 0xdd))
    (i32.store8 (i32.const 1025) (i32.shr_u (local.get $n) (i32.const 24)))
    (i32.store8 (i32.const 1026) (i32.shr_u (local.get $n) (i32.const 16)))
    (i32.store8 (i32.const 1027) (i32.shr_u (local.get $n) (i32.const 8)))
    (i32.store8 (i32.const 1028) (local.get $n))
    (local.set $q (i32.const 1029))
    (block $done
      (loop $each
        (br_if $done (i32.eqz (local.get $n)))
        (memory.copy (local.get $q) (i32.const 80) (i32.const 11))
        (local.set $q (i32.add (local.get $q) (i32.const 11)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $each)))
    (i64.or (i64.const 0x0000040000000000) (i64.extend_i32_u (i32.sub (local.get $q) (i32.const 1024)))))
  ;; eddy_alloc traps when asked for more than 4 KiB (the first region the
  ;; host asks for), or always once the probe marker is overwritten.
  (func (export "eddy_alloc") (param $n i32) (result i32)
    (if (i32.or (i32.gt_u (local.get $n) (i32.const 4096)) (i32.eq (i32.load8_u (i32.const 8)) (i32.const 0x78)))
      (then unreachable))
    (if (i32.eqz (call $grow_to (i32.add (i32.const 65536) (local.get $n)))) (then (return (i32.const 0))))
    (i32.const 65536))
  (func (export "eddy_process") (param $p i32) (param $n i32) (result i64)
    (call $ok (call $count (local.get $p))))
)
