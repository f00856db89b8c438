/**
 * The `vae-pca` group (`--only vae-pca`) times the ensembles and scores of the VAE-PCA study, each beside
 * bench/vae_pca_reference.py on the same data. `linear-ensemble-30` and `synth-mlp-64` are one Adam step of
 * lib/models/ensemble.ts `EnsembleVae` (kind "vae", input 3, latents 2, squared loss, batch {@linkcode ENSEMBLE_BATCH}
 * per member) as lib/train/ensemble_training.ts takes it (`drawEnsembleBatch`, `ensembleLoss`): every member draws
 * its batch of rows and its posterior noise from streams of its own, the summed loss, Adam, the loss read back; the
 * linear one has 30 members with no hidden layer (β 1e-2; Adam 1e-3, the rate of experiments/vae_pca.ts's linear
 * models), the other 9 members with tanh layers 64, 64 (β 1e-2, Adam 3e-3: vae-manipulation's synth ensemble). The
 * reference is the same batched model in PyTorch (torch.baddbmm per layer) on our initial weights and training rows;
 * the encoder means of a fixed batch and the first two steps' losses on it are compared before timing. Goals: ≤
 * {@linkcode LINEAR_ENSEMBLE_GOAL_MS} and ≤ {@linkcode SYNTH_MLP_GOAL_MS} ms per step. `dto-500x1024x5` is
 * lib/metrics/dto.ts `distanceToOrthogonality` on a fixed random float32 Jacobian [500, 1024, 5] beside NumPy's
 * batched eigh of JᵀJ and SciPy's linear_sum_assignment per sample (goal ≤ 1 s); `ds-5000` is
 * lib/metrics/disentanglement_score.ts `disentanglementScore` on 5,000 rows, 2 latents (a noisy rotation of 2
 * uniform regression factors) beside scikit-learn's KNeighborsRegressor per (factor, latent) pair (goal ≤ 0.5 s).
 * Both are plain JS, timed once whatever the backend, and their results are compared with the reference's. These
 * entries raise the warm-up and the steps per round (`Workload.minimum`; the report records the counts used): a
 * millisecond step runs tens of times slower until V8 has compiled its path.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { formatNpy } from "../../lib/core/npy.ts";
import { Rng } from "../../lib/core/rng.ts";
import { disentanglementScore } from "../../lib/metrics/disentanglement_score.ts";
import { distanceToOrthogonality } from "../../lib/metrics/dto.ts";
import { EnsembleVae } from "../../lib/models/ensemble.ts";
import { drawEnsembleBatch, ensembleLoss, rowSampler } from "../../lib/train/ensemble_training.ts";
import { compareParts, firstLosses, largestDifference, readLoss, writeTensors } from "../harness/checks.ts";
import type { ModelName } from "../harness/names.ts";
import type { Workload } from "../harness/rounds.ts";

export const ENSEMBLE_BATCH = 100;
/** Training rows per member the ensembles' batches are drawn from. */
export const ENSEMBLE_ROWS = 1000;
/** Ceiling in ms on an Adam step of the 30 linear VAEs. */
export const LINEAR_ENSEMBLE_GOAL_MS = 6;
/** Ceiling in ms on an Adam step of the 9 tanh 64-64 VAEs. */
export const SYNTH_MLP_GOAL_MS = 15;
/** Jacobians, outputs and latents of `dto-500x1024x5`. */
export const DTO_SHAPE = [500, 1024, 5] as const;
/** Ceiling in ms on DtO of {@linkcode DTO_SHAPE}. */
export const DTO_GOAL_MS = 1000;
/** Rows of `ds-5000` (2 latents, 2 regression factors). */
export const DS_ROWS = 5000;
/** Ceiling in ms on DS of {@linkcode DS_ROWS} rows. */
export const DS_GOAL_MS = 500;

