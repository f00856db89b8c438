import { assert, assertAlmostEquals, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  augmentPoint,
  drawAugmentation,
  drawSilhouette,
  KITTI_AREA_RANGE,
  KittiMasksPairs,
  kittiMasksPreview,
} from "../../lib/data/kitti_masks.ts";

/** Mass (pixel count in 64-px units), centroid x, y (64-px units) and whether it touches the border. */
function moments(values: Float32Array, index: number, size: number): [number, number, number, boolean] {
  const scale = 64 / size;
  let mass = 0, sx = 0, sy = 0, border = false;
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      const v = values[index * size * size + row * size + col];
      if (!v) continue;
      mass += v;
      sx += v * (col + 0.5) * scale;
      sy += v * (row + 0.5) * scale;
      if (row === 0 || col === 0 || row === size - 1 || col === size - 1) border = true;
    }
  }
  return [mass * scale * scale, sx / mass, sy / mass, border];
}

function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

Deno.test("the rendered silhouette has the requested area and its centroid at (x, y)", () => {
  const rng = new Rng(1);
  const out = new Float32Array(4096);
  for (const [area, perImage] of [[30, 0.2], [100, 0.08], [300, 0.04], [600, 0.025]]) {
    let meanError = 0;
    const trials = 60;
    for (let k = 0; k < trials; k++) {
      out.fill(0);
      const x = 22 + 20 * rng.uniform(), y = 27 + 10 * rng.uniform();
      drawSilhouette(out, 0, x, y, area, (2 * rng.uniform() - 1) * 0.035, rng.uniform() < 0.5);
      const [mass, cx, cy, border] = moments(out, 0, 64);
      assert(!border);
      assert(Math.abs(mass / area - 1) < perImage, `area ${area}: drew ${mass} px`);
      assert(Math.hypot(cx - x, cy - y) < 1, `area ${area}: centroid (${cx}, ${cy}) vs (${x}, ${y})`);
      meanError += (mass / area - 1) / trials;
    }
    // Rasterising at pixel centres is unbiased: averaged over placements the area is near exact.
    assert(Math.abs(meanError) < 0.02, `area ${area}: mean relative error ${meanError}`);
  }
  // Upright and about 1:2.5 wide to high.
  out.fill(0);
  drawSilhouette(out, 0, 32, 32, 500, 0, false);
  let rows = 0, cols = 0;
  for (let r = 0; r < 64; r++) if (out.subarray(r * 64, r * 64 + 64).some((v) => v)) rows++;
  for (let c = 0; c < 64; c++) if (out.some((v, p) => v && p % 64 === c)) cols++;
  assert(rows / cols > 2.2 && rows / cols < 2.9, `${cols} × ${rows} px`);
});

Deno.test("maxDelta 1 pairs are consecutive frames of one walk, rendered where the factors say", () => {
  const data = new KittiMasksPairs({ sequences: 50, length: 30, maxDelta: 1, augment: false }, new Rng(2));
  const batch = data.samplePairs(400, new Rng(3));
  assertEquals(batch.shape, [64, 64, 1]);
  assertEquals(batch.x0.length, 400 * 4096);
  let checked = 0, moved = 0;
  for (let i = 0; i < batch.n; i++) {
    const s = batch.sequence[i], t0 = batch.frame0[i];
    assertEquals(batch.frame1[i] - t0, 1);
    const f0 = data.factorsAt(s, t0), f1 = data.factorsAt(s, t0 + 1);
    for (let c = 0; c < 3; c++) {
      assertAlmostEquals(batch.factors0[i * 3 + c], f0[c], 1e-3 * Math.max(1, f0[c]));
      assertAlmostEquals(batch.factors1[i * 3 + c], f1[c], 1e-3 * Math.max(1, f1[c]));
    }
    if (f0[0] !== f1[0]) moved++;
    for (const [images, f] of [[batch.x0, f0], [batch.x1, f1]] as const) {
      const [mass, cx, cy, border] = moments(images, i, 64);
      if (border || f[2] < 100) continue;
      checked++;
      assert(Math.abs(mass / f[2] - 1) < 0.08, `area ${mass} vs ${f[2]}`);
      assert(Math.hypot(cx - f[0], cy - f[1]) < 1, `centroid (${cx}, ${cy}) vs (${f[0]}, ${f[1]})`);
    }
  }
  assert(checked > 100, `${checked} unclipped frames checked`);
  assertEquals(moved, batch.n);
  assert(batch.x0.every((v) => v === 0 || v === 1) && batch.x1.every((v) => v === 0 || v === 1));
});

