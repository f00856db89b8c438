import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { attack } from "../../lib/attacks/attack.ts";
import {
  gaussianDirections,
  noiseLineSearch,
  uniformDirections,
  zeroAccuracyPerturbation,
} from "../../lib/attacks/noise.ts";
import type { AttackBatch, AttackModel } from "../../lib/attacks/types.ts";
import { BOX_W as W, boxBatch, boxLinearModel, boxMargin as f } from "./fixtures/linear_model.ts";

await selectBackend("wasm");

for (const [noise, distance] of [["gaussian", "l2"], ["uniform", "linf"], ["uniform", "l2"]] as const) {
  Deno.test(`noiseLineSearch ${noise}/${distance}: the scale where the drawn direction crosses the boundary (±1%)`, async () => {
    const model = boxLinearModel();
    const batch = boxBatch(24, 7);
    const before = tf.memory().numTensors;
    const adv = await noiseLineSearch({ noise, distance }).perturb(model, batch, null, new Rng(11));
    assertEquals(tf.memory().numTensors, before);
    let checked = 0;
    for (let i = 0; i < batch.n; i++) {
      const delta = Array.from({ length: 4 }, (_, j) => adv[i * 4 + j] - batch.x[i * 4 + j]);
      const row = adv.subarray(i * 4, (i + 1) * 4);
      assert(row.every((v) => v >= 0 && v <= 1), `sample ${i} leaves the bounds`);
      const fooled = (f(adv, i) > 0 ? 1 : 0) !== batch.labels[i];
      const norm = distance === "l2" ? Math.hypot(...delta) : Math.max(...delta.map(Math.abs));
      if (!fooled) {
        assertEquals(norm, 0, `sample ${i}: a failure returns the clean input`);
        continue;
      }
      // Off the box's faces the result is x + t·δ̂ with δ̂ the unit draw: t* = −f/(w·δ̂) in closed form.
      if (row.some((v) => v === 0 || v === 1)) continue;
      const unit = delta.map((v) => v / norm);
      const tStar = -f(batch.x, i) / W.reduce((s, w, j) => s + w * unit[j], 0);
      assert(Math.abs(norm - tStar) <= 0.01 * tStar, `sample ${i}: t ${norm} vs closed form ${tStar}`);
      checked++;
    }
    assert(checked >= 6, `only ${checked} samples crossed inside the box`);
    model.dispose();
  });
}

Deno.test("noiseLineSearch salt_and_pepper: lowers a tiny model's accuracy; failures are success 0", async () => {
  const model = boxLinearModel();
  const batch = boxBatch(16, 3);
  const rng = new Rng(5);
  const before = tf.memory().numTensors;
  const out = await attack(
    noiseLineSearch({ noise: "salt_and_pepper" }),
    model,
    {
      values: batch.x,
      n: batch.n,
      shape: batch.shape,
    },
    batch.labels,
    [null],
    rng,
  );
  assertEquals(tf.memory().numTensors, before);
  const rate = out.success[0].reduce((a, b) => a + b, 0) / batch.n;
  assert(rate > 0.5, `success rate ${rate}`);
  assert(out.raw[0].every((v) => v >= 0 && v <= 1));
  // Salt-and-pepper only moves values to the bounds.
  assert(out.raw[0].every((v, j) => v === batch.x[j] || v === 0 || v === 1));
  // A model that always answers 0 cannot be fooled on label 0.
  const constant: AttackModel = {
    bounds: [0, 1],
    gradient: false,
    logits: (x) => tf.tidy(() => tf.oneHot(tf.zeros([x.shape[0]], "int32"), 2).toFloat() as tf.Tensor2D),
  };
  for (const noise of ["gaussian", "uniform", "salt_and_pepper"] as const) {
    const failed = await attack(
      noiseLineSearch({ noise, gridSteps: 5 }),
      constant,
      {
        values: batch.x,
        n: batch.n,
        shape: batch.shape,
      },
      new Int32Array(batch.n),
      [null, 1],
      rng,
    );
    assertEquals(failed.success.map((s) => s.reduce((a, b) => a + b, 0)), [0, 0]);
  }
  model.dispose();
});

