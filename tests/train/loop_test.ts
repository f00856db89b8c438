import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { laplaceArSources, mix, randomMixingMlp } from "../../lib/data/laplace_ar.ts";
import { CouplingFlow } from "../../lib/models/coupling_flow.ts";
import { Mlp } from "../../lib/models/mlp.ts";
import { Params } from "../../lib/models/params.ts";
import { cosineDecay, optimizerState, restoreOptimizer, type TrainPhase, trainPhase } from "../../lib/train/loop.ts";
import { PclHead, pclLoss } from "../../lib/train/pcl.ts";
import { slowFlowNll } from "../../lib/train/slow_flow.ts";
import { fakeContext } from "./fake_context.ts";

await selectBackend("wasm");

const dim = 4;
const data = (() => {
  const rng = new Rng(1);
  const sources = laplaceArSources(rng, 2000, dim);
  return mix(randomMixingMlp(rng, dim, 2), sources);
})();
const batchRng = new Rng(2);
function pairBatch(size: number): [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D] {
  const prev = new Float32Array(size * dim), next = new Float32Array(size * dim), other = new Float32Array(size * dim);
  for (let i = 0; i < size; i++) {
    const t = 1 + batchRng.int(1999), u = 1 + batchRng.int(1999);
    prev.set(data.subarray((t - 1) * dim, t * dim), i * dim);
    next.set(data.subarray(t * dim, (t + 1) * dim), i * dim);
    other.set(data.subarray((u - 1) * dim, u * dim), i * dim);
  }
  return [tf.tensor2d(prev, [size, dim]), tf.tensor2d(next, [size, dim]), tf.tensor2d(other, [size, dim])];
}

function slowFlowPhase(flow: CouplingFlow, optimizer: tf.Optimizer, startStep: number, steps: number): TrainPhase {
  return {
    label: "flow",
    steps,
    startStep,
    variables: flow.params.list(),
    optimizer,
    logEvery: 10,
    loss: () => {
      const [prev, next] = pairBatch(64);
      const a = flow.forwardWithLogDet(prev), b = flow.forwardWithLogDet(next);
      return slowFlowNll(a.z, b.z, a.logDet, b.logDet, 1);
    },
  };
}

Deno.test("SlowFlow training lowers the NLL and keeps tf.memory().numTensors flat over 50 steps", async () => {
  const flow = new CouplingFlow(new Rng(3), { dim, blocks: 2, hidden: 16, linear: true, coupling: "affine" });
  const optimizer = tf.train.adam(1e-2);
  const logged: { step: number; values: Record<string, number> }[] = [];
  const ctx = fakeContext(logged);
  await trainPhase(ctx, slowFlowPhase(flow, optimizer, 0, 10)); // warm-up: Adam creates its moments
  const before = tf.memory().numTensors;
  await trainPhase(ctx, slowFlowPhase(flow, optimizer, 10, 60));
  assertEquals(tf.memory().numTensors, before);
  const losses = logged.map((l) => l.values["flow/total"]);
  assertEquals(logged.map((l) => l.step), [10, 20, 30, 40, 50, 60]);
  assert(losses.at(-1)! < losses[0] - 0.1, `loss ${losses[0]} → ${losses.at(-1)}`);
  flow.dispose();
  optimizer.dispose();
});

Deno.test("PCL training lowers the contrastive loss and keeps tf.memory().numTensors flat", async () => {
  const params = new Params();
  const features = new Mlp(new Rng(4), params, "f/", [dim, 32, dim], { activation: "leaky_relu" });
  const head = new PclHead(params, dim);
  const optimizer = tf.train.adam(1e-2);
  const logged: { step: number; values: Record<string, number> }[] = [];
  const phase = (startStep: number, steps: number): TrainPhase => ({
    label: "pcl",
    steps,
    startStep,
    variables: params.list(),
    optimizer,
    logEvery: 25,
    loss: () => {
      const [prev, next, other] = pairBatch(128);
      return pclLoss(head, features.apply(next), features.apply(prev), features.apply(other));
    },
  });
  await trainPhase(fakeContext(logged), phase(0, 25));
  const before = tf.memory().numTensors;
  await trainPhase(fakeContext(logged), phase(25, 300));
  assertEquals(tf.memory().numTensors, before);
  const losses = logged.map((l) => l.values["pcl/total"]);
  assert(losses.at(-1)! < losses[0] - 0.05, `loss ${losses[0]} → ${losses.at(-1)}`);
  assert(logged.at(-1)!.values["pcl/accuracy"] > 0.6);
  params.dispose();
  optimizer.dispose();
});

