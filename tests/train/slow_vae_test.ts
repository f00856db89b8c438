import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import type { Decoder, Encoder } from "../../lib/models/vae.ts";
import { mlpVae } from "../../lib/models/mlp.ts";
import { Params } from "../../lib/models/params.ts";
import { PclHead } from "../../lib/train/pcl.ts";
import {
  adaPosteriors,
  gaussianEntropy,
  gaussianPairKl,
  laplaceCrossEntropy,
  PAIR_METHODS,
  pairLoss,
  type PairPosteriors,
  sharedDimensions,
  slowTransition,
} from "../../lib/train/slow_vae.ts";

await selectBackend("wasm");

const value = async (t: tf.Tensor) => (await t.data())[0];

/** ∫ f over [lo, hi] by the trapezoid rule on `n` intervals, in float64. */
function trapezoid(f: (z: number) => number, lo: number, hi: number, n = 400_000): number {
  const h = (hi - lo) / n;
  let sum = 0.5 * (f(lo) + f(hi));
  for (let i = 1; i < n; i++) sum += f(lo + i * h);
  return sum * h;
}

const normalPdf = (z: number, mean: number, sigma: number) =>
  Math.exp(-0.5 * ((z - mean) / sigma) ** 2) / (sigma * Math.sqrt(2 * Math.PI));

Deno.test("the Laplace cross-entropy (Eq. 22) matches −∫ q log p by quadrature", async () => {
  const triples = [[0, 1, 1], [0.3, 0.5, 6], [-1.2, 0.2, 6], [2, 1.5, 0.5], [0.05, 0.01, 10], [-0.4, 2, 3]];
  for (const [mean, sigma, rate] of triples) {
    const logP = (z: number) => Math.log(rate / 2) - rate * Math.abs(z);
    // The kink of log p at 0 is a grid point whenever it lies inside: split the range there.
    const lo = mean - 12 * sigma, hi = mean + 12 * sigma;
    const integrand = (z: number) => -normalPdf(z, mean, sigma) * logP(z);
    const expected = lo < 0 && hi > 0 ? trapezoid(integrand, lo, 0) + trapezoid(integrand, 0, hi) : trapezoid(
      integrand,
      lo,
      hi,
    );
    const ours = await value(laplaceCrossEntropy(tf.scalar(mean), tf.scalar(Math.log(sigma * sigma)), rate));
    assert(
      Math.abs(ours - expected) < 1e-4 * Math.abs(expected),
      `(${mean}, ${sigma}, ${rate}): ${ours} vs ${expected}`,
    );
  }
});

Deno.test("the Gaussian entropy is ½ log(2πe σ²) and matches −∫ q log q", async () => {
  for (const sigma of [0.05, 0.5, 1, 3]) {
    const expected = trapezoid(
      (z) => -normalPdf(z, 0.7, sigma) * Math.log(normalPdf(z, 0.7, sigma)),
      0.7 - 12 * sigma,
      0.7 + 12 * sigma,
    );
    const ours = await value(gaussianEntropy(tf.scalar(2 * Math.log(sigma))));
    assertAlmostEquals(ours, 0.5 * Math.log(2 * Math.PI * Math.E * sigma * sigma), 1e-5);
    assertAlmostEquals(ours, expected, 1e-5);
  }
});

