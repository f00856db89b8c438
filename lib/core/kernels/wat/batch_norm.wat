;; The passes of BatchNorm over rows of channels (NHWC, float32) on the memory of TF.js's wasm backend, four
;; channels at a time in float64 lanes: each value is widened, combined and rounded exactly as a JS loop of doubles
;; does, so the results are those of batch_norm.ts's scalar loops, to the bit. Operands are byte addresses;
;; per-channel operands are float64 arrays; `channels` is a multiple of 4; `rows` at least 1.
(module
  (import "env" "memory" (memory 0))

  ;; Lanes 2 and 3 of a float32 vector, widened.
  (func $high (param $v v128) (result v128)
    (f64x2.promote_low_f32x4
      (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))

  ;; Two float64 pairs rounded to one float32 vector.
  (func $narrow (param $low v128) (param $high v128) (result v128)
    (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
      (f32x4.demote_f64x2_zero (local.get $low)) (f32x4.demote_f64x2_zero (local.get $high))))

  ;; sum[c] += a[r, c] − center[c] and squares[c] += that difference · b[r, c] − … : with `b` = `a` and
  ;; `center` the origin, the shifted moments; with `a` = dy, `b` = x and `center` = 0 for `sum`, the backward
  ;; sums. Written as: d = b − center; sum += a; weighted += a·d when `a` ≠ `b`, or d and d² when they are the
  ;; same operand (`same` = 1).
  (func (export "sums")
    (param $a i32) (param $b i32) (param $center i32) (param $sum i32) (param $weighted i32)
    (param $rows i32) (param $channels i32) (param $same i32)
    (local $end i32) (local $rowBytes i32) (local $c i32) (local $c2 i32)
    (local $va v128) (local $vb v128) (local $aLow v128) (local $aHigh v128) (local $dLow v128) (local $dHigh v128)
    (local.set $rowBytes (i32.shl (local.get $channels) (i32.const 2)))
    (local.set $end (i32.add (local.get $a) (i32.mul (local.get $rows) (local.get $rowBytes))))
    (loop $rowsLoop
      (local.set $c (i32.const 0))
      (loop $quads
        (local.set $c2 (i32.shl (local.get $c) (i32.const 1)))
        (local.set $vb (v128.load align=4 (i32.add (local.get $b) (local.get $c))))
        (local.set $dLow
          (f64x2.sub (f64x2.promote_low_f32x4 (local.get $vb))
            (v128.load align=8 (i32.add (local.get $center) (local.get $c2)))))
        (local.set $dHigh
          (f64x2.sub (call $high (local.get $vb))
            (v128.load align=8 (i32.add (i32.add (local.get $center) (local.get $c2)) (i32.const 16)))))
        (if (local.get $same)
          (then
            (local.set $aLow (local.get $dLow))
            (local.set $aHigh (local.get $dHigh)))
          (else
            (local.set $va (v128.load align=4 (i32.add (local.get $a) (local.get $c))))
            (local.set $aLow (f64x2.promote_low_f32x4 (local.get $va)))
            (local.set $aHigh (call $high (local.get $va)))))
        (v128.store align=8 (i32.add (local.get $sum) (local.get $c2))
          (f64x2.add (v128.load align=8 (i32.add (local.get $sum) (local.get $c2))) (local.get $aLow)))
        (v128.store align=8 (i32.add (i32.add (local.get $sum) (local.get $c2)) (i32.const 16))
          (f64x2.add (v128.load align=8 (i32.add (i32.add (local.get $sum) (local.get $c2)) (i32.const 16)))
            (local.get $aHigh)))
        (v128.store align=8 (i32.add (local.get $weighted) (local.get $c2))
          (f64x2.add (v128.load align=8 (i32.add (local.get $weighted) (local.get $c2)))
            (f64x2.mul (local.get $aLow) (local.get $dLow))))
        (v128.store align=8 (i32.add (i32.add (local.get $weighted) (local.get $c2)) (i32.const 16))
          (f64x2.add (v128.load align=8 (i32.add (i32.add (local.get $weighted) (local.get $c2)) (i32.const 16)))
            (f64x2.mul (local.get $aHigh) (local.get $dHigh))))
        (local.set $c (i32.add (local.get $c) (i32.const 16)))
        (br_if $quads (i32.lt_u (local.get $c) (local.get $rowBytes))))
      (local.set $a (i32.add (local.get $a) (local.get $rowBytes)))
      (local.set $b (i32.add (local.get $b) (local.get $rowBytes)))
      (br_if $rowsLoop (i32.lt_u (local.get $a) (local.get $end)))))

  ;; out[r, c] = scaleA[c]·a[r, c] + shift[c] (`b` = 0) or scaleA[c]·a[r, c] + scaleB[c]·b[r, c] + shift[c], in
  ;; float64, rounded once.
  (func (export "affine")
    (param $a i32) (param $b i32) (param $out i32) (param $scaleA i32) (param $scaleB i32) (param $shift i32)
    (param $rows i32) (param $channels i32)
    (local $end i32) (local $rowBytes i32) (local $c i32) (local $c2 i32) (local $va v128) (local $vb v128)
    (local $low v128) (local $high v128)
    (local.set $rowBytes (i32.shl (local.get $channels) (i32.const 2)))
    (local.set $end (i32.add (local.get $a) (i32.mul (local.get $rows) (local.get $rowBytes))))
    (loop $rowsLoop
      (local.set $c (i32.const 0))
      (loop $quads
        (local.set $c2 (i32.shl (local.get $c) (i32.const 1)))
        (local.set $va (v128.load align=4 (i32.add (local.get $a) (local.get $c))))
        (local.set $low
          (f64x2.mul (v128.load align=8 (i32.add (local.get $scaleA) (local.get $c2)))
            (f64x2.promote_low_f32x4 (local.get $va))))
        (local.set $high
          (f64x2.mul (v128.load align=8 (i32.add (i32.add (local.get $scaleA) (local.get $c2)) (i32.const 16)))
            (call $high (local.get $va))))
        (if (local.get $b)
          (then
            (local.set $vb (v128.load align=4 (i32.add (local.get $b) (local.get $c))))
            (local.set $low
              (f64x2.add (local.get $low)
                (f64x2.mul (v128.load align=8 (i32.add (local.get $scaleB) (local.get $c2)))
                  (f64x2.promote_low_f32x4 (local.get $vb)))))
            (local.set $high
              (f64x2.add (local.get $high)
                (f64x2.mul (v128.load align=8 (i32.add (i32.add (local.get $scaleB) (local.get $c2)) (i32.const 16)))
                  (call $high (local.get $vb)))))))
        (v128.store align=4 (i32.add (local.get $out) (local.get $c))
          (call $narrow
            (f64x2.add (local.get $low) (v128.load align=8 (i32.add (local.get $shift) (local.get $c2))))
            (f64x2.add (local.get $high)
              (v128.load align=8 (i32.add (i32.add (local.get $shift) (local.get $c2)) (i32.const 16))))))
        (local.set $c (i32.add (local.get $c) (i32.const 16)))
        (br_if $quads (i32.lt_u (local.get $c) (local.get $rowBytes))))
      (local.set $a (i32.add (local.get $a) (local.get $rowBytes)))
      (if (local.get $b) (then (local.set $b (i32.add (local.get $b) (local.get $rowBytes)))))
      (local.set $out (i32.add (local.get $out) (local.get $rowBytes)))
      (br_if $rowsLoop (i32.lt_u (local.get $a) (local.get $end))))))
