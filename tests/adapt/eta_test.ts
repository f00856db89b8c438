import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { entropyMargin, Eta, type EtaOptions, etaSelect, RDumb } from "../../lib/adapt/eta.ts";
import { type BnCnn, bnCnn } from "../../lib/models/bn_cnn.ts";

await selectBackend("wasm");

// Float64 references, written from eq. 4.1 and oripress/CCC models/rdumb.py.
function softmax64(row: ArrayLike<number>): number[] {
  const values = Array.from(row), max = Math.max(...values);
  const e = values.map((v) => Math.exp(v - max));
  const total = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / total);
}

const entropy64 = (p: number[]) => -p.reduce((s, v) => s + (v > 0 ? v * Math.log(v) : 0), 0);

function cosine64(a: number[], b: number[]): number {
  const dot = a.reduce((s, v, i) => s + v * b[i], 0);
  return dot / Math.sqrt(a.reduce((s, v) => s + v * v, 0) * b.reduce((s, v) => s + v * v, 0));
}

/** Kept flags, weights and the p̄ update of one batch, in float64. */
function select64(rows: number[][], meanProbs: number[] | null, e0: number, margin = 0.05) {
  const probs = rows.map(softmax64);
  const entropies = probs.map(entropy64);
  const reliable = entropies.map((h) => h < e0);
  const kept = probs.map((p, b) => reliable[b] && (meanProbs === null || Math.abs(cosine64(p, meanProbs)) < margin));
  const weights = entropies.map((h, b) => kept[b] ? Math.exp(-(h - e0)) : 0);
  const keptProbs = probs.filter((_, b) => kept[b]);
  let next = meanProbs;
  if (keptProbs.length) {
    const m = keptProbs[0].map((_, j) => keptProbs.reduce((s, p) => s + p[j], 0) / keptProbs.length);
    next = meanProbs === null ? m : meanProbs.map((v, j) => 0.9 * v + 0.1 * m[j]);
  }
  return { reliable, kept, weights, entropies, next };
}

Deno.test("entropyMargin: thesis 0.4 ln C; code ln C / 2 − 1 (rdumb.py's ln 1000 / 2 − 1 at C = 1000)", () => {
  assertAlmostEquals(entropyMargin("thesis", 10), 0.4 * Math.log(10), 1e-15);
  assertAlmostEquals(entropyMargin("thesis", 1000), 2.763102111592855, 1e-15);
  assertAlmostEquals(entropyMargin("code", 1000), 2.4538776394910684, 1e-15);
  assertAlmostEquals(entropyMargin("code", 10), Math.log(10) / 2 - 1, 1e-15);
  assertThrows(() => entropyMargin("paper" as "code", 10), UsageError, "thesis, code");
  assertThrows(() => entropyMargin("code", 1), UsageError, "classes");
});

Deno.test("etaSelect on a hand-made batch: reliability filter, redundancy filter, detached weights", () => {
  // C = 4, E0 = 0.4 ln 4 ≈ 0.5545. Rows: confident class 0 (H ≈ 0.12, cos with p̄ ≈ 1: redundant),
  // uniform (H = ln 4: unreliable), confident class 1 (cos ≈ 0.02: kept), class 2 (kept), a class-0/1
  // mixture (H ≈ 0.43 reliable, cos ≈ 0.14: redundant), and H ≈ 0.60 just above E0 (unreliable).
  const rows = [[5, 0, 0, 0], [0, 0, 0, 0], [0, 5, 0, 0], [0, 0, 6, 0], [3, 5, 0, 0], [0, 0, 0, 2.8]];
  const meanProbs = [0.97, 0.01, 0.01, 0.01];
  const e0 = entropyMargin("thesis", 4);
  const expected = select64(rows, meanProbs, e0);
  assertEquals(expected.reliable, [true, false, true, true, true, false]);
  assertEquals(expected.kept, [false, false, true, true, false, false]);
  const before = tf.memory().numTensors;
  for (const [mean, want] of [[meanProbs, expected], [null, select64(rows, null, e0)]] as const) {
    const [reliable, kept, weights] = tf.tidy(() => {
      const s = etaSelect(tf.tensor2d(rows), mean ? tf.tensor1d(mean) : null, e0);
      return [s.reliable.dataSync(), s.kept.dataSync(), s.weights.dataSync()];
    });
    assertEquals(Array.from(reliable), want.reliable.map(Number));
    assertEquals(Array.from(kept), want.kept.map(Number));
    weights.forEach((w, b) => assertAlmostEquals(w, want.weights[b], 2e-6 * Math.max(1, want.weights[b])));
  }
  // Without p̄ every reliable sample is kept.
  assertEquals(select64(rows, null, e0).kept, expected.reliable);
  // The weights carry no gradient: d/dz Σ w_b = 0.
  const gradient = tf.tidy(() =>
    tf.grad((z) => tf.sum(etaSelect(z as tf.Tensor2D, tf.tensor1d(meanProbs), e0).weights))(tf.tensor2d(rows))
      .dataSync()
  );
  assert(gradient.every((g) => g === 0));
  assertEquals(tf.memory().numTensors, before);
});