/** A `vae-pca` group ensemble: members, hidden widths, β (every member) and Adam's rate. */
interface EnsembleStepSpec {
  members: number;
  hidden: number[];
  beta: number;
  lr: number;
}

/**
 * One Adam step of an {@linkcode EnsembleVae} (kind "vae", input 3, latents 2, tanh, squared loss) as
 * lib/train/ensemble_training.ts takes it: member k draws {@linkcode ENSEMBLE_BATCH} of its
 * {@linkcode ENSEMBLE_ROWS} training rows and its posterior noise from streams of its own seed, the batch and noise
 * go up as two tensors, the summed loss is minimised and read back. The weights, rows, a fixed batch and its noise
 * go to bench/vae_pca_reference.py as .npy; the check compares the encoder means of that batch before any step and
 * the losses of two steps on it.
 */
function ensembleStepWorkload(
  name: ModelName,
  spec: EnsembleStepSpec,
  goal: { ms: number; source: string },
  minimum: { warmup: number; steps: number },
): Workload {
  return {
    name,
    batch: ENSEMBLE_BATCH,
    goal,
    minimum,
    async build(rng) {
      const members = spec.members, batch = ENSEMBLE_BATCH, rows = ENSEMBLE_ROWS, input = 3, latents = 2;
      const seeds = Array.from({ length: members }, (_, k) => k);
      const model = new EnsembleVae({
        seeds,
        input,
        latents,
        hidden: spec.hidden,
        activation: "tanh",
        kind: "vae",
        betas: seeds.map(() => spec.beta),
        loss: "squared",
      });
      // Rows of a centred unit cube per member; the step's cost does not depend on their values.
      const data = Float32Array.from({ length: members * rows * input }, () => rng.uniform() - 0.5);
      const batchRngs = seeds.map((s) => Rng.derive(s, "batches", name));
      const noiseRngs = seeds.map((s) => Rng.derive(s, "noise", name));
      const x = new Float32Array(members * batch * input), noise = new Float32Array(members * batch * latents);
      const sampler = rowSampler(
        seeds.map((_, k) => data.subarray(k * rows * input, (k + 1) * rows * input)),
        input,
      );
      const draw = () => drawEnsembleBatch(sampler, batch, batchRngs, noiseRngs, x, noise);
      const optimizer = tf.train.adam(spec.lr, 0.9, 0.999, 1e-8);
      const variables = model.params.list();
      const minimize = (xs: Float32Array, eps: Float32Array) =>
        optimizer.minimize(() => ensembleLoss(model, xs, eps, batch).total, true, variables)!;
      const directory = Deno.makeTempDirSync({ prefix: `latentlab-bench-${name}-` });
      draw();
      const x0 = x.slice(), noise0 = noise.slice();
      const fixed = {
        data: tf.tensor3d(data, [members, rows, input]),
        x0: tf.tensor3d(x0, [members, batch, input]),
        noise0: tf.tensor3d(noise0, [members, batch, latents]),
      };
      await writeTensors(directory, { ...model.params.entries(""), ...fixed });
      const codes = model.encode(fixed.x0);
      const mean = await codes.mean.data() as Float32Array;
      tf.dispose([...Object.values(fixed), codes.mean, codes.logVar!]);
      const losses = await firstLosses(() => minimize(x0, noise0));
      return {
        parameters: model.params.count(),
        step() {
          draw();
          return readLoss(minimize(x, noise));
        },
        dispose() {
          optimizer.dispose();
          model.dispose();
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: {
          directory,
          members,
          batch,
          inputs: input,
          latents,
          layers: spec.hidden.length + 1,
          betas: seeds.map(() => spec.beta),
          lr: spec.lr,
        },
        check: (reference) => compareParts({ mean, losses }, reference, { mean: 1e-5, losses: 1e-5 }),
      };
    },
  };
}

/**
 * A fixed float32 Jacobian `[n, rows, cols]`: per sample N(0, 1) entries with column j scaled by 1 − j/cols, then
 * turned by one random rotation of the latents, so that singular values are apart (V well defined, Prop. 1) and V
 * is far from the axes, as a trained decoder's may be. Plain N(0, 1) columns would have nearly equal singular values.
 */
function dtoJacobian(rng: Rng, n: number, rows: number, cols: number): Float32Array {
  // Gram–Schmidt on a Gaussian cols×cols matrix: a random orthogonal Q (rows of q).
  const q: number[][] = [];
  for (let j = 0; j < cols; j++) {
    const v = Array.from({ length: cols }, () => rng.normal());
    for (const u of q) {
      const dot = u.reduce((sum, value, i) => sum + value * v[i], 0);
      u.forEach((value, i) => v[i] -= dot * value);
    }
    const norm = Math.hypot(...v);
    q.push(v.map((value) => value / norm));
  }
  const jac = new Float32Array(n * rows * cols), row = new Float64Array(cols);
  for (let e = 0; e < n * rows; e++) {
    for (let j = 0; j < cols; j++) row[j] = (1 - j / cols) * rng.normal();
    for (let c = 0; c < cols; c++) {
      let sum = 0;
      for (let j = 0; j < cols; j++) sum += row[j] * q[j][c];
      jac[e * cols + c] = sum;
    }
  }
  return jac;
}

/**
 * `dto-500x1024x5`: distanceToOrthogonality of a fixed float32 Jacobian {@linkcode DTO_SHAPE} (`dtoJacobian`),
 * written as .npy for NumPy/SciPy; the check compares DtO, the median singular-value gap and every sample's distance.
 */
function dtoWorkload(): Workload {
  const [n, rows, cols] = DTO_SHAPE;
  return {
    name: "dto-500x1024x5",
    batch: n,
    plain: { goalMs: DTO_GOAL_MS },
    minimum: { warmup: 10, steps: 3 },
    goal: { source: `DtO of ${n} Jacobians ${rows}×${cols} ≤ 1 s` },
    build(rng) {
      const jac = dtoJacobian(rng, n, rows, cols);
      const directory = Deno.makeTempDirSync({ prefix: "latentlab-bench-dto-" });
      const path = `${directory}/jacobians.npy`;
      Deno.writeFileSync(path, formatNpy(jac, [n, rows, cols]));
      const ours = distanceToOrthogonality(jac, n, rows, cols);
      return {
        parameters: 0,
        step() {
          distanceToOrthogonality(jac, n, rows, cols);
          return Promise.resolve();
        },
        dispose: () => Deno.removeSync(directory, { recursive: true }),
        referenceArgs: { jacobians: path },
        check(reference) {
          const summary = `DtO ${ours.dto.toFixed(6)}, singular-value gap ${ours.svGap.toFixed(4)}`;
          if (!reference) return { ok: true, detail: `${summary} (no NumPy to compare)` };
          const theirs = reference as { dto: number; sv_gap: number; per_sample: number[]; library: string };
          if (theirs.per_sample?.length !== n) {
            return { ok: false, detail: `the reference scored ${theirs.per_sample?.length} samples, ours ${n}` };
          }
          // Both sides find JᵀJ's eigenvectors to float64 rounding (Jacobi here, LAPACK there): agreement to 1e-9.
          const perSample = largestDifference(ours.perSample, theirs.per_sample);
          const worst = Math.max(perSample, Math.abs(ours.dto - theirs.dto), Math.abs(ours.svGap - theirs.sv_gap));
          return {
            ok: worst <= 1e-9,
            detail: `${summary}; largest difference to ${theirs.library} ${worst.toExponential(1)} (DtO, gap and ` +
              "every sample's distance; tolerance 1e-9)",
          };
        },
      };
    },
  };
}

/**
 * `ds-5000`: disentanglementScore of {@linkcode DS_ROWS} rows, two latents that are a 30° rotation of two uniform
 * regression factors plus N(0, 0.05²) noise (continuous, so no ties in distance), written as float64 .npy for
 * scikit-learn; the check compares DS and every (factor, latent) score.
 */
function dsWorkload(): Workload {
  return {
    name: "ds-5000",
    batch: DS_ROWS,
    plain: { goalMs: DS_GOAL_MS },
    minimum: { warmup: 30, steps: 10 },
    goal: { source: `DS on ${DS_ROWS.toLocaleString("en-US")} rows × 2 latents × 2 factors ≤ 0.5 s` },
    build(rng) {
      const n = DS_ROWS, c = Math.cos(Math.PI / 6), s = Math.sin(Math.PI / 6);
      const factors = new Float64Array(2 * n), codes = new Float64Array(2 * n);
      for (let i = 0; i < n; i++) {
        const w0 = rng.uniform(), w1 = rng.uniform();
        factors.set([w0, w1], 2 * i);
        codes.set([c * w0 + s * w1 + 0.05 * rng.normal(), -s * w0 + c * w1 + 0.05 * rng.normal()], 2 * i);
      }
      const directory = Deno.makeTempDirSync({ prefix: "latentlab-bench-ds-" });
      const paths = { codes: `${directory}/codes.npy`, factors: `${directory}/factors.npy` };
      Deno.writeFileSync(paths.codes, formatNpy(codes, [n, 2]));
      Deno.writeFileSync(paths.factors, formatNpy(factors, [n, 2]));
      const run = () =>
        disentanglementScore({ data: codes, rows: n, cols: 2 }, { data: factors, rows: n, cols: 2 }, [
          "regression",
          "regression",
        ]);
      const ours = run();
      return {
        parameters: 0,
        step() {
          run();
          return Promise.resolve();
        },
        dispose: () => Deno.removeSync(directory, { recursive: true }),
        referenceArgs: paths,
        check(reference) {
          const summary = `DS ${ours.ds.toFixed(6)}`;
          if (!reference) return { ok: true, detail: `${summary} (no scikit-learn to compare)` };
          const theirs = reference as { ds: number; scores: number[]; library: string };
          const scores = ours.scores.flat();
          if (theirs.scores?.length !== scores.length) {
            return { ok: false, detail: `the reference has ${theirs.scores?.length} scores, ours ${scores.length}` };
          }
          // The same neighbours on both sides, means and square roots in another order: agreement to 1e-9.
          const worst = Math.max(Math.abs(ours.ds - theirs.ds), largestDifference(scores, theirs.scores));
          return {
            ok: worst <= 1e-9,
            detail: `${summary}; largest difference to ${theirs.library} ${worst.toExponential(1)} (DS and every ` +
              "(factor, latent) score; tolerance 1e-9)",
          };
        },
      };
    },
  };
}

/** The group's entries, in the order they are timed. */
export const VAE_PCA_WORKLOADS: Workload[] = [
  ensembleStepWorkload(
    "linear-ensemble-30",
    { members: 30, hidden: [], beta: 1e-2, lr: 1e-3 },
    {
      ms: LINEAR_ENSEMBLE_GOAL_MS,
      source: `an Adam step of 30 linear VAEs (batch ${ENSEMBLE_BATCH} each) ≤ ${LINEAR_ENSEMBLE_GOAL_MS} ms`,
    },
    { warmup: 100, steps: 20 },
  ),
  ensembleStepWorkload(
    "synth-mlp-64",
    { members: 9, hidden: [64, 64], beta: 1e-2, lr: 3e-3 },
    {
      ms: SYNTH_MLP_GOAL_MS,
      source: `an Adam step of 9 tanh 64-64 VAEs (batch ${ENSEMBLE_BATCH} each) ≤ ${SYNTH_MLP_GOAL_MS} ms`,
    },
    { warmup: 50, steps: 10 },
  ),
  dtoWorkload(),
  dsWorkload(),
];