Deno.test("noiseLineSearch: bad options are usage errors", () => {
  assertThrows(
    () => noiseLineSearch({ noise: "pink" as "gaussian" }),
    UsageError,
    "gaussian, uniform, salt_and_pepper",
  );
  assertThrows(() => noiseLineSearch({ distance: "l0" as "l2" }), UsageError, "l2 or linf");
  assertThrows(() => noiseLineSearch({ maxScale: -1 }), UsageError, "maxScale");
  assertThrows(() => noiseLineSearch({ gridSteps: 0 }), UsageError, "gridSteps");
  assertThrows(() => noiseLineSearch({ bisectionSteps: -1 }), UsageError, "bisectionSteps");
});

/**
 * A two-class linear model on [4, 4, 1] inputs in [0, 1]: logits [0, w·x + b] with f(0.5…) = 0,
 * and `n` inputs near 0.5 placed at margins |f| ∈ [0.3, 1] on alternating sides, labelled by the model.
 */
function linearZeroAccuracyCase(n: number, seed: number) {
  const rng = new Rng(seed);
  const d = 16;
  const w = Float64Array.from(rng.normalArray(d));
  const b = -0.5 * w.reduce((a, v) => a + v, 0);
  const w2 = w.reduce((a, v) => a + v * v, 0);
  const f = (x: ArrayLike<number>, i: number) => w.reduce((s, wj, j) => s + wj * x[i * d + j], b);
  const x = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < d; j++) x[i * d + j] = 0.5 + 0.1 * (rng.uniform() - 0.5);
    const target = (i % 2 ? -1 : 1) * (0.3 + (0.7 * i) / (n - 1));
    const f0 = f(x, i);
    for (let j = 0; j < d; j++) x[i * d + j] += ((target - f0) * w[j]) / w2;
  }
  const weights = tf.tensor2d(Float32Array.from(w), [d, 1]);
  const model: AttackModel = {
    bounds: [0, 1],
    gradient: false,
    logits: (input) =>
      tf.tidy(() => {
        const score = tf.add(tf.matMul(tf.reshape(input, [input.shape[0], d]), weights), b);
        return tf.concat([tf.zerosLike(score), score], 1) as tf.Tensor2D;
      }),
  };
  const labels = Int32Array.from({ length: n }, (_, i) => (f(x, i) > 0 ? 1 : 0));
  const batch: AttackBatch = { x, n, shape: [4, 4, 1], labels };
  return { model, batch, w, f, d, dispose: () => weights.dispose() };
}

Deno.test("zeroAccuracyPerturbation: the closed-form flip point −f/(w·d̂) along d̂ when nothing clips (1e-6 relative)", async () => {
  const n = 10;
  const { model, batch, w, f, d, dispose } = linearZeroAccuracyCase(n, 21);
  const rng = new Rng(22);
  // Directions toward the boundary: −sign(f)·(w + noise), so the ray crosses it at t* = −f/(w·d̂) > 0.
  const directions = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    const side = Math.sign(f(batch.x, i));
    for (let j = 0; j < d; j++) directions[i * d + j] = -side * (w[j] + 0.5 * rng.normal());
  }
  const before = tf.memory().numTensors;
  const sizes = await zeroAccuracyPerturbation(model, batch, directions);
  assertEquals(tf.memory().numTensors, before);
  for (let i = 0; i < n; i++) {
    const row = Float64Array.from(directions.subarray(i * d, (i + 1) * d));
    const norm = Math.hypot(...row);
    const tStar = -f(batch.x, i) / w.reduce((s, wj, j) => s + wj * row[j] / norm, 0);
    assert(tStar > 0, `sample ${i} must cross`);
    for (let j = 0; j < d; j++) {
      const v = batch.x[i * d + j] + tStar * row[j] / norm;
      assert(v > 0 && v < 1, `sample ${i} would clip; the closed form needs no clipping`);
    }
    assertAlmostEquals(sizes[i] / tStar, 1, 1e-6, `sample ${i}: ${sizes[i]} vs ${tStar}`);
  }
  dispose();
});

