/**
 * Data-path entries, plain JS timed once whatever the backend, beside NumPy in the reference worker
 * (bench/numpy_reference.py), each with an absolute goal: `splits` builds dSprites' four benchmark splits afresh per
 * step (lib/data/splits.ts; goal ≤ 1 s), `r2-scores` scores {@linkcode R2_ROWS} × 5 float32 predictions against
 * dSprites grid points (lib/metrics/r2.ts; goal ≤ 50 ms). Both sides' results are compared before timing (train
 * counts, and index sums where the split is deterministic; R² to 1e-9 relative); a mismatch fails the entry and the
 * bench exits 1. Also the datasets' rendering throughput, which a plain run reports beside the conv VAE's step.
 *
 * @module
 */
import { formatNpy } from "../../lib/core/npy.ts";
import { Rng } from "../../lib/core/rng.ts";
import { DSPRITES_SIZES } from "../../lib/data/dsprites.ts";
import { sampleBatch } from "../../lib/data/ground_truth.ts";
import { DATASET_NAMES, loadDataset } from "../../lib/data/registry.ts";
import { makeSplit, type Split, SPLIT_NAMES } from "../../lib/data/splits.ts";
import { r2Scores } from "../../lib/metrics/r2.ts";
import { type BenchReport, spread } from "../harness/report.ts";
import type { Workload } from "../harness/rounds.ts";

/** Train points of dSprites' benchmark splits (Schott2022 Tables 2–4), which both sides of `splits` must build. */
export const DSPRITES_TRAIN_COUNTS = {
  random: 239_985,
  composition: 192_312,
  interpolation: 240_000,
  extrapolation: 240_000,
};

/** Rows of the `r2-scores` entry. */
export const R2_ROWS = 500_000;

type SplitSummary = { train: number; test: number; train_sum: number };

/** Sizes of a split's parts and the sum of its train indices: equal sums of ascending parts mean the same points. */
function splitSummary(split: Split): SplitSummary {
  let sum = 0;
  for (const index of split.train) sum += index;
  return { train: split.train.length, test: split.test.length, train_sum: sum };
}

/**
 * dSprites' four benchmark splits per step. makeSplit keeps no cache, so each
 * step builds them from scratch, as a run's first call does.
 */
function splitsWorkload(): Workload {
  return {
    name: "splits",
    batch: SPLIT_NAMES.length,
    plain: { goalMs: 1000 },
    build() {
      const buildAll = () => SPLIT_NAMES.map((name) => makeSplit("dsprites", name));
      const ours = Object.fromEntries(buildAll().map((split) => [split.name, splitSummary(split)]));
      const total = DSPRITES_SIZES.reduce((a, b) => a * b, 1);
      return {
        parameters: 0,
        step() {
          buildAll();
          return Promise.resolve();
        },
        dispose() {},
        check(reference) {
          const theirs = reference as Record<string, SplitSummary> | null;
          const problems: string[] = [];
          for (const name of SPLIT_NAMES) {
            const train = DSPRITES_TRAIN_COUNTS[name];
            const sides: [string, SplitSummary | undefined][] = [["ours", ours[name]]];
            if (theirs) sides.push(["NumPy", theirs[name]]);
            for (const [side, got] of sides) {
              if (got?.train !== train || got.test !== total - train) {
                problems.push(
                  `${side} ${name}: ${got ? `${got.train} train, ${got.test} test` : "missing"}; expected ${train}`,
                );
              }
            }
            // The random split draws from different generators on the two sides: only its size can agree.
            if (theirs?.[name] && name !== "random" && theirs[name].train_sum !== ours[name].train_sum) {
              problems.push(`${name}: the two sides' train points differ`);
            }
          }
          if (problems.length) return { ok: false, detail: problems.join("; ") };
          const counts = SPLIT_NAMES.map((name) => `${name} ${ours[name].train}`).join(", ");
          return {
            ok: true,
            detail: `train ${counts}` +
              (theirs ? " on both sides, the same points where deterministic" : " (no NumPy to compare)"),
          };
        },
      };
    },
  };
}

/**
 * r2Scores on {@linkcode R2_ROWS} float32 predictions (each factor's
 * normalized value plus N(0, 0.1²) noise) of uniform dSprites grid points,
 * written once as .npy for NumPy to read.
 */
function r2Workload(): Workload {
  return {
    name: "r2-scores",
    batch: R2_ROWS,
    plain: { goalMs: 50 },
    build(rng) {
      const sizes = DSPRITES_SIZES, k = sizes.length;
      const factors = new Int32Array(R2_ROWS * k), pred = new Float32Array(R2_ROWS * k);
      for (let i = 0; i < factors.length; i++) {
        const n = sizes[i % k], v = rng.int(n);
        factors[i] = v;
        pred[i] = v / (n - 1) + 0.1 * rng.normal();
      }
      const dir = Deno.makeTempDirSync({ prefix: "latentlab-bench-r2-" });
      const paths = { predictions: `${dir}/predictions.npy`, factors: `${dir}/factors.npy` };
      Deno.writeFileSync(paths.predictions, formatNpy(pred, [R2_ROWS, k]));
      Deno.writeFileSync(paths.factors, formatNpy(factors, [R2_ROWS, k]));
      const matrix = { data: pred, rows: R2_ROWS, cols: k };
      const ours = r2Scores(matrix, factors, sizes);
      return {
        parameters: 0,
        step() {
          r2Scores(matrix, factors, sizes);
          return Promise.resolve();
        },
        dispose: () => Deno.removeSync(dir, { recursive: true }),
        referenceArgs: { ...paths, sizes: [...sizes] },
        check(reference) {
          const summary = `R² ${ours.r2.toFixed(6)} (per factor ${ours.perFactor.map((v) => v.toFixed(4)).join(", ")})`;
          if (!reference) return { ok: true, detail: `${summary} (no NumPy to compare)` };
          const theirs = reference as { r2: number; per_factor: number[]; rows: number };
          if (theirs.rows !== R2_ROWS || theirs.per_factor?.length !== k) {
            return { ok: false, detail: `NumPy scored ${theirs.rows} rows × ${theirs.per_factor?.length} factors` };
          }
          const pairs = [[ours.r2, theirs.r2], ...ours.perFactor.map((v, j) => [v, theirs.per_factor[j]])];
          const worst = Math.max(...pairs.map(([a, b]) => Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b))));
          // Summation order differs (sequential here, pairwise in NumPy), so agreement is to rounding, not bits.
          const ok = worst <= 1e-9;
          return { ok, detail: `${summary}; largest relative difference to NumPy ${worst.toExponential(1)}` };
        },
      };
    },
  };
}

/** The data-path entries, in the order they are timed. */
export const DATA_PATH_WORKLOADS: Workload[] = [splitsWorkload(), r2Workload()];

/** Images/s of rendering a batch of 64 of each dataset on one core, and its share of a conv VAE 64×64 step. */
export function datasetThroughput(convStepMs: number | null, batches = 30): BenchReport["datasets"] {
  return DATASET_NAMES.map((name) => {
    const dataset = loadDataset(name);
    const rng = new Rng(0);
    sampleBatch(dataset, 64, rng); // warm-up: sprite masks and ray-cast layers are cached lazily
    const times: number[] = [];
    for (let i = 0; i < batches; i++) {
      const start = performance.now();
      sampleBatch(dataset, 64, rng);
      times.push(performance.now() - start);
    }
    const ms = spread(times).median;
    return {
      name,
      images_per_s: Math.round(64_000 / ms),
      batch_ms: ms,
      share_of_conv_vae_64: convStepMs ? ms / convStepMs : null,
    };
  });
}
