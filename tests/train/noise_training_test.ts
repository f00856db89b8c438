import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { Params } from "../../lib/models/params.ts";
import type { Classifier } from "../../lib/models/small_cnn.ts";
import {
  antBatchSlices,
  antClassifierBatch,
  antGeneratorStep,
  type AntState,
  clippingAwareRescale,
  clippingAwareRescaled,
  clippingAwareRescaleTensor,
  clippingAwareScaleSquared,
  createAnt,
  disposeAnt,
  gaussianNoiseBatch,
  GNT_MULT_SIGMAS,
  rescaleToNorm,
  restartGenerator,
  saveGeneratorState,
  speckleNoiseBatch,
} from "../../lib/train/noise_training.ts";

await selectBackend("wasm");

/** ‖clip(x + ηδ) − x‖₂ of row `i`, in float64. */
function clippedNorm(x: ArrayLike<number>, delta: ArrayLike<number>, i: number, d: number, eta: number): number {
  let s = 0;
  for (let k = i * d; k < (i + 1) * d; k++) s += (Math.min(1, Math.max(0, x[k] + eta * delta[k])) - x[k]) ** 2;
  return Math.sqrt(s);
}

/** η with clippedNorm = ε by bisection (the norm is nondecreasing in η); ∞ where ε is out of reach. */
function bruteForceEta(x: ArrayLike<number>, delta: ArrayLike<number>, i: number, d: number, eps: number): number {
  let hi = 1;
  while (clippedNorm(x, delta, i, d, hi) < eps) {
    hi *= 2;
    if (hi > 1e12) return Infinity;
  }
  let lo = 0;
  for (let it = 0; it < 200; it++) {
    const mid = (lo + hi) / 2;
    if (clippedNorm(x, delta, i, d, mid) < eps) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** `n` rows of `d` values in [0.05, 0.95] and N(0, 1) directions. */
function randomCase(n: number, d: number, seed: number) {
  const rng = new Rng(seed);
  const x = Float32Array.from({ length: n * d }, () => 0.05 + 0.9 * rng.uniform());
  const delta = rng.normalArray(n * d);
  return { x, delta };
}

Deno.test("clippingAwareRescale: ‖clip(x + ηδ) − x‖ = ε with clipping active; η matches a brute-force bisection", () => {
  const n = 12, d = 40, eps = 2.2;
  const { x, delta } = randomCase(n, d, 3);
  const eta = clippingAwareRescale(x, delta, n, d, eps);
  const out = clippingAwareRescaled(x, delta, n, d, eps);
  let clipped = 0;
  for (let i = 0; i < n; i++) {
    assertAlmostEquals(clippedNorm(x, delta, i, d, eta[i]) / eps, 1, 1e-12, `row ${i}`);
    const bf = bruteForceEta(x, delta, i, d, eps);
    assertAlmostEquals(eta[i] / bf, 1, 1e-9, `row ${i}: η ${eta[i]} vs bisection ${bf}`);
    let s = 0;
    for (let k = i * d; k < (i + 1) * d; k++) {
      s += (out[k] - x[k]) ** 2;
      if (out[k] === 0 || out[k] === 1) clipped++;
    }
    assertAlmostEquals(Math.sqrt(s) / eps, 1, 1e-6, `row ${i}: returned inputs`);
  }
  assert(clipped >= n * 3, `only ${clipped} clipped coordinates: the test would not exercise clipping`);
});

Deno.test("clippingAwareRescale: ε beyond full clipping gives η past every breakpoint (reference: max f²)", () => {
  const n = 3, d = 8;
  const { x, delta } = randomCase(n, d, 4);
  const eta = clippingAwareRescale(x, delta, n, d, 100);
  for (let i = 0; i < n; i++) {
    let full = 0, maxF2 = 0;
    for (let k = i * d; k < (i + 1) * d; k++) {
      const space = delta[k] >= 0 ? 1 - x[k] : x[k];
      full += space * space;
      maxF2 = Math.max(maxF2, space * space / (delta[k] * delta[k]));
    }
    assertAlmostEquals(eta[i], Math.sqrt(maxF2), 1e-12 * Math.sqrt(maxF2));
    assertAlmostEquals(clippedNorm(x, delta, i, d, eta[i]), Math.sqrt(full), 1e-12);
  }
});

Deno.test("clippingAwareRescale: bad inputs are usage errors", () => {
  const x = new Float32Array([0.5, 0.5]), delta = new Float32Array([1, -1]);
  assertThrows(() => clippingAwareRescale(x, delta, 1, 2, 0), UsageError, "ε");
  assertThrows(() => clippingAwareRescale(x, delta, 1, 3, 1), UsageError, "n·d");
  assertThrows(() => clippingAwareRescale(new Float32Array([1.5, 0]), delta, 1, 2, 1), UsageError, "outside");
  assertThrows(() => clippingAwareRescale(x, new Float32Array([NaN, 0]), 1, 2, 1), UsageError, "finite");
});

Deno.test("clippingAwareRescaleTensor: η² and the norm agree with the float64 version (float32, 1e-4)", () => {
  const n = 6, h = 5, w = 4, c = 2, d = h * w * c, eps = 2.5;
  const { x, delta } = randomCase(n, d, 5);
  const eta = clippingAwareRescale(x, delta, n, d, eps);
  const before = tf.memory().numTensors;
  const [eta2, out] = tf.tidy(() => {
    const xt = tf.tensor4d(x, [n, h, w, c]), dt = tf.tensor4d(delta, [n, h, w, c]);
    return [clippingAwareScaleSquared(xt, dt, eps).dataSync(), clippingAwareRescaleTensor(xt, dt, eps).dataSync()];
  });
  assertEquals(tf.memory().numTensors, before);
  for (let i = 0; i < n; i++) {
    assertAlmostEquals(eta2[i] / eta[i] ** 2, 1, 1e-4, `row ${i}: η²`);
    assertAlmostEquals(clippedNorm(x, out.map((v, k) => v - x[k]), i, d, 1) / eps, 1, 1e-4, `row ${i}: norm`);
  }
});

Deno.test("rescaleToNorm: the gradient through the scale matches finite differences of the float64 rescaling", () => {
  const n = 3, d = 12, eps = 1.4;
  const { x, delta } = randomCase(n, d, 6);
  const weights = new Rng(7).normalArray(n * d);
  // L(δ) = Σ_k c_k·clip(x + η(δ)δ)_k in float64, η by bisection (independent of the library's closed form).
  const loss = (dl: Float64Array) => {
    let total = 0;
    for (let i = 0; i < n; i++) {
      const eta = bruteForceEta(x, dl, i, d, eps);
      for (let k = i * d; k < (i + 1) * d; k++) total += weights[k] * Math.min(1, Math.max(0, x[k] + eta * dl[k]));
    }
    return total;
  };
  const step = 1e-6;
  const numeric = Float64Array.from(delta, (_, k) => {
    const plus = Float64Array.from(delta), minus = Float64Array.from(delta);
    plus[k] += step;
    minus[k] -= step;
    return (loss(plus) - loss(minus)) / (2 * step);
  });
  const [analytic, frozenScale] = tf.tidy(() => {
    const xt = tf.tensor4d(x, [n, d, 1, 1]), dt = tf.tensor4d(delta, [n, d, 1, 1]);
    const c = tf.tensor4d(weights, [n, d, 1, 1]);
    const reference = clippingAwareScaleSquared(xt, dt, eps);
    const grad = tf.grad((v) => tf.sum(tf.mul(c, rescaleToNorm(xt, v as tf.Tensor4D, eps, reference))))(dt);
    // The gradient if η were a constant: c·η where the coordinate is not clipped.
    const eta = tf.sqrt(reference).reshape([n, 1, 1, 1]);
    const inside = tf.logicalAnd(tf.greater(tf.add(xt, tf.mul(eta, dt)), 0), tf.less(tf.add(xt, tf.mul(eta, dt)), 1));
    return [grad.dataSync(), tf.where(inside, tf.mul(c, eta), tf.zerosLike(c)).dataSync()];
  });
  const scale = Math.max(...numeric.map(Math.abs));
  let offConstant = 0;
  for (let k = 0; k < n * d; k++) {
    assert(Math.abs(analytic[k] - numeric[k]) <= 2e-3 * scale, `∂L/∂δ_${k}: ${analytic[k]} vs ${numeric[k]}`);
    offConstant = Math.max(offConstant, Math.abs(frozenScale[k] - numeric[k]));
  }
  assert(offConstant > 0.05 * scale, "the scale's own gradient matters (η is not a constant)");
});

Deno.test("gaussianNoiseBatch: first half untouched, second half clip(x + N(0, σ²)): mean 0.5, variance σ² (3 s.e.)", () => {
  const b = 64, side = 28, sigma = 0.1;
  const x = tf.fill([b, side, side, 1], 0.5) as tf.Tensor4D;
  const before = tf.memory().numTensors;
  const out = gaussianNoiseBatch(x, sigma, new Rng(1));
  const values = out.dataSync() as Float32Array;
  out.dispose();
  assertEquals(tf.memory().numTensors, before);
  const per = side * side, half = (b / 2) * per;
  assert(values.subarray(0, half).every((v) => v === 0.5), "the clean half is exact");
  const noisy = values.subarray(half);
  const count = noisy.length;
  let mean = 0;
  for (const v of noisy) mean += v / count;
  let variance = 0;
  for (const v of noisy) variance += (v - mean) ** 2 / (count - 1);
  // Clipping at 0.5 = 5σ changes the variance by < 1e-5 relative.
  assert(Math.abs(mean - 0.5) <= 3 * sigma / Math.sqrt(count), `mean ${mean}`);
  const se = sigma ** 2 * Math.sqrt(2 / (count - 1));
  assert(Math.abs(variance - sigma ** 2) <= 3 * se, `variance ${variance} vs ${sigma ** 2} ± ${3 * se}`);
  for (let i = b / 2; i < b; i++) {
    assert(noisy.subarray((i - b / 2) * per, (i - b / 2 + 1) * per).some((v) => v !== 0.5));
  }
  x.dispose();
});

Deno.test("gaussianNoiseBatch: numpy rounding of the cut (b = 5 keeps 2 clean, b = 7 keeps 4); values stay in [0, 1]", () => {
  for (const [b, clean] of [[5, 2], [7, 4], [1, 0], [128, 64]]) {
    const x = tf.tidy(() => tf.randomUniform([b, 3, 3, 1], 0, 1, "float32", 3) as tf.Tensor4D);
    const xs = x.dataSync();
    const out = gaussianNoiseBatch(x, 0.5, new Rng(2));
    const ys = out.dataSync();
    for (let i = 0; i < b; i++) {
      const same = [...Array(9).keys()].every((k) => ys[i * 9 + k] === xs[i * 9 + k]);
      assertEquals(same, i < clean, `b = ${b}, row ${i}`);
    }
    assert(ys.every((v) => v >= 0 && v <= 1));
    tf.dispose([x, out]);
  }
});

/** Var(clip(σZ, −a, a)) for Z ~ N(0, 1), by Simpson's rule on the normal density. */
function clippedVariance(sigma: number, a: number): number {
  const steps = 4000, top = 10;
  let inside = 0;
  const f = (t: number) => Math.min(sigma * sigma * t * t, a * a) * Math.exp(-t * t / 2) / Math.sqrt(2 * Math.PI);
  for (let k = 0; k <= steps; k++) {
    const t = -top + (2 * top * k) / steps;
    inside += f(t) * (k === 0 || k === steps ? 1 : k % 2 ? 4 : 2);
  }
  return inside * (2 * top) / steps / 3;
}

Deno.test("gaussianNoiseBatch with GNT_MULT_SIGMAS: each noisy image's variance is one set member's (4 s.e.), several drawn", () => {
  const b = 60, side = 28, per = side * side;
  const x = tf.fill([b, side, side, 1], 0.5) as tf.Tensor4D;
  const out = gaussianNoiseBatch(x, GNT_MULT_SIGMAS, new Rng(9));
  const values = out.dataSync() as Float32Array;
  const used = new Set<number>();
  for (let i = b / 2; i < b; i++) {
    const row = values.subarray(i * per, (i + 1) * per);
    const variance = row.reduce((s, v) => s + (v - 0.5) ** 2, 0) / per;
    const matches = GNT_MULT_SIGMAS.filter((s) => {
      const expected = clippedVariance(s, 0.5);
      return Math.abs(variance - expected) <= 4 * expected * Math.sqrt(2 / per);
    });
    assertEquals(matches.length, 1, `image ${i}: variance ${variance}`);
    used.add(matches[0]);
  }
  assert(used.size >= 4, `only σ ∈ {${[...used]}} drawn over 30 images`);
  tf.dispose([x, out]);
});

Deno.test("speckleNoiseBatch: x + x·N(0, σ²): on 0.5 images the noise s.d. is 0.5σ (3 s.e.); first half clean", () => {
  const b = 40, side = 28, sigma = 0.2;
  const x = tf.fill([b, side, side, 1], 0.5) as tf.Tensor4D;
  const out = speckleNoiseBatch(x, sigma, new Rng(4));
  const values = out.dataSync() as Float32Array;
  const half = (b / 2) * side * side;
  assert(values.subarray(0, half).every((v) => v === 0.5));
  const noisy = values.subarray(half);
  const variance = noisy.reduce((s, v) => s + (v - 0.5) ** 2, 0) / noisy.length;
  const expected = (0.5 * sigma) ** 2;
  assert(Math.abs(variance - expected) <= 3 * expected * Math.sqrt(2 / noisy.length), `variance ${variance}`);
  tf.dispose([x, out]);
});

Deno.test("noise batches: bad σ, fractions and shapes are usage errors", () => {
  const x = tf.zeros([4, 2, 2, 1]) as tf.Tensor4D;
  assertThrows(() => gaussianNoiseBatch(x, 0, new Rng(1)), UsageError, "σ");
  assertThrows(() => gaussianNoiseBatch(x, [], new Rng(1)), UsageError, "σ");
  assertThrows(() => gaussianNoiseBatch(x, [0.1, -1], new Rng(1)), UsageError, "σ");
  assertThrows(() => speckleNoiseBatch(x, 0.1, new Rng(1), 1.5), UsageError, "cleanFraction");
  assertThrows(
    () => gaussianNoiseBatch(tf.zeros([4, 4]) as unknown as tf.Tensor4D, 0.1, new Rng(1)),
    UsageError,
    "[b, h, w, c]",
  );
  x.dispose();
});

Deno.test("antBatchSlices: 30% current, 10% per saved generator up to 50%, rest clean (epoch 0: 50% current)", () => {
  const fractions = { cleanFraction: 0.5, currentFraction: 0.3, historyFraction: 0.1 };
  // 0.3·128 = 38.4 → 38, 0.4·128 = 51.2 → 51, 0.5·128 = 64; 0.3·300 = 90, 120, 150.
  assertEquals(antBatchSlices(128, 0, 5, fractions), { current: 64, history: [], cleanFrom: 64 });
  assertEquals(antBatchSlices(128, 3, 0, fractions), { current: 38, history: [], cleanFrom: 38 });
  assertEquals(antBatchSlices(128, 3, 1, fractions), { current: 38, history: [[38, 51]], cleanFrom: 51 });
  assertEquals(antBatchSlices(128, 3, 5, fractions), { current: 38, history: [[38, 51], [51, 64]], cleanFrom: 64 });
  assertEquals(antBatchSlices(300, 0, 2, fractions), { current: 150, history: [], cleanFrom: 150 });
  assertEquals(antBatchSlices(300, 1, 2, fractions), { current: 90, history: [[90, 120], [120, 150]], cleanFrom: 150 });
  assertEquals(antBatchSlices(300, 1, 9, fractions), { current: 90, history: [[90, 120], [120, 150]], cleanFrom: 150 });
});

/** A fixed 3-class MLP 36 → 16 (tanh) → 3 on [6, 6, 1] images. */
function tinyClassifier(seed: number): Classifier {
  const rng = new Rng(seed);
  const params = new Params();
  params.addNormal(rng, "w0", 36, 16, 3);
  params.addNormal(rng, "w1", 16, 3, 3);
  return {
    params,
    logits: (x) =>
      tf.tidy(() =>
        tf.matMul(
          tf.tanh(tf.matMul(tf.reshape(x, [x.shape[0], 36]), params.get("w0"))),
          params.get("w1"),
        ) as tf.Tensor2D
      ),
  };
}

function imagesAndLabels(classifier: Classifier, b: number, seed: number): { x: tf.Tensor4D; labels: tf.Tensor1D } {
  return tf.tidy(() => {
    const x = tf.randomUniform([b, 6, 6, 1], 0.1, 0.9, "float32", seed) as tf.Tensor4D;
    return { x, labels: tf.argMax(classifier.logits(x), 1) as tf.Tensor1D };
  });
}

/** Mean CE of the classifier on clip(x + η·g(z)) at ε, z fresh (no training). */
function antLoss(classifier: Classifier, state: AntState, x: tf.Tensor4D, labels: tf.Tensor1D, seed: number): number {
  return tf.tidy(() => {
    const z = tf.randomNormal(x.shape, 0, 1, "float32", seed) as tf.Tensor4D;
    const noisy = clippingAwareRescaleTensor(x, state.generator.noise(z), state.options.epsilon);
    const logits = classifier.logits(noisy);
    return tf.losses.softmaxCrossEntropy(tf.oneHot(labels, 3).toFloat(), logits).dataSync()[0];
  });
}

Deno.test("antGeneratorStep: training the generator raises the frozen classifier's CE on fresh noise", () => {
  const classifier = tinyClassifier(1);
  const { x, labels } = imagesAndLabels(classifier, 256, 2);
  const frozen = classifier.params.list().map((v) => Array.from(v.dataSync()));
  const state = createAnt(new Rng(3), { channels: 1, epsilon: 1.5, generatorLr: 1e-2 });
  const rng = new Rng(4);
  // The same z seeds before and after: each pair differs only by the generator's training.
  const seeds = [11, 12, 13, 14, 15, 16];
  const initial = seeds.map((s) => antLoss(classifier, state, x, labels, s));
  for (let step = 0; step < 40; step++) antGeneratorStep(classifier, state, x, labels, rng).dispose();
  const trained = seeds.map((s) => antLoss(classifier, state, x, labels, s));
  const gains = trained.map((v, i) => v - initial[i]);
  assert(gains.every((g) => g > 0.01), `CE ${initial} → ${trained}`);
  classifier.params.list().forEach((v, i) => assertEquals(Array.from(v.dataSync()), frozen[i], "classifier frozen"));
  disposeAnt(state);
  tf.dispose([x, labels]);
  classifier.params.dispose();
});

Deno.test("antClassifierBatch: perturbed rows at L2 size ε, clean rows exact; history slices use distinct saved generators", () => {
  const classifier = tinyClassifier(5);
  const b = 128, d = 36, eps = 1.2;
  const { x, labels } = imagesAndLabels(classifier, b, 6);
  const xs = x.dataSync();
  const state = createAnt(new Rng(7), { channels: 1, epsilon: eps, generatorLr: 1e-3 });
  // Two saved generators biased to +5 and −5: their noise moves (almost) every pixel up or down.
  for (const bias of [5, -5]) {
    tf.tidy(() => state.generator.params.get("conv3/b").assign(tf.fill([1], bias)));
    saveGeneratorState(state);
  }
  tf.tidy(() => state.generator.params.get("conv3/b").assign(tf.zeros([1])));
  for (const epoch of [0, 4]) {
    const out = antClassifierBatch(state, x, new Rng(8 + epoch), epoch);
    const ys = out.dataSync();
    out.dispose();
    const perturbedRows = 64;
    const meanShift: number[] = [];
    for (let i = 0; i < b; i++) {
      let s = 0, shift = 0;
      for (let k = i * d; k < (i + 1) * d; k++) {
        s += (ys[k] - xs[k]) ** 2;
        shift += (ys[k] - xs[k]) / d;
      }
      if (i < perturbedRows) assertAlmostEquals(Math.sqrt(s) / eps, 1, 1e-4, `epoch ${epoch}, row ${i}`);
      else assertEquals(s, 0, `epoch ${epoch}, row ${i} must stay clean`);
      meanShift.push(shift);
    }
    const signs = (from: number, to: number) => new Set(meanShift.slice(from, to).map(Math.sign));
    if (epoch === 0) {
      assertEquals(signs(0, 64).size, 2, "epoch 0: all 64 rows from the unbiased current generator");
    } else {
      assertEquals(signs(0, 38).size, 2, "the current generator's rows go both ways");
      const [first, second] = [signs(38, 51), signs(51, 64)];
      assertEquals([first.size, second.size], [1, 1], "each history slice comes from one biased generator");
      assert([...first][0] !== [...second][0], "the two slices use different saved generators");
    }
  }
  disposeAnt(state);
  tf.dispose([x, labels]);
  classifier.params.dispose();
});

Deno.test("ANT: tensors flat over generator steps, classifier batches and a restart; the restart replaces the generator", () => {
  const classifier = tinyClassifier(9);
  const { x, labels } = imagesAndLabels(classifier, 32, 10);
  const state = createAnt(new Rng(11), { channels: 1, kind: "3x3", epsilon: 1, generatorLr: 1e-3, restartLr: 1e-2 });
  const rng = new Rng(12);
  saveGeneratorState(state);
  const step = () => {
    antGeneratorStep(classifier, state, x, labels, rng).dispose();
    antClassifierBatch(state, x, rng, 1).dispose();
    return tf.memory().numTensors;
  };
  step();
  const counts = [step(), step()];
  const old = state.generator;
  const last = restartGenerator(classifier, state, rng, 3, () => imagesAndLabels(classifier, 32, 13));
  assert(last !== null && Number.isFinite(last.dataSync()[0]));
  last.dispose();
  assert(state.generator !== old, "a fresh generator");
  assertThrows(() => old.params.get("conv0/w").dataSync(), Error);
  step();
  counts.push(step(), step());
  assertEquals(new Set(counts).size, 1, `tensor counts ${counts}`);
  assertEquals(restartGenerator(classifier, state, rng, 0, () => imagesAndLabels(classifier, 32, 13)), null);
  const before = tf.memory().numTensors;
  disposeAnt(state);
  // Generator 8 variables + the fresh Adam's 2 β-power scalars (no moments before its first step) + 1 saved generator 8.
  assertEquals(before - tf.memory().numTensors, 18);
  tf.dispose([x, labels]);
  classifier.params.dispose();
});

Deno.test("createAnt: bad ε, fractions, learning rates and kinds are usage errors", () => {
  const ok = { channels: 1, epsilon: 10, generatorLr: 1e-4 };
  assertThrows(() => createAnt(new Rng(1), { ...ok, epsilon: 0 }), UsageError, "ε");
  assertThrows(() => createAnt(new Rng(1), { ...ok, cleanFraction: 1.2 }), UsageError, "cleanFraction");
  assertThrows(() => createAnt(new Rng(1), { ...ok, currentFraction: 0.7 }), UsageError, "≤ 1");
  assertThrows(() => createAnt(new Rng(1), { ...ok, generatorLr: -1 }), UsageError, "generatorLr");
  assertThrows(() => createAnt(new Rng(1), { ...ok, kind: "4x4" as "1x1" }), UsageError, "1x1, 3x3");
});
