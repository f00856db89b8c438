;; MaxPool's gradient (NHWC, float32) on the memory of TF.js's wasm backend.
;;
;; For every output pixel, the window's maximum per channel is found four channels at a time without branches
;; (f32x4.gt, then bitselect of value and element index), so random inputs cost no mispredicted jumps; then each
;; channel's output gradient is added to its maximum's position. Ties keep the first maximum in row-major window
;; order (strictly greater replaces), NaN never wins, and a window with no value above −∞ routes nothing, as on the
;; cpu backend. Operands are byte addresses; `best` and `at` are scratch rows of `channels` floats and ints;
;; `channels` is a multiple of 4; `out` must be zero on entry.
(module
  (import "env" "memory" (memory 0))
  (func (export "maxPoolGrad")
    (param $x i32) (param $dy i32) (param $out i32) (param $best i32) (param $at i32)
    (param $batch i32) (param $inH i32) (param $inW i32) (param $channels i32)
    (param $outH i32) (param $outW i32) (param $strideH i32) (param $strideW i32)
    (param $filterH i32) (param $filterW i32) (param $top i32) (param $left i32)
    (local $b i32) (local $oy i32) (local $ox i32) (local $wy i32) (local $wx i32)
    (local $y i32) (local $xx i32) (local $c i32) (local $rowBytes i32) (local $channelBytes i32)
    (local $index v128) (local $value v128) (local $current v128) (local $greater v128)
    (local $gradAt i32) (local $target i32)
    (local.set $channelBytes (i32.shl (local.get $channels) (i32.const 2)))
    (local.set $gradAt (local.get $dy))
    (local.set $b (i32.const 0))
    (loop $images
      (local.set $oy (i32.const 0))
      (loop $rows
        (local.set $ox (i32.const 0))
        (loop $cols
          ;; Reset the running maxima of this window.
          (local.set $c (i32.const 0))
          (loop $reset
            (v128.store (i32.add (local.get $best) (local.get $c)) (f32x4.splat (f32.const -inf)))
            (v128.store (i32.add (local.get $at) (local.get $c)) (i32x4.splat (i32.const -1)))
            (local.set $c (i32.add (local.get $c) (i32.const 16)))
            (br_if $reset (i32.lt_u (local.get $c) (local.get $channelBytes))))
          (local.set $wy (i32.const 0))
          (loop $windowRows
            (local.set $y
              (i32.add (i32.mul (local.get $oy) (local.get $strideH)) (i32.sub (local.get $wy) (local.get $top))))
            (if (i32.and (i32.ge_s (local.get $y) (i32.const 0)) (i32.lt_s (local.get $y) (local.get $inH)))
              (then
                (local.set $wx (i32.const 0))
                (loop $windowCols
                  (local.set $xx
                    (i32.add (i32.mul (local.get $ox) (local.get $strideW))
                      (i32.sub (local.get $wx) (local.get $left))))
                  (if (i32.and (i32.ge_s (local.get $xx) (i32.const 0)) (i32.lt_s (local.get $xx) (local.get $inW)))
                    (then
                      ;; Element index of this window position's first channel.
                      (local.set $rowBytes
                        (i32.mul
                          (i32.add
                            (i32.mul (i32.add (i32.mul (local.get $b) (local.get $inH)) (local.get $y))
                              (local.get $inW))
                            (local.get $xx))
                          (local.get $channels)))
                      (local.set $index
                        (i32x4.add (i32x4.splat (local.get $rowBytes)) (v128.const i32x4 0 1 2 3)))
                      (local.set $rowBytes (i32.add (local.get $x) (i32.shl (local.get $rowBytes) (i32.const 2))))
                      (local.set $c (i32.const 0))
                      (loop $channelsLoop
                        (local.set $value (v128.load align=4 (i32.add (local.get $rowBytes) (local.get $c))))
                        (local.set $current (v128.load (i32.add (local.get $best) (local.get $c))))
                        (local.set $greater (f32x4.gt (local.get $value) (local.get $current)))
                        (v128.store (i32.add (local.get $best) (local.get $c))
                          (v128.bitselect (local.get $value) (local.get $current) (local.get $greater)))
                        (v128.store (i32.add (local.get $at) (local.get $c))
                          (v128.bitselect (local.get $index) (v128.load (i32.add (local.get $at) (local.get $c)))
                            (local.get $greater)))
                        (local.set $index (i32x4.add (local.get $index) (i32x4.splat (i32.const 4))))
                        (local.set $c (i32.add (local.get $c) (i32.const 16)))
                        (br_if $channelsLoop (i32.lt_u (local.get $c) (local.get $channelBytes))))))
                  (local.set $wx (i32.add (local.get $wx) (i32.const 1)))
                  (br_if $windowCols (i32.lt_s (local.get $wx) (local.get $filterW))))))
            (local.set $wy (i32.add (local.get $wy) (i32.const 1)))
            (br_if $windowRows (i32.lt_s (local.get $wy) (local.get $filterH))))
          ;; Route this pixel's gradients to the maxima.
          (local.set $c (i32.const 0))
          (loop $route
            (local.set $target (i32.load (i32.add (local.get $at) (local.get $c))))
            (if (i32.ge_s (local.get $target) (i32.const 0))
              (then
                (local.set $target (i32.add (local.get $out) (i32.shl (local.get $target) (i32.const 2))))
                (f32.store (local.get $target)
                  (f32.add (f32.load (local.get $target)) (f32.load (i32.add (local.get $gradAt) (local.get $c)))))))
            (local.set $c (i32.add (local.get $c) (i32.const 4)))
            (br_if $route (i32.lt_u (local.get $c) (local.get $channelBytes))))
          (local.set $gradAt (i32.add (local.get $gradAt) (local.get $channelBytes)))
          (local.set $ox (i32.add (local.get $ox) (i32.const 1)))
          (br_if $cols (i32.lt_s (local.get $ox) (local.get $outW))))
        (local.set $oy (i32.add (local.get $oy) (i32.const 1)))
        (br_if $rows (i32.lt_s (local.get $oy) (local.get $outH))))
      (local.set $b (i32.add (local.get $b) (i32.const 1)))
      (br_if $images (i32.lt_s (local.get $b) (local.get $batch))))))