/** Eta with p̄ readable. */
class ProbedEta extends Eta {
  meanProbsNow(): number[] | null {
    return this.meanProbs ? Array.from(this.meanProbs.dataSync()) : null;
  }
}

function images(seed: number, batch: number): tf.Tensor4D {
  const values = new Rng(seed).normalArray(batch * 784, 1);
  return tf.tensor4d(values.map((v) => Math.abs(v) / 3), [batch, 28, 28, 1]);
}

/** A BN model whose logits are confident enough (fc1 ×4) that some samples pass H < E0. */
function confidentModel(seed: number): BnCnn {
  const model = bnCnn(new Rng(seed), { norm: "batch" });
  const w = model.params.get("fc1/w");
  tf.tidy(() => w.assign(tf.mul(w, 4)));
  return model;
}

async function snapshotValues(model: BnCnn): Promise<Map<string, Float32Array>> {
  const entries = [...model.params.list(), ...model.stats.list()];
  return new Map(await Promise.all(entries.map(async (v) => [v.name, await v.data() as Float32Array] as const)));
}

const rowsOf = (logits: Float32Array, classes = 10) =>
  Array.from(
    { length: logits.length / classes },
    (_, b) => Array.from(logits.subarray(b * classes, (b + 1) * classes)),
  );

Deno.test("Eta.step: pre-update logits; p̄ (first: kept mean, then EMA 0.9); SGD-momentum on γ, β of mean w·H", async () => {
  const model = confidentModel(11);
  const learningRate = 0.1, margin = 0.4;
  const eta = new ProbedEta(model, { e0Rule: "thesis", cosineMargin: margin, learningRate });
  assertAlmostEquals(eta.e0, 0.4 * Math.log(10), 1e-15);
  const affine = model.affineParams();
  const affineNames = new Set(affine.map((v) => v.name));
  // torch SGD (momentum 0.9, dampening 0): buf ← 0.9 buf + g, θ ← θ − lr buf.
  let buffers: Float64Array[] | null = null;
  let meanProbs: number[] | null = null;
  let keptTotal = 0, reliableTotal = 0, steps = 0;
  for (const seed of [1, 2, 3]) {
    const x = images(seed, 16);
    const expectedLogits = tf.tidy(() => model.logits(x, { kind: "batch" }).dataSync() as Float32Array);
    const want = select64(rowsOf(expectedLogits), meanProbs, eta.e0, margin);
    const kept = want.kept.filter(Boolean).length;
    // The gradient of eq. 4.1 with the float64 mask and weights as constants.
    const gradients = tf.tidy(() => {
      const { grads } = tf.variableGrads(() => {
        const logProbs = tf.logSoftmax(model.logits(x, { kind: "batch" }));
        const entropies = tf.neg(tf.sum(tf.mul(tf.exp(logProbs), logProbs), 1));
        return tf.div(tf.sum(tf.mul(tf.tensor1d(want.weights), entropies)), Math.max(kept, 1)) as tf.Scalar;
      }, affine);
      return affine.map((v) => grads[v.name].dataSync());
    });
    const before = await snapshotValues(model);
    const logits = await eta.step(x);
    assertEquals(logits, expectedLogits);
    keptTotal += kept;
    reliableTotal += want.reliable.filter(Boolean).length;
    meanProbs = want.next;
    const got = eta.meanProbsNow();
    assertEquals(got === null, meanProbs === null);
    got?.forEach((v, j) => assertAlmostEquals(v, meanProbs![j], 1e-6));
    const after = await snapshotValues(model);
    for (const [name, value] of after) {
      if (!(affineNames.has(name) && kept > 0)) {
        assertEquals(value, before.get(name), `${name} must stay bit-identical`);
      }
    }
    if (kept === 0) continue;
    steps++;
    buffers = gradients.map((g, i) => Float64Array.from(g, (v, k) => (buffers ? 0.9 * buffers[i][k] : 0) + v));
    affine.forEach((v, i) => {
      const old = before.get(v.name)!, now = after.get(v.name)!;
      // 5e-7: a few float32 ulps at |γ| ≈ 1.
      now.forEach((value, k) => assertAlmostEquals(value, old[k] - learningRate * buffers![i][k], 5e-7, v.name));
      assertNotEquals(now, old);
    });
    x.dispose();
  }
  assertEquals([eta.steps, eta.reliableSamples, eta.updatedSamples], [3, reliableTotal, keptTotal]);
  assert(steps >= 2, `the test needs updates after the first step, got ${steps} steps with kept samples`);
  eta.dispose();
  model.dispose();
});