Deno.test("maxDelta 5: Δ uniform on 1..5, clipped at the sequence end, mean ≈ 3, larger factor changes", () => {
  const length = 50;
  const options = { sequences: 200, length, augment: false };
  const five = new KittiMasksPairs({ ...options, maxDelta: 5 }, new Rng(4));
  const batch = five.samplePairs(3000, new Rng(5));
  const counts = [0, 0, 0, 0, 0, 0];
  let sum = 0;
  for (let i = 0; i < batch.n; i++) {
    const delta = batch.frame1[i] - batch.frame0[i];
    assert(delta >= 1 && delta <= 5 && batch.frame1[i] <= length - 1);
    if (batch.frame0[i] + 5 <= length - 1) counts[delta]++;
    sum += delta;
  }
  // Exact mean: first frame uniform on 0..length−2, the gap clipped to the frames left.
  let expected = 0;
  for (let t = 0; t <= length - 2; t++) {
    for (let d = 1; d <= 5; d++) expected += Math.min(d, length - 1 - t) / ((length - 1) * 5);
  }
  // 3 less the gaps the last four first frames lose: (1 + 3 + 6 + 10) / (5 · 49).
  assertAlmostEquals(expected, 3 - 20 / ((length - 1) * 5), 1e-9);
  assertAlmostEquals(sum / batch.n, expected, 0.1);
  const unclipped = counts.reduce((a, b) => a + b, 0);
  for (let d = 1; d <= 5; d++) assertAlmostEquals(counts[d] / unclipped, 0.2, 0.03, `Δ = ${d}`);
  // Longer gaps sum more walk steps: |Δx| grows.
  const one = new KittiMasksPairs({ ...options, maxDelta: 1 }, new Rng(4)).samplePairs(3000, new Rng(5));
  const change = (b: typeof batch) =>
    median(Array.from({ length: b.n }, (_, i) => Math.abs(b.factors1[i * 3] - b.factors0[i * 3])));
  assert(change(batch) > 2 * change(one), `median |Δx| ${change(batch)} vs ${change(one)}`);
});

Deno.test("augmentation is one flip, rotation and shift per pair, applied to both frames", () => {
  const data = new KittiMasksPairs({ sequences: 100, length: 40, maxDelta: 5, augment: true }, new Rng(6));
  const batch = data.samplePairs(500, new Rng(7));
  let flipped = 0, decided = 0, checked = 0, largestShift = 0;
  for (let i = 0; i < batch.n; i++) {
    const p0 = data.factorsAt(batch.sequence[i], batch.frame0[i]);
    const p1 = data.factorsAt(batch.sequence[i], batch.frame1[i]);
    const q0 = Array.from(batch.factors0.subarray(i * 3, i * 3 + 3));
    const q1 = Array.from(batch.factors1.subarray(i * 3, i * 3 + 3));
    // A rigid map shared by both frames keeps their distance and areas.
    assertAlmostEquals(Math.hypot(q1[0] - q0[0], q1[1] - q0[1]), Math.hypot(p1[0] - p0[0], p1[1] - p0[1]), 1e-3);
    assertAlmostEquals(q0[2], p0[2], 1e-3 * p0[2]);
    assertAlmostEquals(q1[2], p1[2], 1e-3 * p1[2]);
    // Flipped or not, the object moves at most 5√2 px plus the 2° rotation's sweep about the centre.
    const flip = Math.hypot(q0[0] - p0[0], q0[1] - p0[1]) > Math.hypot(q0[0] - (64 - p0[0]), q0[1] - p0[1]);
    const shift = Math.hypot(q0[0] - (flip ? 64 - p0[0] : p0[0]), q0[1] - p0[1]);
    assert(shift < 5 * Math.SQRT2 + 0.035 * 32 * Math.SQRT2 + 1e-3, `shift ${shift}`);
    largestShift = Math.max(largestShift, shift);
    if (Math.abs(p1[0] - p0[0]) > 0.5) {
      decided++;
      if ((q1[0] - q0[0]) * (p1[0] - p0[0]) < 0) flipped++;
    }
    // The images move with the factors: their centroid difference is the factors' difference.
    const m0 = moments(batch.x0, i, 64), m1 = moments(batch.x1, i, 64);
    if (m0[3] || m1[3] || p0[2] < 100 || p1[2] < 100) continue;
    checked++;
    assert(Math.hypot(m0[1] - q0[0], m0[2] - q0[1]) < 1, `pair ${i}: first centroid off its factors`);
    const dx = (m1[1] - m0[1]) - (q1[0] - q0[0]), dy = (m1[2] - m0[2]) - (q1[1] - q0[1]);
    assert(Math.hypot(dx, dy) < 1, `pair ${i}: centroid difference off by (${dx}, ${dy})`);
  }
  assert(checked > 50 && decided > 50, `${checked} pairs checked on images, ${decided} with a clear Δx`);
  assert(flipped / decided > 0.3 && flipped / decided < 0.7, `${flipped} of ${decided} flipped`);
  assert(largestShift > 4, `largest shift ${largestShift}`);
  // The same augmentation moves points rigidly.
  const aug = drawAugmentation(new Rng(8));
  const [ax, ay] = augmentPoint(aug, 10, 20), [bx, by] = augmentPoint(aug, 13, 24);
  assertAlmostEquals(Math.hypot(bx - ax, by - ay), 5, 1e-9);
});