Deno.test("gradients of the Laplace cross-entropy match the closed form and finite differences", async () => {
  const means = [-1, -0.2, 0, 0.4, 1.5], logVars = [-2, 0, 0.5, -1, -3], rate = 6;
  const meanDiff = tf.tensor1d(means), logVar = tf.tensor1d(logVars);
  const f = (m: tf.Tensor, v: tf.Tensor) => tf.sum(laplaceCrossEntropy(m, v, rate)) as tf.Scalar;
  const [gMean, gLogVar] = tf.grads(f)([meanDiff, logVar]);
  const gm = await gMean.data(), gv = await gLogVar.data();
  const erf = async (x: number) => await value(tf.erf(tf.scalar(x)));
  for (let i = 0; i < means.length; i++) {
    const sigma = Math.exp(0.5 * logVars[i]);
    // ∂E|X|/∂μ = 2Φ(μ/σ) − 1 = erf(μ/(σ√2)); ∂E|X|/∂σ = √(2/π) exp(−μ²/2σ²); ∂σ/∂ log σ² = σ/2.
    assertAlmostEquals(gm[i], rate * (await erf(means[i] / (sigma * Math.SQRT2))), 1e-4);
    const dSigma = rate * Math.sqrt(2 / Math.PI) * Math.exp(-0.5 * (means[i] / sigma) ** 2);
    assertAlmostEquals(gv[i], dSigma * sigma / 2, 1e-4);
  }
  // SlowVAE's transition terms of a small batch against central differences in every input.
  const rng = new Rng(5);
  const shape: [number, number] = [2, 3];
  const inputs = Array.from({ length: 4 }, (_, k) => rng.normalArray(6, k % 2 === 0 ? 1 : 0.5));
  const transition = (...t: tf.Tensor[]) =>
    slowTransition({
      mean0: t[0] as tf.Tensor2D,
      logVar0: t[1] as tf.Tensor2D,
      mean1: t[2] as tf.Tensor2D,
      logVar1: t[3] as tf.Tensor2D,
    }, rate).transition;
  const tensors = inputs.map((v) => tf.tensor2d(v, shape));
  const analytic = await Promise.all(tf.grads(transition)(tensors).map((g) => g.data()));
  const h = 1e-2;
  for (let k = 0; k < 4; k++) {
    for (let i = 0; i < 6; i++) {
      const shifted = (delta: number) =>
        inputs.map((v, j) => {
          const copy = Float32Array.from(v);
          if (j === k) copy[i] += delta;
          return tf.tensor2d(copy, shape);
        });
      const numeric = ((await value(transition(...shifted(h)))) - (await value(transition(...shifted(-h))))) / (2 * h);
      assertAlmostEquals(analytic[k][i], numeric, 2e-3 * Math.max(1, Math.abs(numeric)), `input ${k}[${i}]`);
    }
  }
});

/** A stub encoder reading posterior parameters from `[n, 1, 1, 2d]` inputs: means first, log-variances second. */
function readingEncoder(d: number): Encoder {
  return {
    params: new Params(),
    encode: (x) => {
      const flat = tf.reshape(x, [x.shape[0], 2 * d]) as tf.Tensor2D;
      return { mean: tf.slice(flat, [0, 0], [-1, d]), logVar: tf.slice(flat, [0, d], [-1, d]) };
    },
  };
}

/** A decoder with fixed zero logits: its Bernoulli reconstruction is ln 2 per pixel. */
function zeroDecoder(pixels: number): Decoder {
  return { params: new Params(), decode: (z) => tf.zeros([z.shape[0], 1, 1, pixels]) as tf.Tensor4D };
}

Deno.test("PM-VAE's pair KL matches hand values for known Gaussians", async () => {
  // KL(N(1, 4) ‖ N(0, 1)) = ½(ln ¼ + 5 − 1); KL(N(0, 1) ‖ N(1, 4)) = ½(ln 4 + 2/4 − 1).
  const forward = 0.5 * (Math.log(0.25) + 4), backward = 0.5 * (Math.log(4) + 0.5 - 1);
  const kl = gaussianPairKl(tf.scalar(1), tf.scalar(Math.log(4)), tf.scalar(0), tf.scalar(0));
  assertAlmostEquals(await value(kl), forward, 1e-6);
  // Two pairs, two latents: pair 0 holds (N(1, 4), N(0, 1)) and identical posteriors, pair 1 is identical.
  const x0 = tf.tensor4d([1, 0, Math.log(4), 0, 0, 0, 0, 0], [2, 1, 1, 4]);
  const x1 = tf.tensor4d([0, 0, 0, 0, 0, 0, 0, 0], [2, 1, 1, 4]);
  const terms = pairLoss("pm_vae", readingEncoder(2), zeroDecoder(4), x0, x1, tf.zeros([4, 2]) as tf.Tensor2D, {
    gamma: 3,
    beta: 2,
    reconstruction: () => tf.scalar(0.25),
  });
  assertAlmostEquals(await value(terms.kl_pair), (forward + backward) / 2, 1e-5);
  // KL to N(0, I) over the 4 images: only image 0 of pair 0 differs from the prior.
  const klNormal = 0.5 * (1 + 4 - Math.log(4) - 1) / 4;
  assertAlmostEquals(await value(terms.kl_normal), klNormal, 1e-5);
  assertAlmostEquals(await value(terms.total), 2 * 0.25 + 2 * klNormal + 3 * (forward + backward) / 2, 1e-5);
});

