/**
 * The OpenCV calls of imagecorruptions' `spatter` (its water drops), written out: cv2.blur with a 3×3 box, cv2.Canny,
 * cv2.distanceTransform with the 5×5 chamfer mask and cv2.equalizeHist, on one-channel `[h, w]` images.
 *
 * @module
 */
import { borderIndex } from "./corruption_ops.ts";

/**
 * cv2.blur(img, (3, 3)): the mean of each 3×3 neighbourhood, border reflect-101, on a `[h, w]` image. With
 * `toBytes` the result is rounded and saturated to 0..255 as cv2 does for uint8 images. Returns `[h, w]`.
 */
export function boxBlur3(img: ArrayLike<number>, h: number, w: number, toBytes = false): Float64Array {
  const out = new Float64Array(h * w);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let sum = 0;
      for (let dy = -1; dy <= 1; dy++) {
        const row = borderIndex(y + dy, h, "mirror") * w;
        for (let dx = -1; dx <= 1; dx++) sum += img[row + borderIndex(x + dx, w, "mirror")];
      }
      out[y * w + x] = toBytes ? Math.min(255, Math.max(0, Math.round(sum / 9))) : sum / 9;
    }
  }
  return out;
}

/**
 * cv2.Canny(img, low, high) of a `[h, w]` uint8 image (values 0..255) with the default 3×3 Sobel aperture and L1
 * gradient |∂x| + |∂y| (Sobel with replicated borders): non-maximum suppression along the gradient direction
 * quantised to 0°, 45°, 90° or 135° (cv2's tan 22.5° tests), then hysteresis, 8-connected, from magnitudes above
 * `high` through those above `low`. Returns `[h, w]` with 255 on edges, 0 elsewhere.
 */
export function cannyCv2(img: ArrayLike<number>, h: number, w: number, low: number, high: number): Uint8Array {
  const at = (y: number, x: number) => img[Math.min(h - 1, Math.max(0, y)) * w + Math.min(w - 1, Math.max(0, x))];
  const dxs = new Int32Array(h * w), dys = new Int32Array(h * w), mag = new Int32Array(h * w);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const dx = at(y - 1, x + 1) + 2 * at(y, x + 1) + at(y + 1, x + 1) - at(y - 1, x - 1) - 2 * at(y, x - 1) -
        at(y + 1, x - 1);
      const dy = at(y + 1, x - 1) + 2 * at(y + 1, x) + at(y + 1, x + 1) - at(y - 1, x - 1) - 2 * at(y - 1, x) -
        at(y - 1, x + 1);
      dxs[y * w + x] = dx;
      dys[y * w + x] = dy;
      mag[y * w + x] = Math.abs(dx) + Math.abs(dy);
    }
  }
  // Outside the image the magnitude counts as 0, as in cv2's padded magnitude buffer.
  const m = (y: number, x: number) => (y < 0 || y >= h || x < 0 || x >= w ? 0 : mag[y * w + x]);
  const lowT = Math.floor(low), highT = Math.floor(high);
  const TG22 = Math.round(0.4142135623730950488016887242097 * (1 << 15)); // cv2's fixed-point tan 22.5°
  const state = new Uint8Array(h * w); // 0 not an edge, 1 candidate, 2 edge
  const stack: number[] = [];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = mag[y * w + x];
      if (v <= lowT) continue;
      const dx = dxs[y * w + x], dy = dys[y * w + x];
      const xs = Math.abs(dx), ys = Math.abs(dy) * (1 << 15);
      const tg22x = xs * TG22;
      let peak: boolean;
      if (ys < tg22x) peak = v > m(y, x - 1) && v >= m(y, x + 1);
      else if (ys > tg22x + xs * (1 << 16)) peak = v > m(y - 1, x) && v >= m(y + 1, x);
      else {
        const s = (dx ^ dy) < 0 ? -1 : 1;
        peak = v > m(y - 1, x - s) && v > m(y + 1, x + s);
      }
      if (!peak) continue;
      if (v > highT) {
        state[y * w + x] = 2;
        stack.push(y * w + x);
      } else state[y * w + x] = 1;
    }
  }
  while (stack.length) {
    const p = stack.pop()!, y = Math.floor(p / w), x = p % w;
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        const yy = y + dy, xx = x + dx;
        if (yy < 0 || yy >= h || xx < 0 || xx >= w || state[yy * w + xx] !== 1) continue;
        state[yy * w + xx] = 2;
        stack.push(yy * w + xx);
      }
    }
  }
  return Uint8Array.from(state, (s) => (s === 2 ? 255 : 0));
}

/**
 * cv2.distanceTransform(img, DIST_L2, 5): for every non-zero pixel of a `[h, w]` image, the chamfer distance to the
 * nearest zero pixel with cv2's 5×5 mask (steps 1, diagonal 1.4, knight 2.1969), two raster passes; pixels
 * beyond the border are not zeros. Infinity where the image has no zero pixel. Returns `[h, w]`.
 */
export function distanceTransform5(img: ArrayLike<number>, h: number, w: number): Float64Array {
  const a = 1, b = 1.4, knight = 2.1969;
  const d = Float64Array.from({ length: h * w }, (_, k) => (img[k] === 0 ? 0 : Infinity));
  const get = (y: number, x: number) => (y < 0 || y >= h || x < 0 || x >= w ? Infinity : d[y * w + x]);
  const forward: [number, number, number][] = [
    [-2, -1, knight],
    [-2, 1, knight],
    [-1, -2, knight],
    [-1, -1, b],
    [-1, 0, a],
    [-1, 1, b],
    [-1, 2, knight],
    [0, -1, a],
  ];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let best = d[y * w + x];
      for (const [dy, dx, cost] of forward) best = Math.min(best, get(y + dy, x + dx) + cost);
      d[y * w + x] = best;
    }
  }
  for (let y = h - 1; y >= 0; y--) {
    for (let x = w - 1; x >= 0; x--) {
      let best = d[y * w + x];
      for (const [dy, dx, cost] of forward) best = Math.min(best, get(y - dy, x - dx) + cost);
      d[y * w + x] = best;
    }
  }
  return d;
}

/**
 * cv2.equalizeHist of a uint8 image (values 0..255, any shape): value v becomes round(255 · (#pixels ≤ v −
 * #pixels at the lowest value) / (#pixels − #pixels at the lowest value)); a constant image stays as it is.
 */
export function equalizeHist(img: ArrayLike<number>): Uint8Array {
  const histogram = new Int32Array(256);
  for (let k = 0; k < img.length; k++) histogram[img[k]]++;
  let lowest = 0;
  while (lowest < 255 && histogram[lowest] === 0) lowest++;
  const total = img.length;
  if (histogram[lowest] === total) return Uint8Array.from(img);
  const scale = 255 / (total - histogram[lowest]);
  const lut = new Uint8Array(256);
  let sum = 0;
  for (let v = lowest + 1; v < 256; v++) {
    sum += histogram[v];
    lut[v] = Math.min(255, Math.round(sum * scale));
  }
  return Uint8Array.from(img, (v) => lut[v]);
}