Deno.test("the same seeds give identical arrays, another sampling seed others", () => {
  const make = () =>
    new KittiMasksPairs({ size: 32, sequences: 20, length: 10, maxDelta: 5, augment: true }, new Rng(9));
  const a = make().samplePairs(16, new Rng(10)), b = make().samplePairs(16, new Rng(10));
  assertEquals(a, b);
  assertNotEquals(make().samplePairs(16, new Rng(11)).x0, a.x0);
  assertEquals(make().sampleFrames(16, new Rng(12)), make().sampleFrames(16, new Rng(12)));
});

Deno.test("32×32: the 64-px rendering halved, values in [0, 1], factors in 64-px units", () => {
  const data = new KittiMasksPairs({ size: 32, sequences: 100, length: 20, augment: false }, new Rng(13));
  assertEquals(data.imageShape, [32, 32, 1]);
  const batch = data.samplePairs(200, new Rng(14));
  assertEquals(batch.shape, [32, 32, 1]);
  assertEquals(batch.x0.length, 200 * 32 * 32);
  assert(batch.x0.every((v) => v >= 0 && v <= 1 && v * 4 === Math.round(v * 4)));
  let checked = 0;
  for (let i = 0; i < batch.n; i++) {
    const [mass, cx, cy, border] = moments(batch.x0, i, 32);
    const f = Array.from(batch.factors0.subarray(i * 3, i * 3 + 3));
    if (border || f[2] < 100) continue;
    checked++;
    assert(Math.abs(mass / f[2] - 1) < 0.08, `area ${mass} vs ${f[2]}`);
    assert(Math.hypot(cx - f[0], cy - f[1]) < 1, `centroid (${cx}, ${cy}) vs (${f[0]}, ${f[1]})`);
  }
  assert(checked > 30, `${checked} checked`);
});

Deno.test("frames for evaluation: continuous factors [n, 3] of every frame, within the walk's ranges", () => {
  const data = new KittiMasksPairs({ sequences: 30, length: 12, augment: false }, new Rng(15));
  const frames = data.sampleFrames(600, new Rng(16));
  assert(frames.factors instanceof Float64Array);
  assertEquals(frames.factors.length, 600 * 3);
  assertEquals(frames.observations.length, 600 * 4096);
  assertEquals(new Set(frames.frame).size, 12);
  for (let i = 0; i < frames.n; i++) {
    const f = data.factorsAt(frames.sequence[i], frames.frame[i]);
    for (let c = 0; c < 3; c++) assertEquals(frames.factors[i * 3 + c], f[c]);
    assert(f[0] >= 0 && f[0] < 64 && f[1] >= 0 && f[1] < 64);
    assert(f[2] >= KITTI_AREA_RANGE[0] * (1 - 1e-5) && f[2] <= KITTI_AREA_RANGE[1] * (1 + 1e-5));
  }
  // Every frame shows something: the centre is in the frame without augmentation.
  for (let i = 0; i < frames.n; i++) assert(moments(frames.observations, i, 64)[0] > 0, `frame ${i} is empty`);
  const preview = kittiMasksPreview(data, new Rng(17), 4, 4);
  assertEquals([preview.width, preview.height, preview.channels], [4 * 66 + 2, 2 * 66 + 2, 3]);
  assert(data.description.includes("KITTI"));
  assertEquals(data.factorNames, ["x", "y", "area"]);
});

Deno.test("bad options are refused with a message naming the option", () => {
  const rng = new Rng(0);
  assertThrows(() => new KittiMasksPairs({ maxDelta: 0 }, rng), RangeError, "maxDelta must be an integer ≥ 1, got 0");
  assertThrows(() => new KittiMasksPairs({ maxDelta: 1.5 }, rng), RangeError, "maxDelta");
  assertThrows(() => new KittiMasksPairs({ size: 48 as 64 }, rng), RangeError, "size must be 32 or 64, got 48");
  assertThrows(() => new KittiMasksPairs({ length: 1 }, rng), RangeError, "length must be an integer ≥ 2");
  assertThrows(() => new KittiMasksPairs({ sequences: 0 }, rng), RangeError, "sequences");
  assertThrows(() => new KittiMasksPairs({ areaRange: [50, 20] }, rng), RangeError, "areaRange");
  const data = new KittiMasksPairs({ sequences: 2, length: 3 }, rng);
  assertThrows(() => data.samplePairs(-1, rng), RangeError, "n must be");
  assertThrows(() => data.factorsAt(2, 0), RangeError, "outside");
});
