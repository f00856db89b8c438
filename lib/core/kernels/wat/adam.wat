;; Adam's update over one float32 variable, on the memory of TF.js's wasm backend.
;;
;; Operands are byte addresses in that memory; n is the element count. Each
;; operation is one correctly rounded float32 operation in the order TF.js
;; 4.22's AdamOptimizer applies its kernels, so results are bit-identical:
;;   m' = m·β1 + g·(1−β1)          v' = v·β2 + (g·g)·(1−β2)
;;   w' = ((m'/(1−β1ᵗ)) / (√(v'/(1−β2ᵗ)) + ε))·(−lr) + w
;; Four elements at a time (f32x4), then the rest one by one.
(module
  (import "env" "memory" (memory 0))
  (func (export "adam")
    (param $w i32) (param $g i32) (param $m i32) (param $v i32)
    (param $outW i32) (param $outM i32) (param $outV i32) (param $n i32)
    (param $b1 f32) (param $c1 f32) (param $b2 f32) (param $c2 f32)
    (param $d1 f32) (param $d2 f32) (param $eps f32) (param $step f32)
    (local $at i32) (local $vectorEnd i32) (local $end i32)
    (local $gv v128) (local $mv v128) (local $vv v128)
    (local $B1 v128) (local $C1 v128) (local $B2 v128) (local $C2 v128)
    (local $D1 v128) (local $D2 v128) (local $EPS v128) (local $STEP v128)
    (local $gs f32) (local $ms f32) (local $vs f32)
    (local.set $B1 (f32x4.splat (local.get $b1)))
    (local.set $C1 (f32x4.splat (local.get $c1)))
    (local.set $B2 (f32x4.splat (local.get $b2)))
    (local.set $C2 (f32x4.splat (local.get $c2)))
    (local.set $D1 (f32x4.splat (local.get $d1)))
    (local.set $D2 (f32x4.splat (local.get $d2)))
    (local.set $EPS (f32x4.splat (local.get $eps)))
    (local.set $STEP (f32x4.splat (local.get $step)))
    (local.set $end (i32.shl (local.get $n) (i32.const 2)))
    (local.set $vectorEnd (i32.and (local.get $end) (i32.const -16)))
    (block $vectorsDone
      (loop $vectors
        (br_if $vectorsDone (i32.ge_u (local.get $at) (local.get $vectorEnd)))
        (local.set $gv (v128.load align=4 (i32.add (local.get $g) (local.get $at))))
        (local.set $mv
          (f32x4.add
            (f32x4.mul (v128.load align=4 (i32.add (local.get $m) (local.get $at))) (local.get $B1))
            (f32x4.mul (local.get $gv) (local.get $C1))))
        (local.set $vv
          (f32x4.add
            (f32x4.mul (v128.load align=4 (i32.add (local.get $v) (local.get $at))) (local.get $B2))
            (f32x4.mul (f32x4.mul (local.get $gv) (local.get $gv)) (local.get $C2))))
        (v128.store align=4 (i32.add (local.get $outM) (local.get $at)) (local.get $mv))
        (v128.store align=4 (i32.add (local.get $outV) (local.get $at)) (local.get $vv))
        (v128.store align=4 (i32.add (local.get $outW) (local.get $at))
          (f32x4.add
            (f32x4.mul
              (f32x4.div
                (f32x4.div (local.get $mv) (local.get $D1))
                (f32x4.add (f32x4.sqrt (f32x4.div (local.get $vv) (local.get $D2))) (local.get $EPS)))
              (local.get $STEP))
            (v128.load align=4 (i32.add (local.get $w) (local.get $at)))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $vectors)))
    (block $scalarsDone
      (loop $scalars
        (br_if $scalarsDone (i32.ge_u (local.get $at) (local.get $end)))
        (local.set $gs (f32.load (i32.add (local.get $g) (local.get $at))))
        (local.set $ms
          (f32.add
            (f32.mul (f32.load (i32.add (local.get $m) (local.get $at))) (local.get $b1))
            (f32.mul (local.get $gs) (local.get $c1))))
        (local.set $vs
          (f32.add
            (f32.mul (f32.load (i32.add (local.get $v) (local.get $at))) (local.get $b2))
            (f32.mul (f32.mul (local.get $gs) (local.get $gs)) (local.get $c2))))
        (f32.store (i32.add (local.get $outM) (local.get $at)) (local.get $ms))
        (f32.store (i32.add (local.get $outV) (local.get $at)) (local.get $vs))
        (f32.store (i32.add (local.get $outW) (local.get $at))
          (f32.add
            (f32.mul
              (f32.div
                (f32.div (local.get $ms) (local.get $d1))
                (f32.add (f32.sqrt (f32.div (local.get $vs) (local.get $d2))) (local.get $eps)))
              (local.get $step))
            (f32.load (i32.add (local.get $w) (local.get $at)))))
        (local.set $at (i32.add (local.get $at) (i32.const 4)))
        (br $scalars)))))
