;; out [k, o] = aᵀ · b for a [m, k], b [m, o] with few columns (k, o of tens) and many rows m, float32, on the
;; memory of TF.js's wasm backend: a convolution's filter gradient from its im2col matrix (a) and output gradient
;; (b) when the input has few channels. XNNPACK's product packs its right operand afresh on every call and tiles
;; for long rows, both wasted on this shape.
;;
;; Four rows at a time, a[r, t] (splat) times the row b[r, :], four columns at a time, is added into a [k, o]
;; block of sums that stays in the cache; every `chunk` rows the block is added into `out` and cleared, so no float32
;; sum runs over more than `chunk` terms before it joins the total. Operands are byte addresses; `o` is a
;; multiple of 4; `block` is scratch of k·o floats; `out` must be zero on entry.
(module
  (import "env" "memory" (memory 0))
  (func (export "narrowProduct")
    (param $a i32) (param $b i32) (param $out i32) (param $block i32)
    (param $m i32) (param $k i32) (param $o i32) (param $chunk i32)
    (local $row i32) (local $chunkEnd i32) (local $t i32) (local $c i32)
    (local $rowBytes i32) (local $blockBytes i32) (local $aRow i32) (local $bRow i32) (local $sums i32)
    (local $aStride i32) (local $at i32) (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $rowBytes (i32.shl (local.get $o) (i32.const 2)))
    (local.set $blockBytes (i32.mul (local.get $k) (local.get $rowBytes)))
    (block $done
      (loop $chunks
        (br_if $done (i32.ge_u (local.get $row) (local.get $m)))
        (local.set $chunkEnd (i32.add (local.get $row) (local.get $chunk)))
        (if (i32.gt_u (local.get $chunkEnd) (local.get $m)) (then (local.set $chunkEnd (local.get $m))))
        (local.set $c (i32.const 0))
        (loop $clear
          (v128.store (i32.add (local.get $block) (local.get $c)) (v128.const i32x4 0 0 0 0))
          (local.set $c (i32.add (local.get $c) (i32.const 16)))
          (br_if $clear (i32.lt_u (local.get $c) (local.get $blockBytes))))
        ;; Four rows at a time: each partial sum is loaded and stored once per four products.
        (block $quadsDone
          (loop $quads
            (br_if $quadsDone (i32.gt_u (i32.add (local.get $row) (i32.const 4)) (local.get $chunkEnd)))
            (local.set $aRow
              (i32.add (local.get $a) (i32.shl (i32.mul (local.get $row) (local.get $k)) (i32.const 2))))
            (local.set $bRow (i32.add (local.get $b) (i32.mul (local.get $row) (local.get $rowBytes))))
            (local.set $aStride (i32.shl (local.get $k) (i32.const 2)))
            (local.set $sums (local.get $block))
            (local.set $t (i32.const 0))
            (loop $quadTaps
              (local.set $a0 (f32x4.splat (f32.load (local.get $aRow))))
              (local.set $a1 (f32x4.splat (f32.load (i32.add (local.get $aRow) (local.get $aStride)))))
              (local.set $a2
                (f32x4.splat (f32.load (i32.add (local.get $aRow) (i32.shl (local.get $aStride) (i32.const 1))))))
              (local.set $a3
                (f32x4.splat (f32.load (i32.add (local.get $aRow) (i32.mul (local.get $aStride) (i32.const 3))))))
              (local.set $c (i32.const 0))
              (loop $quadColumns
                (local.set $at (i32.add (local.get $bRow) (local.get $c)))
                (v128.store (i32.add (local.get $sums) (local.get $c))
                  (f32x4.add (v128.load (i32.add (local.get $sums) (local.get $c)))
                    (f32x4.add
                      (f32x4.add
                        (f32x4.mul (local.get $a0) (v128.load align=4 (local.get $at)))
                        (f32x4.mul (local.get $a1)
                          (v128.load align=4 (i32.add (local.get $at) (local.get $rowBytes)))))
                      (f32x4.add
                        (f32x4.mul (local.get $a2)
                          (v128.load align=4 (i32.add (local.get $at) (i32.shl (local.get $rowBytes) (i32.const 1)))))
                        (f32x4.mul (local.get $a3)
                          (v128.load align=4 (i32.add (local.get $at) (i32.mul (local.get $rowBytes) (i32.const 3)))))))))
                (local.set $c (i32.add (local.get $c) (i32.const 16)))
                (br_if $quadColumns (i32.lt_u (local.get $c) (local.get $rowBytes))))
              (local.set $aRow (i32.add (local.get $aRow) (i32.const 4)))
              (local.set $sums (i32.add (local.get $sums) (local.get $rowBytes)))
              (local.set $t (i32.add (local.get $t) (i32.const 1)))
              (br_if $quadTaps (i32.lt_u (local.get $t) (local.get $k))))
            (local.set $row (i32.add (local.get $row) (i32.const 4)))
            (br $quads)))
        ;; The chunk's last rows one by one.
        (block $rowsDone
          (loop $rows
            (br_if $rowsDone (i32.ge_u (local.get $row) (local.get $chunkEnd)))
            (local.set $aRow
              (i32.add (local.get $a) (i32.shl (i32.mul (local.get $row) (local.get $k)) (i32.const 2))))
            (local.set $bRow (i32.add (local.get $b) (i32.mul (local.get $row) (local.get $rowBytes))))
            (local.set $sums (local.get $block))
            (local.set $t (i32.const 0))
            (loop $taps
              (local.set $a0
                (f32x4.splat (f32.load (i32.add (local.get $aRow) (i32.shl (local.get $t) (i32.const 2))))))
              (local.set $c (i32.const 0))
              (loop $columns
                (v128.store (i32.add (local.get $sums) (local.get $c))
                  (f32x4.add (v128.load (i32.add (local.get $sums) (local.get $c)))
                    (f32x4.mul (local.get $a0) (v128.load align=4 (i32.add (local.get $bRow) (local.get $c))))))
                (local.set $c (i32.add (local.get $c) (i32.const 16)))
                (br_if $columns (i32.lt_u (local.get $c) (local.get $rowBytes))))
              (local.set $sums (i32.add (local.get $sums) (local.get $rowBytes)))
              (local.set $t (i32.add (local.get $t) (i32.const 1)))
              (br_if $taps (i32.lt_u (local.get $t) (local.get $k))))
            (local.set $row (i32.add (local.get $row) (i32.const 1)))
            (br $rows)))
        (local.set $c (i32.const 0))
        (loop $add
          (v128.store align=4 (i32.add (local.get $out) (local.get $c))
            (f32x4.add (v128.load align=4 (i32.add (local.get $out) (local.get $c)))
              (v128.load (i32.add (local.get $block) (local.get $c)))))
          (local.set $c (i32.add (local.get $c) (i32.const 16)))
          (br_if $add (i32.lt_u (local.get $c) (local.get $blockBytes))))
        (br $chunks)))))
