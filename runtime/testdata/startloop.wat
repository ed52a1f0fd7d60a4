;; Hostile: the start function never returns. Loading must fail at the
;; deadline rather than hang.
;; Build: wat2wasm startloop.wat -o startloop.wasm (or build.sh)
(module
  (memory (export "memory") 2)
  (func $spin (loop $forever (br $forever)))
  (start $spin)
  (func (export "eddy_abi_v1"))
  (func (export "eddy_alloc") (param $n i32) (result i32) (i32.const 65536))
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a7process")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000015))
  (func (export "eddy_process") (param $ptr i32) (param $len i32) (result i64) (i64.const 0))
)
