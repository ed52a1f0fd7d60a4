;; Exception handling in a loop: written with the legacy instructions (try,
;; catch, delegate), which wabt knows, and translated by build.sh into
;; try_table, throw_ref and exnref, which wazero runs.
(module
  (tag $e (param i32))
  (func (export "run") (param $n i32) (result i32)
    (local $acc i32)
    (loop $l
      (try
        (do (try (do (throw $e (local.get $n))) (delegate 0)))
        (catch $e (local.set $acc (i32.add (local.get $acc))))
        (catch_all))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l (local.get $n)))
    (local.get $acc))
)