Deno.test("cosineDecay: half a cosine from the initial rate to the floor", () => {
  const rates = [1, 2, 3, 4, 5].map(cosineDecay(1, 5));
  [1, 0.5 + 0.5 * Math.SQRT1_2, 0.5, 0.5 - 0.5 * Math.SQRT1_2, 0].forEach((v, i) =>
    assertAlmostEquals(rates[i], v, 1e-15)
  );
  assertAlmostEquals(cosineDecay(2, 3, 0.1)(3), 0.2, 1e-15);
});

Deno.test("trainPhase sets the optimizer's rate every step: a rate of 0 leaves Adam's variables where they were", async () => {
  const w = tf.variable(tf.tensor1d([1, -2]));
  const optimizer = tf.train.adam(0.1);
  const rates: number[] = [];
  await trainPhase(fakeContext([]), {
    label: "w",
    steps: 4,
    startStep: 0,
    variables: [w],
    optimizer,
    loss: () => ({ total: tf.sum(tf.square(w)) }),
    logEvery: 1,
    learningRate: (step) => {
      rates.push(step);
      return step <= 2 ? 0 : 0.1;
    },
    afterStep: (step) => {
      if (step === 2) assertEquals(Array.from(w.dataSync()), [1, -2]);
    },
  });
  assertEquals(rates, [1, 2, 3, 4]);
  // Steps 3 and 4 moved w toward 0 (Adam's first steps move each coordinate by about the rate).
  const [a, b] = w.dataSync();
  assert(a < 0.85 && b > -1.85, `${a}, ${b}`);
  tf.dispose([w]);
  optimizer.dispose();
});

Deno.test("a non-finite loss at a logged step stops the phase with an error naming it, and leaks no tensors", async () => {
  const w = tf.variable(tf.scalar(1));
  const optimizer = tf.train.sgd(0.1);
  const before = tf.memory().numTensors;
  let error: Error | null = null;
  try {
    await trainPhase(fakeContext([]), {
      label: "toy",
      steps: 10,
      startStep: 0,
      variables: [w],
      optimizer,
      logEvery: 2,
      // Finite at step 1, ∞ from step 2 on (log of 0).
      loss: (step) => ({ total: tf.mul(tf.log(tf.scalar(step >= 2 ? 0 : 1)), w) as tf.Scalar }),
    });
  } catch (e) {
    error = e as Error;
  }
  assertEquals(error?.message, "toy: the loss is -Infinity at step 2; the data or the settings diverge");
  assertEquals(tf.memory().numTensors, before);
  tf.dispose([w]);
  optimizer.dispose();
});

Deno.test("Adam restored from optimizerState continues bit for bit; without its accumulated betas it drifts", async () => {
  // A target that moves every step keeps the updates from vanishing.
  const train = async (w: tf.Variable, optimizer: tf.Optimizer, from: number, to: number) => {
    for (let step = from; step < to; step++) {
      const target = Math.sin(step);
      tf.dispose(optimizer.minimize(() => tf.sum(tf.square(tf.sub(w, target))) as tf.Scalar, true, [w])!);
    }
    return Float32Array.from(await w.data());
  };
  const fresh = () => tf.variable(tf.tensor1d([1, 2, 3, 4]));
  const straight = await train(fresh(), tf.train.adam(0.05), 0, 60);

  const w = fresh();
  const first = tf.train.adam(0.05);
  const halfway = await train(w, first, 0, 30);
  const saved = await optimizerState(first);
  const resume = async (arrays: typeof saved) => {
    const again = tf.variable(tf.tensor1d(halfway));
    const optimizer = tf.train.adam(0.05);
    // tfjs keys the moments by their variable's name.
    const named = Object.fromEntries(
      Object.entries(arrays).map(([key, value]) => [key.replace(w.name, again.name), { ...value, dtype: "f4" }]),
    );
    await restoreOptimizer(optimizer, named);
    return await train(again, optimizer, 30, 60);
  };
  assertEquals(await resume(saved), straight);
  const withoutBetas = Object.fromEntries(Object.entries(saved).filter(([key]) => !key.includes("accBeta")));
  assert(!(await resume(withoutBetas)).every((v, i) => v === straight[i]), "the test cannot tell the betas apart");
});
