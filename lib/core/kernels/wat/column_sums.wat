;; Column sums of a row-major [rows, cols] float32 matrix into out [cols], on the memory of TF.js's wasm backend:
;; a Sum or Mean over leading axes (bias gradients, BatchNorm moments). Each column is summed row after row, four
;; columns at a time, so every sum is the sequential float32 sum a per-column loop gives, to the bit. Operands are
;; byte addresses; `cols` is a multiple of 4 and at least 4; `rows` at least 1.
(module
  (import "env" "memory" (memory 0))
  (func (export "columnSums") (param $x i32) (param $out i32) (param $rows i32) (param $cols i32)
    (local $rowBytes i32) (local $end i32) (local $c i32) (local $at i32)
    (local.set $rowBytes (i32.shl (local.get $cols) (i32.const 2)))
    (local.set $end (i32.add (local.get $x) (i32.mul (local.get $rows) (local.get $rowBytes))))
    (local.set $c (i32.const 0))
    (loop $clear
      (v128.store align=4 (i32.add (local.get $out) (local.get $c)) (v128.const i32x4 0 0 0 0))
      (local.set $c (i32.add (local.get $c) (i32.const 16)))
      (br_if $clear (i32.lt_u (local.get $c) (local.get $rowBytes))))
    (local.set $at (local.get $x))
    (block $done
      (loop $rowsLoop
        (br_if $done (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $c (i32.const 0))
        (loop $columns
          (v128.store align=4 (i32.add (local.get $out) (local.get $c))
            (f32x4.add (v128.load align=4 (i32.add (local.get $out) (local.get $c)))
              (v128.load align=4 (i32.add (local.get $at) (local.get $c)))))
          (local.set $c (i32.add (local.get $c) (i32.const 16)))
          (br_if $columns (i32.lt_u (local.get $c) (local.get $rowBytes))))
        (local.set $at (i32.add (local.get $at) (local.get $rowBytes)))
        (br $rowsLoop)))))
