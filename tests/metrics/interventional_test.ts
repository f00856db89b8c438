import { assert, assertEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import { type Factors, FactorSpace, type GroundTruthDataset, type Observations } from "../../lib/data/ground_truth.ts";
import { dsprites } from "../../lib/data/dsprites.ts";
import { betaVaeScore } from "../../lib/metrics/beta_vae_score.ts";
import type { Representation } from "../../lib/metrics/representation.ts";
import { factorVaeScore } from "../../lib/metrics/factor_vae_score.ts";
import { irsScore } from "../../lib/metrics/irs.ts";

// Oracles after disentanglement_lib's beta_vae_test.py and factor_vae_test.py, on a tiny dataset
// whose 1×1×3 "images" hold the three factor values scaled to [0, 1].
const SIZES = [4, 5, 6];

/** A noiseless dataset: pixel i of an image is factor i / (size_i − 1). */
export function pixelFactors(sizes: number[] = SIZES): GroundTruthDataset {
  const space = new FactorSpace(sizes);
  const k = sizes.length;
  return {
    name: "pixel-factors",
    description: "test dataset: each pixel is one scaled factor",
    factorNames: sizes.map((_, i) => `f${i}`),
    factorSizes: sizes,
    imageShape: [1, 1, k],
    categorical: [],
    sampleFactors: (n: number, rng: Rng): Factors => space.sample(n, rng),
    observations: (factors: Factors): Observations => ({
      values: Float32Array.from(factors.values, (v, i) => v / (sizes[i % k] - 1)),
      n: factors.n,
      shape: [1, 1, k],
    }),
  };
}

const identity: Representation = (obs) =>
  Promise.resolve({ data: Float64Array.from(obs.values), rows: obs.n, cols: obs.values.length / obs.n });
const zeros: Representation = (obs) => Promise.resolve({ data: new Float64Array(obs.n * 4), rows: obs.n, cols: 4 });
const small = { batchSize: 5, numTrain: 2000, numEval: 1000 };

Deno.test("BetaVAE score: the identity representation is near 1, constant codes near chance", async () => {
  const dataset = pixelFactors();
  const good = await betaVaeScore(dataset, identity, new Rng(0), small);
  assert(good.train_accuracy >= 0.9 && good.train_accuracy <= 1, `train ${good.train_accuracy}`);
  assert(good.eval_accuracy >= 0.9 && good.eval_accuracy <= 1, `eval ${good.eval_accuracy}`);
  const bad = await betaVaeScore(dataset, zeros, new Rng(0), small);
  assert(bad.eval_accuracy <= 1 / 3 + 0.2, `eval ${bad.eval_accuracy}`);
});

Deno.test("FactorVAE score: the identity representation is near 1, constant codes score 0", async () => {
  const dataset = pixelFactors();
  const options = { ...small, numVarianceEstimate: 2000 };
  const good = await factorVaeScore(dataset, identity, new Rng(1), options);
  assert(good.train_accuracy >= 0.9 && good.train_accuracy <= 1, `train ${good.train_accuracy}`);
  assert(good.eval_accuracy >= 0.9 && good.eval_accuracy <= 1, `eval ${good.eval_accuracy}`);
  assertEquals(good.num_active_dims, 3);
  assertEquals(await factorVaeScore(dataset, zeros, new Rng(1), options), {
    train_accuracy: 0,
    eval_accuracy: 0,
    num_active_dims: 0,
  });
});

Deno.test("FactorVAE ignores a pruned constant code and counts only active dims", async () => {
  // Codes [0, f2, f0, f1]: the constant first code is pruned, the others are a permuted copy.
  const padded: Representation = async (obs) => {
    const z = await identity(obs);
    const data = new Float64Array(obs.n * 4);
    for (let r = 0; r < obs.n; r++) for (let j = 0; j < 3; j++) data[r * 4 + 1 + ((j + 1) % 3)] = z.data[r * 3 + j];
    return { data, rows: obs.n, cols: 4 };
  };
  const result = await factorVaeScore(pixelFactors(), padded, new Rng(2), { ...small, numVarianceEstimate: 1000 });
  assertEquals(result.num_active_dims, 3);
  assert(result.eval_accuracy >= 0.9, `eval ${result.eval_accuracy}`);
});

Deno.test("interventional scores are reproducible from the seed", async () => {
  const dataset = pixelFactors();
  // A noisy, entangled representation, so the scores are not trivially 0 or 1.
  const mixed: Representation = (obs) => {
    const data = new Float64Array(obs.n * 2);
    for (let r = 0; r < obs.n; r++) {
      const [a, b, c] = obs.values.subarray(r * 3, r * 3 + 3);
      data[r * 2] = a + 0.5 * b + 0.1 * Math.sin(17 * (r + c));
      data[r * 2 + 1] = c - 0.3 * a;
    }
    return Promise.resolve({ data, rows: obs.n, cols: 2 });
  };
  const options = { batchSize: 4, numTrain: 300, numEval: 200, numVarianceEstimate: 300 };
  const beta = [await betaVaeScore(dataset, mixed, new Rng(7), options)];
  beta.push(await betaVaeScore(dataset, mixed, new Rng(7), options));
  assertEquals(beta[0], beta[1]);
  const factor = [await factorVaeScore(dataset, mixed, new Rng(7), options)];
  factor.push(await factorVaeScore(dataset, mixed, new Rng(7), options));
  assertEquals(factor[0], factor[1]);
  const other = await factorVaeScore(dataset, mixed, new Rng(8), options);
  assert(other.eval_accuracy > 0 && other.eval_accuracy < 1, `eval ${other.eval_accuracy}`);
});

Deno.test("interventional metrics encode in chunks of at most 1,024 images and validate inputs", async () => {
  const dataset = pixelFactors();
  let largest = 0;
  const counting: Representation = (obs) => {
    largest = Math.max(largest, obs.n);
    return identity(obs);
  };
  await betaVaeScore(dataset, counting, new Rng(3), { batchSize: 600, numTrain: 3, numEval: 2 });
  await factorVaeScore(dataset, counting, new Rng(3), {
    batchSize: 7,
    numTrain: 500,
    numEval: 2,
    numVarianceEstimate: 3000,
  });
  assert(largest <= 1024 && largest > 900, `largest call ${largest}`);
  const rejects = async (promise: Promise<unknown>, text: string) => {
    let message = "";
    await promise.catch((error: Error) => (message = error.message));
    assert(message.includes(text), `"${message}" lacks "${text}"`);
  };
  await rejects(factorVaeScore(dataset, identity, new Rng(0), { batchSize: 1 }), "batchSize");
  await rejects(betaVaeScore(dataset, identity, new Rng(0), { numTrain: 0 }), "numTrain");
  const wrongRows: Representation = (obs) => Promise.resolve({ data: [], rows: obs.n - 1, cols: 0 });
  await rejects(betaVaeScore(dataset, wrongRows, new Rng(0), small), "rows");
  const nan: Representation = (obs) =>
    Promise.resolve({ data: new Float64Array(obs.n).fill(NaN), rows: obs.n, cols: 1 });
  await rejects(factorVaeScore(dataset, nan, new Rng(0), small), "non-finite");
});

Deno.test("interventional metrics on 32×32 dSprites with a hand-made position encoder", async () => {
  const dataset = dsprites({ size: 32 });
  // Codes: the sprite's centroid (x, y) and its area; position factors are read back, shape and scale partly.
  const centroid: Representation = (obs) => {
    const [h, w] = obs.shape;
    const data = new Float64Array(obs.n * 3);
    for (let r = 0; r < obs.n; r++) {
      let mass = 0, sx = 0, sy = 0;
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          const v = obs.values[r * h * w + y * w + x];
          mass += v;
          sx += v * x;
          sy += v * y;
        }
      }
      data.set([sx / mass / w, sy / mass / h, mass / 50], r * 3);
    }
    return Promise.resolve({ data, rows: obs.n, cols: 3 });
  };
  const options = { batchSize: 16, numTrain: 300, numEval: 200, numVarianceEstimate: 1000 };
  const factor = await factorVaeScore(dataset, centroid, new Rng(4), options);
  assertEquals(factor.num_active_dims, 3);
  // Three codes can win at most three of the five factors' votes.
  assert(factor.eval_accuracy > 0.45 && factor.eval_accuracy <= 0.65, `FactorVAE ${factor.eval_accuracy}`);
  const beta = await betaVaeScore(dataset, centroid, new Rng(4), { batchSize: 16, numTrain: 300, numEval: 200 });
  assert(beta.eval_accuracy > 0.6, `BetaVAE ${beta.eval_accuracy}`);
  const result = await irsScore(dataset, centroid, new Rng(4), { numTrain: 2000 });
  assertEquals(result.num_active_dims, 3);
  assert(result.avg_score > 0.5 && result.avg_score <= 1, `IRS ${result.avg_score}`);
  assertEquals(result.disentanglement_scores.length, 3);
});
