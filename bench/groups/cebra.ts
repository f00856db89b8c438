/**
 * The `cebra` group (`--only cebra`) times CEBRA training steps at batch {@linkcode CEBRA_BATCH}
 * (lib/models/cebra_models.ts, lib/contrastive/cebra_step.ts `cebraStep`, the step `Cebra.fit` takes, with
 * lib/contrastive/infonce.ts), each beside bench/cebra_reference.py, the package's encoder, criterion and solver
 * step in PyTorch on our initial weights and the same windows: `cebra-offset10-step-512` (offset10-model, 120
 * inputs, H 32, E 3, cosine InfoNCE τ 1, Adam 3e-4) and `cebra-offset1-mse-step-512` (offset1-model-mse, 100
 * inputs, E 2, euclidean τ 1, Adam 1e-4). A step gathers the reference, positive and negative windows of a fixed
 * index batch from the data tensor (ours embeds the three in one forward, the package in three), computes the
 * loss, takes an Adam step and reads the loss back; the first two steps' losses and the reference windows'
 * embeddings are compared with PyTorch's before timing. Goal: ≤ 2× PyTorch on the median paired ratio. The sampler
 * draws are plain JS, ours only (no reference): `time-delta-draw-512` is one lib/contrastive/samplers.ts
 * `timeDeltaSampler` draw of 512 over {@linkcode CEBRA_LABEL_ROWS} 3-D labels (goal ≤ 2 ms), `delta-draw-512` one
 * `deltaSampler` draw (δ 0.1) over the same labels. cl-ica's step is not timed: its encoder lives in
 * experiments/cl_ica.ts, not in lib/.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import type { Matrix } from "../../lib/core/matrix.ts";
import { Rng } from "../../lib/core/rng.ts";
import { cebraStep } from "../../lib/contrastive/cebra_step.ts";
import { type Distance, infoNce } from "../../lib/contrastive/infonce.ts";
import { deltaSampler, timeDeltaSampler, timeSampler } from "../../lib/contrastive/samplers.ts";
import { type CebraArchitecture, cebraModel } from "../../lib/models/cebra_models.ts";
import { compareParts, firstLosses, readLoss, writeTensors } from "../harness/checks.ts";
import type { ModelName } from "../harness/names.ts";
import type { Workload } from "../harness/rounds.ts";

/** Reference, positive and negative windows per step, and indices per sampler draw, of the `cebra` group. */
export const CEBRA_BATCH = 512;
/** Rows of the `cebra` steps' data and of the sampler entries' labels (about a place-cell rat's 25 ms bins). */
export const CEBRA_LABEL_ROWS = 10_000;
/** Ceiling on a CEBRA step over PyTorch's, median paired ratio. */
export const CEBRA_TORCH_RATIO_GOAL = 2;
/** Ceiling in ms on a time_delta draw of 512 over 10,000 3-D labels. */
export const TIME_DELTA_DRAW_GOAL_MS = 2;

/** A `cebra` group step: the encoder, its loss and its optimiser. */
interface CebraStepSpec {
  architecture: CebraArchitecture;
  inputs: number;
  hidden: number;
  output: number;
  distance: Distance;
  lr: number;
}

/**
 * One CEBRA training step at batch {@linkcode CEBRA_BATCH} as `Cebra.fit` takes it (`cebraStep`): the reference,
 * positive and negative windows of a fixed time-contrastive index batch gathered from {@linkcode CEBRA_LABEL_ROWS}
 * uniform rows, one forward pass over the three, InfoNCE (τ 1), an Adam step, the loss read back. The weights,
 * data and indices go to bench/cebra_reference.py as .npy; the check compares the reference windows' embeddings
 * before any step and the first two steps' losses.
 */
