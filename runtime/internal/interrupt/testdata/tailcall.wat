;; Tail calls: two functions that call each other forever with return_call
;; and return_call_indirect, without loops and without growing the stack. Only
;; the checks at function entry can stop them.
;; Build: wat2wasm --enable-tail-call tailcall.wat -o tailcall.wasm (or build.sh)
(module
  (type $t (func (param i32) (result i32)))
  (table 1 funcref)
  (elem (i32.const 0) $pong)
  (func $ping (export "ping") (type $t)
    (return_call_indirect (type $t) (i32.add (local.get 0) (i32.const 1)) (i32.const 0)))
  (func $pong (type $t)
    (if (i32.eqz (local.get 0)) (then (return (i32.const 0))))
    (return_call $ping (local.get 0)))
  ;; "count" tail-calls itself n times and returns n.
  (func $count (export "count") (param $n i32) (param $acc i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (local.get $acc))
      (else (return_call $count (i32.sub (local.get $n) (i32.const 1)) (i32.add (local.get $acc) (i32.const 1))))))
)