Deno.test("SlowVAE's loss combines its terms with the reference weights", async () => {
  // One pair, one latent: μ0 = 0.5, log σ0² = −1, μ1 = −0.25, log σ1² = −2.
  const x0 = tf.tensor4d([0.5, -1], [1, 1, 1, 2]), x1 = tf.tensor4d([-0.25, -2], [1, 1, 1, 2]);
  const terms = pairLoss("slow_vae", readingEncoder(1), zeroDecoder(2), x0, x1, tf.zeros([2, 1]) as tf.Tensor2D);
  const ce = async (m: number, lv: number) => await value(laplaceCrossEntropy(tf.scalar(m), tf.scalar(lv), 6));
  const crossEntropy = (await ce(0.75, -1)) + (await ce(-0.75, -2));
  const entropy = 0.5 * (-1.5 + Math.log(2 * Math.PI * Math.E));
  const klNormal = 0.5 * ((0.25 + Math.exp(-1) + 1 - 1) + (0.0625 + Math.exp(-2) + 2 - 1)) / 2;
  assertAlmostEquals(await value(terms.transition), crossEntropy - entropy, 1e-5);
  assertAlmostEquals(await value(terms.kl_normal), klNormal, 1e-5);
  // Zero logits on 2 "pixels": 2 ln 2 per image.
  assertAlmostEquals(await value(terms.reconstruction), 2 * Math.LN2, 1e-5);
  assertAlmostEquals(await value(terms.total), 4 * Math.LN2 + klNormal + 10 * (crossEntropy - entropy), 1e-4);
});

/** Posteriors of `rows` pairs over 10 latents where exactly `k` dimensions per pair change by a lot. */
function pairWithChanges(rng: Rng, rows: number, k: number): { q: PairPosteriors; changed: boolean[][] } {
  const d = 10;
  const mean0 = rng.normalArray(rows * d, 0.5), mean1 = Float32Array.from(mean0, (m) => m + 0.05 * rng.normal());
  const logVar0 = Float32Array.from({ length: rows * d }, () => -2 + 0.05 * rng.normal());
  const logVar1 = Float32Array.from(logVar0, (v) => v + 0.05 * rng.normal());
  const changed = Array.from({ length: rows }, () => Array(d).fill(false));
  for (let r = 0; r < rows; r++) {
    for (const i of rng.permutation(d).slice(0, k)) {
      changed[r][i] = true;
      // Changes of similar size: the threshold halves the range, so a much smaller change would count as shared.
      mean1[r * d + i] += (rng.uniform() < 0.5 ? -1 : 1) * (3 + 0.2 * rng.uniform());
    }
  }
  const t = (v: Float32Array) => tf.tensor2d(v, [rows, d]);
  return { q: { mean0: t(mean0), logVar0: t(logVar0), mean1: t(mean1), logVar1: t(logVar1) }, changed };
}

Deno.test("Ada-VAE finds exactly the changed dimensions and merges the shared ones", async () => {
  const rng = new Rng(7);
  for (const k of [1, 3, 5]) {
    const { q, changed } = pairWithChanges(rng, 8, k);
    const shared = await sharedDimensions(q).array();
    assertEquals(shared.map((row) => row.map((s) => s === 0)), changed, `k = ${k}`);
    for (const aggregation of ["gvae", "mlvae"] as const) {
      const merged = adaPosteriors(q, tf.tensor2d(shared), aggregation);
      const [m0, m1, v0, v1] = await Promise.all(
        [merged.mean0, merged.mean1, merged.logVar0, merged.logVar1].map((t) => t.array()),
      );
      const [o0, o1] = await Promise.all([q.mean0.array(), q.mean1.array()]);
      const [ov0, ov1] = await Promise.all([q.logVar0.array(), q.logVar1.array()]);
      for (let r = 0; r < 8; r++) {
        for (let i = 0; i < 10; i++) {
          if (changed[r][i]) {
            // Dimensions that changed keep their own posteriors.
            assertEquals([m0[r][i], m1[r][i], v0[r][i], v1[r][i]], [o0[r][i], o1[r][i], ov0[r][i], ov1[r][i]]);
            continue;
          }
          assertEquals([m0[r][i], v0[r][i]], [m1[r][i], v1[r][i]]);
          const [a, b] = [Math.exp(ov0[r][i]), Math.exp(ov1[r][i])];
          const expectedMean = aggregation === "gvae" ? (o0[r][i] + o1[r][i]) / 2 : (o0[r][i] / a + o1[r][i] / b) /
            (1 / a + 1 / b);
          const expectedVar = aggregation === "gvae" ? (a + b) / 2 : 2 / (1 / a + 1 / b);
          assertAlmostEquals(m0[r][i], expectedMean, 1e-5);
          assertAlmostEquals(Math.exp(v0[r][i]), expectedVar, 1e-5 * expectedVar);
        }
      }
    }
  }
});

