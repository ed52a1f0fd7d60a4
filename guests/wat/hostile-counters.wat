;; Hostile (issue 14 item 8): every call adds to 5,000 counters of new
;; 120-byte names per record (counter_add), then answers like a good map. A host
;; that keeps every name grows without bound; the count of names must be bounded.
;; Build: wat2wasm hostile-counters.wat -o ../../testdata/wat/hostile-counters.wasm (or guests/wat/build.sh)
(module
  (import "eddy" "counter_add" (func $counter_add (param i32 i32 i64)))
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
  ;; eddy_alloc: the input region starts at 64 KiB; memory grows to fit.
  (func (export "eddy_alloc") (param $n i32) (result i32)
    (if (i32.eqz (call $grow_to (i32.add (i32.const 65536) (local.get $n)))) (then (return (i32.const 0))))
    (i32.const 65536))
  ;; Counter names are 120 bytes: this prefix, padded with dots, then 8 hex
  ;; digits of a hash of the call's envelope and 8 of a per-instance count,
  ;; so that every call, and every instance, uses new names.
  (data (i32.const 256) "hostile-counter-")
  (data (i32.const 240) "0123456789abcdef")
  (global $next (mut i32) (i32.const 0))
  ;; $hex writes $v as 8 hex digits at $q.
  (func $hex (param $q i32) (param $v i32)
    (local $i i32)
    (loop $digit
      (i32.store8 (i32.add (local.get $q) (local.get $i))
        (i32.load8_u offset=240 (i32.and (i32.shr_u (local.get $v) (i32.sub (i32.const 28) (i32.shl (local.get $i) (i32.const 2)))) (i32.const 15))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $i) (i32.const 8)))))
  (func (export "eddy_process") (param $p i32) (param $n i32) (result i64)
    (local $h i32)
    (local $i i32)
    (local $left i32)
    (local $records i32)
    (local.set $records (call $count (local.get $p)))
    (if (call $benign (local.get $p) (local.get $n)) (then (return (call $ok (local.get $records)))))
    ;; FNV-1a of the envelope.
    (local.set $h (i32.const 0x811c9dc5))
    (block $hashed
      (loop $byte
        (br_if $hashed (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $h (i32.mul (i32.xor (local.get $h) (i32.load8_u (i32.add (local.get $p) (local.get $i)))) (i32.const 0x01000193)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $byte)))
    (memory.fill (i32.const 272) (i32.const 0x2e) (i32.const 88))
    (call $hex (i32.const 360) (local.get $h))
    ;; 5,000 new names for each record of the batch (at least one).
    (local.set $left (i32.mul (i32.const 5000) (select (local.get $records) (i32.const 1) (local.get $records))))
    (loop $name
      (call $hex (i32.const 368) (global.get $next))
      (global.set $next (i32.add (global.get $next) (i32.const 1)))
      (call $counter_add (i32.const 256) (i32.const 120) (i64.const 1))
      (local.set $left (i32.sub (local.get $left) (i32.const 1)))
      (br_if $name (local.get $left)))
    (call $ok (local.get $records)))
)
