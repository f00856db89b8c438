/**
 * Data-parallel training of the supervised models: the small MNIST CNN under
 * trainClassifier and the CNN regressor under trainSplitRegressor, with 2
 * workers, train the model of 1 worker up to float32 summation order and
 * give the same bits twice; a model with batch statistics trains in one
 * worker. Each model's workers start once, at load, and serve both of its
 * 2-worker runs (a worker takes about a second to start) while the 1-worker
 * runs go on here.
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, largestRelativeDifference } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { loadDataset } from "../../lib/data/registry.ts";
import type { Split } from "../../lib/data/splits.ts";
import { cnnRegressor } from "../../lib/models/regressors.ts";
import { smallCnn } from "../../lib/models/small_cnn.ts";
import { trainClassifier } from "../../lib/train/classifier.ts";
import { type BatchInputs, DataParallel, shardGradients, type ShardLoss } from "../../lib/train/data_parallel.ts";
import { observationsTensor, trainSplitRegressor } from "../../lib/train/split_encoders.ts";
import {
  classifierShardLoss,
  regressionShardLoss,
  type RegressorReplicaArgs,
} from "../../lib/train/supervised_replicas.ts";
import { fakeContext } from "./fake_context.ts";

await selectBackend("wasm");

const REPLICAS = new URL("../../lib/train/supervised_replicas.ts", import.meta.url).href;

const largestLossDifference = (a: number[], b: number[]) =>
  Math.max(...a.map((v, i) => Math.abs(v - b[i]) / Math.abs(v)));

/** A run's parameters and losses. */
interface Trained {
  params: Float32Array[];
  losses: number[];
}

/**
 * Checks that two runs with 2 workers (`two`, `again`) are the same bits and returns how far they are from the
 * 1-worker run `one` (logged beside the gradient difference).
 */
function compareRuns(label: string, gradient: number, one: Trained, two: Trained, again: Trained) {
  assertEquals(again.params, two.params, `${label}: two runs with 2 workers differ`);
  assertEquals(again.losses, two.losses);
  const parameters = largestRelativeDifference(one.params, two.params);
  const loss = largestLossDifference(one.losses, two.losses);
  console.log(
    `${label}: gradient ${gradient.toExponential(2)}, parameters ${parameters.toExponential(2)}, losses ${
      loss.toExponential(2)
    }`,
  );
  return { parameters, loss };
}

const readAll = (variables: tf.Variable[]) => Promise.all(variables.map((v) => v.data() as Promise<Float32Array>));

/**
 * The largest difference, relative to the variable's largest gradient, between one batch's gradient over 2 shards
 * and over the whole batch here (the master's values).
 */
async function gradientDifference(
  workers: DataParallel,
  variables: tf.Variable[],
  loss: ShardLoss,
  inputs: BatchInputs,
) {
  const whole = await shardGradients(variables, loss, inputs, 0);
  const split = await workers.gradients(0, inputs);
  let largest = 0;
  for (const [i, variable] of variables.entries()) {
    const a = await whole.grads[i].data(), b = await split.grads[variable.name].data();
    let diff = 0, scale = 0;
    a.forEach((v, j) => {
      diff = Math.max(diff, Math.abs(v - b[j]));
      scale = Math.max(scale, Math.abs(v));
    });
    if (scale > 0) largest = Math.max(largest, diff / scale);
  }
  tf.dispose([...whole.grads, ...Object.values(split.grads)]);
  return largest;
}

/** Sets `variables` to `values` and returns them: each run starts from the same weights. */
function reset(variables: tf.Variable[], values: Float32Array[]): tf.Variable[] {
  tf.tidy(() => variables.forEach((v, i) => v.assign(tf.tensor(values[i], v.shape))));
  return variables;
}

const data = new Rng(2);
const digits = Float32Array.from({ length: 24 * 28 * 28 }, () => data.uniform());
const classes = Int32Array.from({ length: 24 }, () => data.int(10));
const cnn = smallCnn(new Rng(1));
const cnnStart = await readAll(cnn.params.list());
const cnnWorkers = new DataParallel({
  module: REPLICAS,
  exportName: "smallCnnReplica",
  args: { classes: 10 },
  workers: 2,
  backend: "wasm",
  variables: cnn.params.list(),
  loss: classifierShardLoss(cnn.logits),
});

const dataset = loadDataset("dsprites-rot", { size: 32 });
const regressorOptions = { size: 32, channels: 1, outputs: dataset.factorSizes.length } as const;
const regressor = cnnRegressor(new Rng(4), regressorOptions);
const regressorStart = await readAll(regressor.params.list());
const regressorWorkers = new DataParallel({
  module: REPLICAS,
  exportName: "regressorReplica",
  args: { model: "cnn", options: regressorOptions } satisfies RegressorReplicaArgs,
  workers: 2,
  backend: "wasm",
  variables: regressor.params.list(),
  loss: regressionShardLoss(regressor.predict),
});

/**
 * 4 Adam steps of the small CNN on 24 random digits in batches of 7 (the last of 3): its parameters and losses.
 * `parallel`: the running workers, or 2 as a plan for a model with batch statistics (which starts none).
 */