Deno.test("Eta.step: no update at all (not even momentum) when no sample is kept", async () => {
  const model = confidentModel(12);
  const eta = new Eta(model, { e0Rule: "thesis" });
  const x = images(4, 16);
  await eta.step(x);
  assert(eta.updatedSamples > 0);
  // Equal logits (fc1 zero) have H = ln 10 > E0: nothing is kept, so γ, β stay although momentum is non-zero.
  const w = model.params.get("fc1/w");
  tf.tidy(() => w.assign(tf.zerosLike(w)));
  const before = await snapshotValues(model);
  const updated = eta.updatedSamples;
  await eta.step(x);
  assertEquals(await snapshotValues(model), before);
  assertEquals(eta.updatedSamples, updated);
  x.dispose();
  eta.dispose();
  model.dispose();
});

Deno.test("RDumb: at every multiple of T the model, optimizer and p̄ restart bit-exactly; ETA does not", async () => {
  const batches = [1, 2, 3].map((seed) => images(20 + seed, 16));
  const options = { e0Rule: "thesis" as const, cosineMargin: 0.6, learningRate: 0.05 };
  const model = confidentModel(13);
  const rdumb = new RDumb(model, { ...options, resetEvery: 3 });
  const logits: Float32Array[] = [], states: Map<string, Float32Array>[] = [], updated: number[] = [];
  for (let round = 0; round < 2; round++) {
    for (const x of batches) {
      logits.push(await rdumb.step(x));
      states.push(await snapshotValues(model));
      updated.push(rdumb.updatedSamples);
    }
  }
  // Updates in steps 1 and 2 (momentum and p̄ in play), so a reset of only the weights would show.
  assert(updated[0] > 0 && updated[1] > updated[0] && updated[2] > updated[1], `kept totals ${updated}`);
  for (let k = 0; k < 3; k++) {
    assertEquals(logits[k + 3], logits[k], `step ${k + 3} vs ${k}`);
    assertEquals(states[k + 3], states[k], `state after step ${k + 3} vs ${k}`);
  }
  assertEquals(updated[5] - updated[2], updated[2], `kept totals ${updated}`);
  const count = tf.memory().numTensors;
  await rdumb.step(batches[0]);
  await rdumb.step(batches[1]);
  await rdumb.step(batches[2]);
  assertEquals(tf.memory().numTensors, count);
  rdumb.dispose();

  // ETA from the same Θ₀ agrees until the reset, then not.
  const plain = confidentModel(13);
  const eta = new Eta(plain, options);
  const plainLogits: Float32Array[] = [];
  for (let round = 0; round < 2; round++) for (const x of batches) plainLogits.push(await eta.step(x));
  assertEquals(plainLogits.slice(0, 3), logits.slice(0, 3));
  assertNotEquals(plainLogits[3], logits[3]);
  eta.dispose();
  plain.dispose();
  model.dispose();
  tf.dispose(batches);
});

Deno.test("Eta and RDumb: memory flat over steps; bad options throw UsageError", async () => {
  const model = confidentModel(14);
  const x = images(5, 8);
  const eta = new Eta(model, { e0Rule: "code", cosineMargin: 0.4 });
  await eta.step(x);
  const count = tf.memory().numTensors;
  for (let i = 0; i < 3; i++) await eta.step(x);
  assertEquals(tf.memory().numTensors, count);
  eta.dispose();
  for (
    const [options, message] of [
      [{ e0Rule: "code", resetEvery: 0 }, "resetEvery"],
      [{ e0Rule: "code", resetEvery: 2.5 }, "resetEvery"],
      [{ e0Rule: "e0" }, "thesis, code"],
      [{ e0Rule: "code", learningRate: 0 }, "learningRate"],
      [{ e0Rule: "code", momentum: 1 }, "momentum"],
      [{ e0Rule: "code", cosineMargin: -1 }, "cosineMargin"],
    ] as const
  ) {
    assertThrows(() => new RDumb(model, options as unknown as EtaOptions), UsageError, message);
  }
  const none = bnCnn(new Rng(1), { norm: "none" });
  assertThrows(() => new Eta(none, { e0Rule: "code" }), UsageError, "norm layers");
  none.dispose();
  x.dispose();
  model.dispose();
});
