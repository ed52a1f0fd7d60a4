;; A guest whose answers decode to far more than their bytes (issue 14,
;; item 7). eddy_process reads the first byte of its one record's value
;; (the input must be one record with a nil key and a bin8 value: the byte is
;; at ptr+5) and answers one output record whose headers are:
;;   'c': a claim of 4,194,304 headers followed by 4 MiB of zero bytes (as
;;        many headers as bytes left, none of them real: a host that
;;        allocates for the claim before reading allocates 168 MB);
;;   'h': 1,001 real empty headers ([ "", nil ] each), one over the limit.
;; Build: wat2wasm amplify.wat -o amplify.wasm (or build.sh)
(module
  (memory (export "memory") 100)
  (func (export "eddy_abi_v1"))
  (func (export "eddy_alloc") (param $n i32) (result i32) (i32.const 65536))
  ;; {"abi": 1, "kinds": ["process"]} at offset 16, 21 bytes.
  (data (i32.const 16) "\82\a3abi\01\a5kinds\91\a7process")
  ;; The answer's head at 1 MiB: [[0, [[nil, nil, nil, headers...
  (data (i32.const 0x100000) "\91\92\00\91\94\c0\c0\c0")
  (func (export "eddy_manifest") (result i64) (i64.const 0x0000001000000015))
  (func (export "eddy_process") (param $ptr i32) (param $len i32) (result i64)
    (local $p i32) (local $i i32)
    (if (i32.eq (i32.load8_u (i32.add (local.get $ptr) (i32.const 5))) (i32.const 0x63))
      (then
        ;; array32 of 0x00400000, then 4 MiB of the memory's zeros.
        (i32.store8 (i32.const 0x100008) (i32.const 0xdd))
        (i32.store (i32.const 0x100009) (i32.const 0x00004000)) ;; big-endian 00 40 00 00
        (return (i64.const 0x001000000040000d))))
    ;; array16 of 1001 (0x03e9), then 1001 x [ "", nil ].
    (i32.store8 (i32.const 0x100008) (i32.const 0xdc))
    (i32.store16 (i32.const 0x100009) (i32.const 0xe903)) ;; big-endian 03 e9
    (local.set $p (i32.const 0x10000b))
    (loop $h
      (i32.store8 (local.get $p) (i32.const 0x92))
      (i32.store16 (i32.add (local.get $p) (i32.const 1)) (i32.const 0xc0a0))
      (local.set $p (i32.add (local.get $p) (i32.const 3)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $h (i32.lt_u (local.get $i) (i32.const 1001))))
    ;; 11 + 3003 bytes
    (i64.const 0x0010000000000bc6))
)
