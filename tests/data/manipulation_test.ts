/**
 * The Ch. 4 dataset manipulation: the reflection, the perturbation net and
 * its table, the manipulated and noisy datasets, and a few steps of the
 * perturbation training on a small dSprites with random reference VAEs.
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  noisyDataset,
  PerturbationNet,
  perturbedDataset,
  type ReferenceModel,
  reflect01,
  reflect01Value,
  trainPerturbation,
} from "../../lib/data/manipulation.ts";
import { loadDataset } from "../../lib/data/registry.ts";
import { mlpDecoder, mlpEncoder } from "../../lib/models/dislib_vae.ts";
import { bernoulliReconstruction } from "../../lib/train/vae_objectives.ts";

await selectBackend("wasm");

const DSPRITES = loadDataset("dsprites", { size: 32 });
const OPTIONS = { factors: 5, factorSizes: DSPRITES.factorSizes, imageShape: DSPRITES.imageShape, eps: 0.1 };

/** Random raw factor tuples `[n, 5]` of dSprites, corners of the grid included. */
function factorTuples(n: number, rng: Rng): Float32Array {
  const w = Float32Array.from(DSPRITES.sampleFactors(n, rng).values);
  DSPRITES.factorSizes.forEach((size, i) => {
    w[i] = 0;
    w[5 + i] = size - 1;
  });
  return w;
}

/**
 * At initialisation ε·m is tiny (|m| ≈ 0.03·ε); scaled weights make it span ±ε over a wide s-range, where tanh
 * bends (interpolation errors would show) and x + ε·m leaves [0, 1] (the reflection acts).
 */
function amplify(net: PerturbationNet): void {
  for (const [key, factor] of [["scalar/w", 8], ["upconv2/w", 200]] as const) {
    const v = net.params.get(key);
    tf.tidy(() => v.assign(tf.mul(v, factor)));
  }
}

/** Every variable of `models`, read back. */
async function weights(models: ReferenceModel[]): Promise<Float32Array[]> {
  const vars = models.flatMap((m) => [...m.encoder.params.list(), ...m.decoder.params.list()]);
  return await Promise.all(vars.map((v) => v.data() as Promise<Float32Array>));
}