Deno.test("zeroAccuracyPerturbation: ∞ where the direction never flips, 0 where the clean input is misclassified", async () => {
  const n = 6;
  const { model, batch, w, f, d, dispose } = linearZeroAccuracyCase(n, 23);
  // Every coordinate moves so that |f| grows, clipped or not: the decision never changes.
  const away = new Float32Array(n * d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) away[i * d + j] = Math.sign(f(batch.x, i)) * Math.sign(w[j]);
  assertEquals(Array.from(await zeroAccuracyPerturbation(model, batch, away)), Array(n).fill(Infinity));
  const wrong = { ...batch, labels: Int32Array.from(batch.labels, (l) => 1 - l) };
  assertEquals(Array.from(await zeroAccuracyPerturbation(model, wrong, away)), Array(n).fill(0));
  dispose();
});

Deno.test("zeroAccuracyPerturbation: with clipping the size is the clipped distance at the flip (brute-force scan)", async () => {
  const n = 4;
  const { model, batch, f, d, dispose } = linearZeroAccuracyCase(n, 25);
  const directions = gaussianDirections(n, d, new Rng(26));
  const sizes = await zeroAccuracyPerturbation(model, batch, directions);
  let clippedFlips = 0;
  for (let i = 0; i < n; i++) {
    // Scan η finely for the first flip of the clipped path and compare its clipped distance.
    const row = Float64Array.from(directions.subarray(i * d, (i + 1) * d));
    const norm = Math.hypot(...row);
    const point = (eta: number) =>
      Float64Array.from(row, (v, j) => Math.min(1, Math.max(0, batch.x[i * d + j] + eta * v / norm)));
    const side = Math.sign(f(batch.x, i));
    let expected = Infinity;
    for (let k = 1; k <= 200_000; k++) {
      const p = point(k * 1e-4);
      if (Math.sign(f(p, 0)) !== side) {
        expected = Math.hypot(...p.map((v, j) => v - batch.x[i * d + j]));
        if (p.some((v) => v === 0 || v === 1)) clippedFlips++;
        break;
      }
    }
    if (expected === Infinity) assertEquals(sizes[i], Infinity);
    else assertAlmostEquals(sizes[i], expected, 1e-4, `sample ${i}`);
  }
  assert(clippedFlips >= 2, `only ${clippedFlips} flips with clipped coordinates`);
  dispose();
});

Deno.test("zeroAccuracyPerturbation: bad options and directions are usage errors", async () => {
  const { model, batch, d, dispose } = linearZeroAccuracyCase(2, 27);
  const ones = new Float32Array(2 * d).fill(1);
  await assertRejects(() => zeroAccuracyPerturbation(model, batch, ones, { base: 1 }), UsageError, "base");
  await assertRejects(
    () => zeroAccuracyPerturbation(model, batch, ones, { bisections: 1.5 }),
    UsageError,
    "bisections",
  );
  await assertRejects(() => zeroAccuracyPerturbation(model, batch, ones.subarray(1)), UsageError, "n·h·w·c");
  await assertRejects(() => zeroAccuracyPerturbation(model, batch, new Float32Array(2 * d)), UsageError, "zero");
  dispose();
});

Deno.test("gaussianDirections and uniformDirections: the draws noiseLineSearch uses, in row-major order", () => {
  const a = gaussianDirections(3, 5, new Rng(4)), b = new Rng(4).normalArray(15);
  assertEquals(Array.from(a), Array.from(b));
  const u = uniformDirections(3, 5, new Rng(4));
  assert(u.every((v) => v >= -1 && v < 1) && u.length === 15);
});