Deno.test("PCL on encoder means: ln 2 for constant features, hand values for identity features", async () => {
  const params = new Params();
  const head = new PclHead(params, 3);
  const x0 = tf.tensor4d([0, 0, 0, 1, 2, 3, 4, 0, 1], [3, 1, 1, 3]);
  const constant: Encoder = {
    params: new Params(),
    encode: (x) => ({
      mean: tf.zeros([x.shape[0], 3]) as tf.Tensor2D,
      logVar: tf.zeros([x.shape[0], 3]) as tf.Tensor2D,
    }),
  };
  const flat = await tf.reshape(x0, [3, 3]).array() as number[][];
  const atInit = pairLoss("pcl", constant, null, x0, x0, null, { pclHead: head });
  assertAlmostEquals(await value(atInit.total), Math.LN2, 1e-6);
  assertAlmostEquals(await value(atInit.accuracy), 0.5, 1e-6);
  // h = x and x1 = x0: real logits are −Σ|h1 − h2| = 0, shuffled ones −Σ|x_i − x_{π(i)}|.
  const identity: Encoder = {
    params: new Params(),
    encode: (x) => ({
      mean: tf.reshape(x, [x.shape[0], 3]) as tf.Tensor2D,
      logVar: tf.zeros([x.shape[0], 3]) as tf.Tensor2D,
    }),
  };
  const permutation = Int32Array.of(2, 0, 1);
  const terms = pairLoss("pcl", identity, null, x0, x0, null, { pclHead: head, permutation });
  const softplus = (v: number) => Math.log1p(Math.exp(v));
  const fake = flat.map((row, i) => -row.reduce((s, v, j) => s + Math.abs(v - flat[permutation[i]][j]), 0));
  const expected = 0.5 * (Math.LN2 + fake.reduce((s, r) => s + softplus(r), 0) / 3);
  assertAlmostEquals(await value(terms.total), expected, 1e-5);
  assertAlmostEquals(await value(terms.accuracy), 0.5, 1e-6);
  params.dispose();
});

/** 4×4 images of a 2×2 block at (row, col); the pair's second block moves by one step in one coordinate. */
function blockPairs(rng: Rng, n: number): [tf.Tensor4D, tf.Tensor4D] {
  const inBlock = (offset: number) => offset === 0 || offset === 1;
  const draw = (r: number, c: number) =>
    Float32Array.from({ length: 16 }, (_, p) => inBlock(Math.floor(p / 4) - r) && inBlock(p % 4 - c) ? 1 : 0);
  const a = new Float32Array(n * 16), b = new Float32Array(n * 16);
  for (let i = 0; i < n; i++) {
    const r = rng.int(3), c = rng.int(3);
    const [r1, c1] = rng.uniform() < 0.5 ? [Math.min(2, r + 1), c] : [r, Math.min(2, c + 1)];
    a.set(draw(r, c), i * 16);
    b.set(draw(r1, c1), i * 16);
  }
  return [tf.tensor4d(a, [n, 4, 4, 1]), tf.tensor4d(b, [n, 4, 4, 1])];
}

Deno.test("every pair objective trains a tiny MLP VAE: the loss falls and tensors stay flat", async () => {
  for (const method of PAIR_METHODS) {
    const rng = new Rng(11);
    const { encoder, decoder } = mlpVae(rng, [4, 4, 1], 3, [32]);
    const headParams = new Params();
    const head = new PclHead(headParams, 3);
    const [x0, x1] = blockPairs(rng, 32);
    const variables = [
      ...encoder.params.list(),
      ...(method === "pcl" ? headParams.list() : decoder.params.list()),
    ];
    const optimizer = tf.train.adam(1e-2);
    const losses: number[] = [];
    let tensorsAfterWarmup = 0;
    for (let step = 0; step < 50; step++) {
      const noise = tf.tensor2d(rng.normalArray(64 * 3), [64, 3]);
      const permutation = rng.permutation(32);
      const loss = optimizer.minimize(
        () =>
          pairLoss(method, encoder, decoder, x0, x1, noise, { pclHead: head, permutation, gamma: 1, rate: 1 }).total,
        true,
        variables,
      )!;
      losses.push(await value(loss));
      tf.dispose([loss, noise]);
      if (step === 1) tensorsAfterWarmup = tf.memory().numTensors;
    }
    assertEquals(tf.memory().numTensors, tensorsAfterWarmup, method);
    const [first, last] = [mean(losses.slice(0, 5)), mean(losses.slice(-5))];
    assert(last < first - 0.05 * Math.abs(first), `${method}: ${first} → ${last}`);
    tf.dispose([x0, x1]);
    encoder.params.dispose();
    decoder.params.dispose();
    headParams.dispose();
    optimizer.dispose();
  }
});

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