Deno.test("reflect01 mirrors at 0 and 1 and is the identity on [0, 1]", async () => {
  const before = tf.memory().numTensors;
  const input = [-0.1, 1.2, 0, 0.3, 1, -0.5, 1.5];
  const expected = [0.1, 0.8, 0, 0.3, 1, 0.5, 0.5];
  const x = tf.tensor1d(input);
  const y = reflect01(x);
  const values = await y.data();
  tf.dispose([x, y]);
  expected.forEach((e, i) => {
    assertAlmostEquals(values[i], e, 1e-6);
    assertAlmostEquals(reflect01Value(input[i]), e, 1e-15);
  });
  for (let v = 0; v <= 1; v += 1 / 64) assertEquals(reflect01Value(v), v);
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("the perturbation net: s is the affine map of w/(size − 1), |ε·m| ≤ ε, the table matches m to 1e-3", async () => {
  const before = tf.memory().numTensors;
  const net = new PerturbationNet(new Rng(1), OPTIONS);
  assertEquals(net.params.list().length, 2 + 2 + 3 * 2 + 2); // fc1, fc2, three up-convolutions, scalar
  amplify(net);
  const n = 24;
  const w = factorTuples(n, new Rng(2));
  const wT = tf.tensor2d(w, [n, 5]);
  const s = net.scalar(wT), m = net.apply(wT);
  assertEquals(m.shape, [n, 32, 32, 1]);
  const sValues = s.dataSync(), mValues = m.dataSync();
  const kernel = net.params.get("scalar/w").dataSync(), bias = net.params.get("scalar/b").dataSync()[0];
  const table = await net.tabulate();
  assertEquals([table.points, table.shape, table.eps], [4096, [32, 32, 1], 0.1]);
  const out = new Float32Array(1024);
  let maxError = 0, maxAbs = 0;
  for (let r = 0; r < n; r++) {
    const tuple = w.subarray(5 * r, 5 * r + 5);
    const expected = tuple.reduce((acc, v, i) => acc + kernel[i] * v / (DSPRITES.factorSizes[i] - 1), bias);
    assertAlmostEquals(sValues[r], expected, 1e-5);
    assert(sValues[r] >= table.sMin - 1e-5 && sValues[r] <= table.sMax + 1e-5);
    table.at(tuple, out, 0);
    for (let p = 0; p < 1024; p++) {
      maxError = Math.max(maxError, Math.abs(out[p] - mValues[r * 1024 + p]));
      maxAbs = Math.max(maxAbs, Math.abs(mValues[r * 1024 + p]));
    }
  }
  // The grid corners (rows 0 and 1 of w) reach the ends of the s-range.
  const corners = [0, 1].map((r) => sValues[r]);
  assertAlmostEquals(Math.min(...corners, ...sValues), table.sMin, 1e-5);
  assertAlmostEquals(Math.max(...corners, ...sValues), table.sMax, 1e-5);
  assert(maxError <= 1e-3, `table error ${maxError}`);
  assert(maxAbs <= 0.1 + 1e-7 && maxAbs > 0.09, `max |ε·m| ${maxAbs}`); // float32 ε
  console.log(`table vs net: max error ${maxError.toExponential(2)}, max |ε·m| ${maxAbs.toFixed(4)}`);
  tf.dispose([wT, s, m]);
  net.dispose();
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("perturbed and noisy datasets keep the factors, stay in [0, 1] and within ε of the base", async () => {
  const net = new PerturbationNet(new Rng(3), OPTIONS);
  amplify(net);
  const table = await net.tabulate(512);
  const mod = perturbedDataset(DSPRITES, table), noisy = noisyDataset(DSPRITES, 0.1, 7);
  assertEquals([mod.name, noisy.name], ["dsprites-mod", "dsprites-noise"]);
  assertEquals(mod.factorSizes, DSPRITES.factorSizes);
  const n = 16;
  const factors = mod.sampleFactors(n, new Rng(4));
  assertEquals(factors, DSPRITES.sampleFactors(n, new Rng(4)));
  const base = DSPRITES.observations(factors, new Rng(5));
  const m = net.apply(tf.tensor2d(Float32Array.from(factors.values), [n, 5])).dataSync();
  for (const dataset of [mod, noisy]) {
    const x = dataset.observations(factors, new Rng(5));
    assertEquals(x.shape, base.shape);
    let max = 0;
    for (let i = 0; i < x.values.length; i++) {
      assert(x.values[i] >= 0 && x.values[i] <= 1, `${dataset.name}: pixel ${i} = ${x.values[i]}`);
      max = Math.max(max, Math.abs(x.values[i] - base.values[i]));
      // Where no reflection happens, the manipulated pixel is x + ε·m(w).
      const sum = base.values[i] + m[i];
      if (dataset === mod && sum >= 0 && sum <= 1) assertAlmostEquals(x.values[i], sum, 1e-3);
    }
    assert(max <= 0.1 + 1e-6 && max > 0.09, `${dataset.name}: max change ${max}`);
  }
  // The same image gets the same noise in another batch; another image other noise.
  const tuple = factors.values.slice(0, 5);
  const again = noisy.observations(
    { values: Int32Array.from([...factors.values.slice(5, 10), ...tuple]), n: 2 },
    new Rng(9),
  );
  const first = noisy.observations(factors, new Rng(5)).values;
  assertEquals(again.values.subarray(1024, 2048), first.subarray(0, 1024));
  assert(again.values.subarray(0, 1024).some((v, i) => v !== first[i]));
  assertThrows(() => noisyDataset(DSPRITES, 0, 1), UsageError, "(0, 0.5]");
  assertThrows(() => noisyDataset(DSPRITES, 0.6, 1), UsageError, "(0, 0.5]");
  assertThrows(() => new PerturbationNet(new Rng(1), { ...OPTIONS, eps: 0.51 }), UsageError, "(0, 0.5]");
  net.dispose();
});

Deno.test("trainPerturbation: 3 steps on dSprites 32×32 with random reference VAEs; gap finite, references intact, no leaks", async () => {
  const arch = { size: 32 as const, channels: 1, latents: 2 };
  const reference = (seed: number): ReferenceModel => {
    const rng = new Rng(seed);
    return { encoder: mlpEncoder(rng, arch), decoder: mlpDecoder(rng, arch) };
  };
  const ent = [reference(10)], dis = [reference(11)];
  const net = new PerturbationNet(new Rng(12), OPTIONS);
  const referenceBefore = await weights([...ent, ...dis]);
  const netBefore = await Promise.all(net.params.list().map((v) => v.data()));
  const tensorsBefore = tf.memory().numTensors;

  // With no steps the final gap is L_ent − L_dis of one batch, as vae_objectives' Bernoulli reconstruction gives it.
  const batch = 4, samples = 5;
  const untrained = await trainPerturbation(net, DSPRITES, ent, dis, { steps: 0, batch, lr: 1e-3, rng: new Rng(20) });
  assertEquals(untrained.history, []);
  const replay = new Rng(20);
  const factors = DSPRITES.sampleFactors(batch, replay);
  const images = DSPRITES.observations(factors, replay);
  const expected = tf.tidy(() => {
    const w = tf.tensor2d(Float32Array.from(factors.values), [batch, 5]);
    const x = tf.tensor4d(images.values, [batch, 32, 32, 1]);
    const m = net.apply(w);
    const target = tf.tile(reflect01(tf.add(x, m)), [samples, 1, 1, 1]) as tf.Tensor4D;
    const loss = ({ encoder, decoder }: ReferenceModel) => {
      const q = encoder.encode(x);
      const noise = tf.tensor2d(replay.normalArray(samples * batch * 2), [samples * batch, 2]);
      const z = tf.add(
        tf.tile(q.mean, [samples, 1]),
        tf.mul(tf.exp(tf.mul(0.5, tf.tile(q.logVar, [samples, 1]))), noise),
      );
      return bernoulliReconstruction(decoder.decode(z as tf.Tensor2D), target).dataSync()[0];
    };
    return { gap: loss(ent[0]) - loss(dis[0]), maxAbs: tf.max(tf.abs(m)).dataSync()[0] };
  });
  assertAlmostEquals(untrained.gap, expected.gap, 1e-3 * Math.max(1, Math.abs(expected.gap)));
  assertAlmostEquals(untrained.maxAbs, expected.maxAbs, 1e-6);

  const logged: Record<string, number>[] = [];
  const result = await trainPerturbation(net, DSPRITES, ent, dis, {
    steps: 3,
    batch,
    lr: 1e-3,
    rng: new Rng(21),
    log: (step, terms) => logged.push({ step, ...terms }),
  });
  assertEquals(result.history.map((h) => h.step), [0, 1, 2]);
  assert(result.history.every((h) => Number.isFinite(h.gap)) && Number.isFinite(result.gap), JSON.stringify(result));
  assert(result.maxAbs > 0 && result.maxAbs <= 0.1 + 1e-7, `maxAbs ${result.maxAbs}`);
  logged.forEach((terms, i) => {
    assertAlmostEquals(terms.gap, terms.ent - terms.dis, 1e-3 * Math.abs(terms.ent));
    assertEquals(terms.gap, result.history[i].gap);
  });
  console.log(`gap per step ${result.history.map((h) => h.gap.toFixed(2)).join(", ")}; final ${result.gap.toFixed(2)}`);

  assertEquals(await weights([...ent, ...dis]), referenceBefore);
  const netAfter = await Promise.all(net.params.list().map((v) => v.data()));
  assert(netAfter.some((values, i) => values.some((v, j) => v !== netBefore[i][j])), "ψ did not move");
  assertEquals(tf.memory().numTensors, tensorsBefore);

  // shouldStop ends training before the next step.
  const stopped = await trainPerturbation(net, DSPRITES, ent, dis, {
    steps: 5,
    batch: 2,
    lr: 1e-3,
    decoderSteps: 1,
    latentSamples: 1,
    rng: new Rng(22),
    shouldStop: () => logged.length >= 4,
    log: (step, terms) => logged.push({ step, ...terms }),
  });
  assertEquals(stopped.history.length, 1);
  await assertRejects(
    () => trainPerturbation(net, DSPRITES, ent, ent, { steps: 1, batch, lr: 1e-3, rng: new Rng(1) }),
    UsageError,
    "twice",
  );
  assertEquals(tf.memory().numTensors, tensorsBefore);
  for (const model of [...ent, ...dis]) {
    model.encoder.params.dispose();
    model.decoder.params.dispose();
  }
  net.dispose();
});
