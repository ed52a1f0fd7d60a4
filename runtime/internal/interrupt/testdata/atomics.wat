;; Threads: a shared memory and atomic instructions, in a loop.
;; Build: wat2wasm --enable-threads atomics.wat -o atomics.wasm (or build.sh)
(module
  (memory (export "memory") 1 1 shared)
  (func (export "run") (param $n i32) (result i32)
    (local $i i32)
    (loop $l
      (drop (i32.atomic.rmw.add (i32.const 0) (i32.const 1)))
      (i64.atomic.store offset=8 (i32.const 0) (i64.const 5))
      (drop (i32.atomic.rmw8.cmpxchg_u (i32.const 16) (i32.const 0) (i32.const 1)))
      (atomic.fence)
      (drop (memory.atomic.notify (i32.const 0) (i32.const 0)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (i32.atomic.load (i32.const 0)))
)
