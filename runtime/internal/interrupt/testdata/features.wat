;; Exercises the instruction walker of package interrupt: instructions of the
;; Wasm 2.0 features (SIMD, bulk memory, reference types, multi-value, typed
;; select, saturating truncation, sign extension), loops with parameters and
;; results, br_table, long LEB128 immediates, an imported global and a start
;; function. Not an Eddy function: it exports "run" (i32) -> i32, which sums
;; its way through all of it and must give the same answer instrumented.
;; Build: wat2wasm features.wat -o features.wasm (or build.sh)
(module
  (import "env" "base" (global $base i32))
  (type $binop (func (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (table $t 4 funcref)
  (elem (table $t) (i32.const 0) func $add $sub)
  (elem $passive funcref (ref.func $add) (ref.null func))
  (data $d "\01\02\03\04\05\06\07\08\09\0a\0b\0c\0d\0e\0f\10")
  (global $started (mut i32) (i32.const 0))
  (global $g64 (mut i64) (i64.const 0x7fffffffffffffff))

  (func $add (type $binop) (i32.add (local.get 0) (local.get 1)))
  (func $sub (type $binop) (i32.sub (local.get 0) (local.get 1)))
  (func $init (global.set $started (i32.const 1)))
  (start $init)

  ;; A loop with a parameter and a result (multi-value).
  (func $count (param $n i32) (result i32)
    (i32.const 0)
    (loop $l (param i32) (result i32)
      (i32.add (local.get $n))
      (if (param i32) (result i32) (i32.const 1)
        (then (i32.add (i32.const 0)))
        (else))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (i32.gt_s (local.get $n) (i32.const 0)))))

  (func (export "run") (param $x i32) (result i32)
    (local $acc i32) (local $i i32) (local $v v128) (local $r funcref) (local $f f64)
    ;; SIMD: const, shuffle, lanes, loads and stores with lanes.
    (memory.init $d (i32.const 0) (i32.const 0) (i32.const 16))
    (local.set $v (v128.load offset=0 align=16 (i32.const 0)))
    (local.set $v (i8x16.shuffle 15 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0 (local.get $v) (v128.const i32x4 1 2 3 4)))
    (local.set $v (v128.load8_lane 3 (i32.const 5) (local.get $v)))
    (v128.store32_lane 1 (i32.const 32) (local.get $v))
    (local.set $v (i32x4.replace_lane 2 (local.get $v) (i32.const 7)))
    (local.set $acc (i32.add (i32x4.extract_lane 2 (local.get $v)) (i8x16.extract_lane_u 0 (local.get $v))))
    (local.set $acc (i32.add (local.get $acc) (i32.load (i32.const 32))))
    (local.set $v (v128.load32_zero (i32.const 4)))
    (local.set $acc (i32.add (local.get $acc) (i32x4.extract_lane 0 (i32x4.add (local.get $v) (local.get $v)))))
    (local.set $acc (i32.add (local.get $acc) (i32x4.bitmask (i8x16.swizzle (local.get $v) (local.get $v)))))
    ;; Bulk memory and tables.
    (memory.copy (i32.const 100) (i32.const 0) (i32.const 16))
    (memory.fill (i32.const 200) (i32.const 9) (i32.const 8))
    (data.drop $d)
    (local.set $acc (i32.add (local.get $acc) (i32.load8_u offset=3 (i32.const 200))))
    (table.init $t $passive (i32.const 2) (i32.const 0) (i32.const 2))
    (elem.drop $passive)
    (table.copy (i32.const 3) (i32.const 0) (i32.const 1))
    (drop (table.grow $t (ref.null func) (i32.const 1)))
    (table.fill $t (i32.const 4) (ref.func $sub) (i32.const 1))
    (local.set $acc (i32.add (local.get $acc) (table.size $t)))
    (local.set $r (table.get $t (i32.const 1)))
    (table.set $t (i32.const 2) (local.get $r))
    (local.set $acc (i32.add (local.get $acc) (ref.is_null (local.get $r))))
    (local.set $acc (call_indirect $t (type $binop) (local.get $acc) (i32.const 3) (i32.const 2)))
    ;; Typed select, saturating truncation, sign extension, constants.
    (local.set $f (f64.const 1e300))
    (local.set $acc (i32.add (local.get $acc) (select (result i32) (i32.const 1) (i32.const 2) (local.get $x))))
    (local.set $acc (i32.add (local.get $acc) (i32.trunc_sat_f64_s (local.get $f))))
    (local.set $acc (i32.add (local.get $acc) (i32.extend8_s (i32.const 0x180))))
    (local.set $acc (i32.add (local.get $acc) (i32.wrap_i64 (i64.shr_u (global.get $g64) (i64.const 60)))))
    (local.set $acc (i32.add (local.get $acc) (i32.trunc_f32_s (f32.const 2.5))))
    (local.set $acc (i32.add (local.get $acc) (i32.wrap_i64 (i64.const -9223372036854775808))))
    (local.set $acc (i32.add (local.get $acc) (memory.size)))
    (drop (memory.grow (i32.const 0)))
    ;; Nested loops and br_table.
    (local.set $i (i32.const 0))
    (block $done
      (loop $outer
        (block $b2 (block $b1 (block $b0
          (br_table $b0 $b1 $b2 (i32.rem_u (local.get $i) (i32.const 3))))
          (local.set $acc (i32.add (local.get $acc) (i32.const 1))) (br $b2))
          (local.set $acc (i32.add (local.get $acc) (i32.const 10))))
        (loop $inner
          (local.set $acc (i32.add (local.get $acc) (i32.const 100)))
          (br_if $inner (i32.eqz (i32.and (local.get $acc) (i32.const 0x100)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_if $outer (i32.lt_u (local.get $i) (i32.const 10)))))
    (i32.add (i32.add (local.get $acc) (call $count (i32.const 10)))
      (i32.add (global.get $started) (global.get $base))))
)