function cebraStepWorkload(name: ModelName, spec: CebraStepSpec): Workload {
  return {
    name,
    batch: CEBRA_BATCH,
    goal: {
      ratio: CEBRA_TORCH_RATIO_GOAL,
      source: `a CEBRA ${spec.architecture} step at batch ${CEBRA_BATCH} ≤ 2× PyTorch's`,
    },
    async build(rng) {
      const model = cebraModel(spec.architecture, spec, rng);
      const { left, right } = model.offset, rows = CEBRA_LABEL_ROWS;
      const data = tf.tensor2d(Float32Array.from({ length: rows * spec.inputs }, () => rng.uniform()), [
        rows,
        spec.inputs,
      ]);
      const batch = timeSampler(rows, { offset: 1, left, right }).sample(rng, CEBRA_BATCH);
      const optimizer = tf.train.adam(spec.lr, 0.9, 0.999, 1e-8);
      const loss = (ref: tf.Tensor2D, pos: tf.Tensor2D, neg: tf.Tensor2D) =>
        infoNce(ref, pos, neg, { distance: spec.distance, temperature: 1 }).total;
      const minimize = () => cebraStep(optimizer, [model], [data], { kind: "single", batch }, loss, model.variables);
      const directory = Deno.makeTempDirSync({ prefix: `latentlab-bench-${name}-` });
      const indices = {
        ref: tf.tensor1d(batch.ref, "int32"),
        pos: tf.tensor1d(batch.pos, "int32"),
        neg: tf.tensor1d(batch.neg, "int32"),
      };
      await writeTensors(directory, { ...model.state(), data, ...indices });
      tf.dispose(Object.values(indices));
      // The reference windows' embeddings: rows i − left of the unpadded sequence's.
      const first = tf.tidy(() =>
        tf.gather(model.embed(data, { pad: false }), tf.tensor1d(batch.ref.map((i) => i - left), "int32"))
      );
      const embedding = await first.data() as Float32Array;
      first.dispose();
      const losses = await firstLosses(minimize);
      return {
        parameters: model.variables.reduce((n, v) => n + v.size, 0),
        step: () => readLoss(minimize()),
        record: () => minimize(),
        dispose() {
          optimizer.dispose();
          model.dispose();
          data.dispose();
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: {
          directory,
          architecture: spec.architecture,
          inputs: spec.inputs,
          hidden: spec.hidden,
          output: spec.output,
          left,
          right,
          distance: spec.distance,
          temperature: 1,
          lr: spec.lr,
        },
        check: (reference) => compareParts({ losses, embedding }, reference, { losses: 1e-5, embedding: 1e-5 }),
      };
    },
  };
}

/**
 * `[rows, 3]` labels shaped as a place-cell rat's (position on a 1.6 m track as a reflected random walk, then
 * running right and left as 0/1): the layout the samplers' k-d tree meets in cebra-place-cells.
 */
function trackLabels(rng: Rng, rows: number): Matrix {
  const data = new Float64Array(rows * 3);
  let x = 0.8;
  for (let t = 0; t < rows; t++) {
    const step = 0.02 * rng.normal();
    x = Math.min(1.6, Math.max(0, x + step));
    data.set([x, step > 0 ? 1 : 0, step > 0 ? 0 : 1], 3 * t);
  }
  return { data, rows, cols: 3 };
}

/**
 * One draw of {@linkcode CEBRA_BATCH} reference, positive and negative indices over {@linkcode CEBRA_LABEL_ROWS}
 * 3-D labels, offset10's window: `timeDeltaSampler` (Δ 1) or `deltaSampler` (δ 0.1). Ours only: the package draws
 * on the GPU or in torch with another layout, so no reference runs the same work.
 */
function samplerDrawWorkload(name: "time-delta-draw-512" | "delta-draw-512", goalMs?: number): Workload {
  return {
    name,
    batch: CEBRA_BATCH,
    plain: goalMs === undefined ? {} : { goalMs },
    oursOnly: true,
    build(rng) {
      const labels = trackLabels(rng, CEBRA_LABEL_ROWS), window = { left: 5, right: 5 };
      const sampler = name === "time-delta-draw-512"
        ? timeDeltaSampler(labels, { offset: 1, ...window })
        : deltaSampler(labels, { delta: 0.1, ...window });
      const draws = new Rng(1);
      return {
        parameters: 0,
        step() {
          sampler.sample(draws, CEBRA_BATCH);
          return Promise.resolve();
        },
        dispose() {},
      };
    },
  };
}

/** The group's entries, in the order they are timed. */
export const CEBRA_WORKLOADS: Workload[] = [
  cebraStepWorkload("cebra-offset10-step-512", {
    architecture: "offset10-model",
    inputs: 120,
    hidden: 32,
    output: 3,
    distance: "cosine",
    lr: 3e-4,
  }),
  cebraStepWorkload("cebra-offset1-mse-step-512", {
    architecture: "offset1-model-mse",
    inputs: 100,
    hidden: 32,
    output: 2,
    distance: "euclidean",
    lr: 1e-4,
  }),
  samplerDrawWorkload("time-delta-draw-512", TIME_DELTA_DRAW_GOAL_MS),
  samplerDrawWorkload("delta-draw-512"),
];
