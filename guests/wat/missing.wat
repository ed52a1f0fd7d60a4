;; Hostile: its manifest names kind process but it has no eddy_process export.
;; Build: wat2wasm missing.wat -o ../../testdata/wat/missing.wasm (or guests/wat/build.sh)
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
  ;; {"abi": 1, "kinds": ["process"]} at offset 16, 21 bytes.
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a7process")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000015))
)