async function trainSmallCnn(parallel?: DataParallel | "batch statistics") {
  const tensors = tf.memory().numTensors;
  const optimizer = tf.train.adam(1e-3);
  const losses: number[] = [];
  const steps = await trainClassifier({
    images: digits,
    labels: classes,
    shape: [28, 28, 1],
    logits: cnn.logits,
    variables: reset(cnn.params.list(), cnnStart),
    optimizer,
    rng: new Rng(3),
    batch: 7,
    epochs: 1,
    parallel: parallel === "batch statistics"
      ? {
        module: REPLICAS,
        exportName: "smallCnnReplica",
        args: { classes: 10 },
        workers: 2,
        backend: "wasm",
        batchStatistics: true,
      }
      : parallel,
    afterStep: async (_step, loss) => void losses.push((await loss.data())[0]),
  });
  assertEquals(steps, 4);
  optimizer.dispose();
  assertEquals(tf.memory().numTensors, tensors, "tensors left on the main thread");
  return { params: await readAll(cnn.params.list()), losses };
}

Deno.test("the small CNN classifier: 2 workers train the model of 1 up to float32 summation order, the same bits twice", async () => {
  try {
    // The 1-worker run first: the workers, started at load, finish starting meanwhile.
    const one = await trainSmallCnn();
    reset(cnn.params.list(), cnnStart);
    const gradient = await gradientDifference(cnnWorkers, cnn.params.list(), classifierShardLoss(cnn.logits), {
      x: { data: digits.slice(0, 7 * 784), shape: [7, 28, 28, 1] },
      labels: { data: Float32Array.from(classes.subarray(0, 7)), shape: [7] },
    });
    const { parameters, loss } = compareRuns(
      "small CNN, 4 steps",
      gradient,
      one,
      await trainSmallCnn(cnnWorkers),
      await trainSmallCnn(cnnWorkers),
    );
    // One batch's gradient (shards 4 + 3): float32 rounding of its sums in another order, measured 9.3e-7 of each
    // variable's largest entry. Nonzero: the batch was split.
    assert(gradient > 0 && gradient < 5e-6, `largest relative gradient difference ${gradient}`);
    // After 4 steps (shards 4 + 3, the last batch 2 + 1), measured: parameters 9.6e-6 of each variable's largest value,
    // losses 9.7e-8. Adam's g/√v amplifies the rounding where a gradient is a near-cancelling sum; summing the
    // convolution gradients in another order on 1 worker (setConvGradientRoute) moves the parameters 5.0e-6–7.0e-6.
    assert(parameters > 0 && parameters < 5e-5, `largest relative parameter difference ${parameters}`);
    assert(loss < 1e-6, `largest relative loss difference ${loss}`);
  } finally {
    cnnWorkers.terminate();
  }
});

Deno.test("a classifier with batch statistics trains in one worker: the numbers of 1 worker", async () => {
  const one = await trainSmallCnn();
  const two = await trainSmallCnn("batch statistics");
  assertEquals(two.params, one.params);
  assertEquals(two.losses, one.losses);
});

/** 5 Adam steps of the CNN regressor in batches of 9 on 200 training points: its parameters and logged losses. */
async function trainCnnRegressor(parallel?: DataParallel) {
  const split: Split = {
    name: "extrapolation",
    sizes: dataset.factorSizes,
    train: Int32Array.from({ length: 200 }, (_, i) => 1_000 * i + 7),
    test: new Int32Array(),
  };
  const tensors = tf.memory().numTensors;
  const logged: { step: number; values: Record<string, number> }[] = [];
  reset(regressor.params.list(), regressorStart);
  await trainSplitRegressor(fakeContext(logged), {
    label: "cnn",
    regressor,
    split,
    input: (factors, rng) => observationsTensor(dataset, factors, rng),
    steps: 5,
    batch: 9,
    lr: 5e-4,
    batches: new Rng(5),
    logEvery: 1,
    evaluateEvery: 0,
    evaluate: () => Promise.resolve({}),
    parallel,
  });
  assertEquals(tf.memory().numTensors, tensors, "tensors left on the main thread");
  return {
    params: await readAll(regressor.params.list()),
    losses: logged.map(({ values }) => values["cnn/total"]),
    logged,
  };
}

Deno.test("the CNN regressor: 2 workers train the model of 1 up to float32 summation order, the same bits twice", async () => {
  try {
    // The 1-worker run first: the workers, started at load, finish starting meanwhile.
    const one = await trainCnnRegressor();
    reset(regressor.params.list(), regressorStart);
    const draws = new Rng(6);
    const gradient = await gradientDifference(
      regressorWorkers,
      regressor.params.list(),
      regressionShardLoss(regressor.predict),
      {
        x: { data: Float32Array.from({ length: 9 * 32 * 32 }, () => draws.uniform()), shape: [9, 32, 32, 1] },
        y: {
          data: Float32Array.from({ length: 9 * regressorOptions.outputs }, () => draws.uniform()),
          shape: [9, regressorOptions.outputs],
        },
      },
    );
    const two = await trainCnnRegressor(regressorWorkers);
    const { parameters, loss } = compareRuns(
      "CNN regressor, 5 steps",
      gradient,
      one,
      two,
      await trainCnnRegressor(regressorWorkers),
    );
    // One batch's gradient (shards 5 + 4), measured 1.0e-6 of each variable's largest entry.
    assert(gradient > 0 && gradient < 5e-6, `largest relative gradient difference ${gradient}`);
    // After 5 steps (shards of 5 + 4), measured: parameters 2.9e-5 (conv2/w: 1.6e-6 on a weight of 0.04, 0.3% of one
    // Adam step), losses 1.5e-7; the convolution gradients summed in another order on 1 worker: 1.5e-6–5.8e-6.
    assert(parameters > 0 && parameters < 5e-5, `largest relative parameter difference ${parameters}`);
    assert(loss < 1e-6, `largest relative loss difference ${loss}`);
    for (const { values } of two.logged) assertEquals(values["cnn/dp_workers"], 2);
  } finally {
    regressorWorkers.terminate();
  }
});
