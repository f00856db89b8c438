/**
 * Decision-based attacks after foolbox 3: they query the model's decisions
 * only (no gradients, no scores), so they apply to any {@linkcode AttackModel}.
 * Boundary (Brendel et al. 2018) walks along the decision boundary toward the
 * clean input in L2; salt-and-pepper raises the share of pixels set to the
 * bounds until the decision flips; Pointwise (Schott2019 §5) then
 * resets those pixels one by one to minimise L0. All are batched over the
 * samples: each model query is one forward pass over the samples still at work.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { l0, l2 } from "./distances.ts";
import { adversarialAt, saltAndPepperDraws, smallestAdversarialScale } from "./noise.ts";
import { type Attack, type AttackBatch, type AttackModel, decisionAttack } from "./types.ts";

function positive(name: string, value: number, integer = false): void {
  if (!(value > 0) || (integer && !Number.isInteger(value))) {
    throw new UsageError(`${name} must be a positive ${integer ? "integer" : "number"}, got ${value}`);
  }
}

/** Samples `0..n-1`. */
function allRows(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/** Predictions of `rows` of a `[n, h, w, c]` buffer: 1 where misclassified. */
function adversarialRows(
  model: AttackModel,
  batch: AttackBatch,
  values: Float32Array,
  rows: readonly number[],
): Promise<Uint8Array> {
  const d = batch.shape[0] * batch.shape[1] * batch.shape[2];
  return adversarialAt(
    model,
    batch.shape,
    rows,
    batch.labels,
    (i, out) => out.set(values.subarray(i * d, (i + 1) * d)),
  );
}

/** Options of {@linkcode linearSearchBlendedUniformNoise}. */
export interface BlendedNoiseOptions {
  /** Uniform random inputs drawn per sample until one is misclassified. */
  directions?: number;
  /** Blending factors tried, evenly spaced in (0, 1]. */
  steps?: number;
}

/**
 * foolbox's `LinearSearchBlendedUniformNoiseAttack`: per sample, draw uniform
 * inputs inside the bounds until one is misclassified (at most `directions`),
 * then return the first adversarial blend (1 − t)·x + t·noise over `steps`
 * evenly spaced t. Samples whose draws all keep the label are returned clean
 * (failure). Boundary starts from it (with 50 steps).
 */
export function linearSearchBlendedUniformNoise({ directions = 1000, steps = 1000 }: BlendedNoiseOptions = {}): Attack {
  positive("directions", directions, true);
  positive("steps", steps, true);
  return decisionAttack("blended_uniform_noise", "l2", async (model, batch, _epsilon, rng) => {
    const { n, x, d, low, high } = batch;
    const noise = new Float32Array(n * d);
    let missing = allRows(n);
    for (let k = 0; k < directions && missing.length; k++) {
      for (const i of missing) {
        for (let j = i * d; j < (i + 1) * d; j++) noise[j] = low + (high - low) * rng.uniform();
      }
      const isAdv = await adversarialRows(model, batch, noise, missing);
      missing = missing.filter((_, r) => !isAdv[r]);
    }
    // A sample without an adversarial draw blends toward its clean input: the search finds nothing.
    for (const i of missing) noise.set(x.subarray(i * d, (i + 1) * d), i * d);
    const blend = (i: number, t: number, out: Float32Array) => {
      for (let j = 0; j < d; j++) out[j] = (1 - t) * x[i * d + j] + t * noise[i * d + j];
    };
    return (await smallestAdversarialScale(model, batch, blend, 1, { gridSteps: steps, bisectionSteps: 0 }))
      .adversarial;
  });
}

/** Options of {@linkcode boundary} (foolbox 3 `BoundaryAttack`, in camelCase). */
export interface BoundaryOptions {
  /** Iterations (one model query each, two every `updateStatsEvery`). */
  steps?: number;
  /** Initial size of the orthogonal step, relative to the current distance. */
  sphericalStep?: number;
  /** Initial size of the step toward the clean input, relative to the current distance. */
  sourceStep?: number;
  /** A sample stops once its source step falls below this. */
  sourceStepConvergence?: number;
  /** Factor by which step sizes grow or shrink. */
  stepAdaptation?: number;
  /** Period (in steps) of the spherical-candidate check and the step-size update. */
  updateStatsEvery?: number;
  /** Blending steps of the blended-uniform-noise start. */
  initSteps?: number;
}

/**
 * foolbox 3's Boundary attack, an L2 minimization by decisions only. Start:
 * the blended-uniform-noise search ({@linkcode linearSearchBlendedUniformNoise},
 * `initSteps` blends). Each step draws η ~ N(0, I) orthogonal to the source
 * direction x − x', scaled to `sphericalStep`·‖x − x'‖, projects x' + η back
 * onto the sphere around x (the spherical candidate), then moves it
 * `sourceStep`·‖x − x'‖ toward x; the candidate replaces x' when misclassified
 * and closer. Every `updateStatsEvery` steps the spherical candidate is
 * queried too; over the last 100 such checks a spherical success rate > 0.5
 * multiplies both steps by `stepAdaptation` (< 0.2 divides), and over the last
 * 30 a candidate success rate > 0.25 multiplies the source step (< 0.1
 * divides); a window is emptied after it causes a change. Deviation: η is
 * drawn per sample (foolbox shares one draw across the batch). Samples without
 * a starting adversarial are returned clean (failure) instead of raising.
 */
export function boundary(options: BoundaryOptions = {}): Attack {
  const {
    steps = 25_000,
    sphericalStep = 0.01,
    sourceStep = 0.01,
    sourceStepConvergence = 1e-7,
    stepAdaptation = 1.5,
    updateStatsEvery = 10,
    initSteps = 50,
  } = options;
  positive("steps", steps, true);
  positive("sphericalStep", sphericalStep);
  positive("sourceStep", sourceStep);
  positive("stepAdaptation", stepAdaptation);
  positive("updateStatsEvery", updateStatsEvery, true);
  const init = linearSearchBlendedUniformNoise({ steps: initSteps });
  return decisionAttack("boundary", "l2", async (model, batch, epsilon, rng) => {
    const { n, shape, x, d, low, high } = batch;
    const best = await init.perturb(model, batch, epsilon, rng);
    const startAdv = await adversarialRows(model, batch, best, allRows(n));
    const start = l2(x, best, n);
    // Clean errors (distance 0) need no walk; failed starts cannot walk.
    let rows = allRows(n).filter((i) => startAdv[i] && start[i] > 0);
    const spherical = new Float64Array(n).fill(sphericalStep);
    const source = new Float64Array(n).fill(sourceStep);
    const sphericalStats = new SuccessWindow(100, n);
    const sourceStats = new SuccessWindow(30, n);
    const eta = new Float64Array(d);
    for (let step = 1; step <= steps; step++) {
      rows = rows.filter((i) => source[i] >= sourceStepConvergence);
      if (!rows.length) break;
      const check = step % updateStatsEvery === 0;
      const m = rows.length;
      const candidates = new Float32Array(m * d);
      const sphericals = new Float32Array(m * d);
      const norms = new Float64Array(m);
      rows.forEach((i, k) => {
        norms[k] = drawProposal(
          rng,
          x.subarray(i * d, (i + 1) * d),
          best.subarray(i * d, (i + 1) * d),
          spherical[i],
          source[i],
          low,
          high,
          eta,
          sphericals.subarray(k * d, (k + 1) * d),
          candidates.subarray(k * d, (k + 1) * d),
        );
      });
      const packed = (buffer: Float32Array) => (_i: number, out: Float32Array, k: number) =>
        out.set(buffer.subarray(k * d, (k + 1) * d));
      const isAdv = await adversarialAt(model, shape, rows, batch.labels, packed(candidates));
      rows.forEach((i, k) => {
        let dist = 0;
        for (let j = 0; j < d; j++) dist += (x[i * d + j] - candidates[k * d + j]) ** 2;
        // Closer by construction, unless rounding says otherwise.
        if (isAdv[k] && Math.sqrt(dist) < norms[k]) best.set(candidates.subarray(k * d, (k + 1) * d), i * d);
      });
      if (!check) continue;
      const sphericalAdv = await adversarialAt(model, shape, rows, batch.labels, packed(sphericals));
      rows.forEach((i, k) => {
        sphericalStats.push(i, sphericalAdv[k]);
        sourceStats.push(i, isAdv[k]);
        if (sphericalStats.full(i)) {
          const p = sphericalStats.mean(i);
          const factor = p > 0.5 ? stepAdaptation : p < 0.2 ? 1 / stepAdaptation : 1;
          if (factor !== 1) {
            spherical[i] *= factor;
            source[i] *= factor;
            sphericalStats.clear(i);
          }
        }
        if (sourceStats.full(i)) {
          const p = sourceStats.mean(i);
          const factor = p > 0.25 ? stepAdaptation : p < 0.1 ? 1 / stepAdaptation : 1;
          if (factor !== 1) {
            source[i] *= factor;
            sourceStats.clear(i);
          }
        }
      });
    }
    return best;
  });
}

/**
 * One Boundary proposal for a sample (foolbox `draw_proposals`): writes the
 * spherical candidate and the candidate after the source step, and returns
 * the current distance ‖x − x'‖. `eta` is scratch space of the input's size.
 */
function drawProposal(
  rng: Rng,
  x: Float32Array,
  adv: Float32Array,
  sphericalStep: number,
  sourceStep: number,
  low: number,
  high: number,
  eta: Float64Array,
  sphericalOut: Float32Array,
  candidateOut: Float32Array,
): number {
  const d = x.length;
  let sourceNorm = 0;
  for (let j = 0; j < d; j++) sourceNorm += (x[j] - adv[j]) ** 2;
  sourceNorm = Math.sqrt(sourceNorm);
  // η orthogonal to the unit source direction, scaled to sphericalStep·‖x − x'‖.
  let dot = 0;
  for (let j = 0; j < d; j++) {
    eta[j] = rng.normal();
    dot += eta[j] * (x[j] - adv[j]) / sourceNorm;
  }
  let etaNorm = 0;
  for (let j = 0; j < d; j++) {
    eta[j] -= dot * (x[j] - adv[j]) / sourceNorm;
    etaNorm += eta[j] * eta[j];
  }
  const scale = sphericalStep * sourceNorm / Math.sqrt(etaNorm);
  // Back onto the sphere of radius ‖x − x'‖ around x (Pythagoras).
  const shrink = Math.sqrt(sphericalStep * sphericalStep + 1);
  let newNorm = 0;
  for (let j = 0; j < d; j++) {
    const v = Math.min(high, Math.max(low, x[j] + (eta[j] * scale - (x[j] - adv[j])) / shrink));
    sphericalOut[j] = v;
    newNorm += (x[j] - v) ** 2;
  }
  newNorm = Math.sqrt(newNorm);
  // The source step, corrected for the clipped candidate's distance from the sphere.
  const length = newNorm > 0 ? Math.max(0, sourceStep * sourceNorm + newNorm - sourceNorm) / newNorm : 0;
  for (let j = 0; j < d; j++) {
    const v = sphericalOut[j] + length * (x[j] - sphericalOut[j]);
    candidateOut[j] = Math.min(high, Math.max(low, v));
  }
  return sourceNorm;
}

/** Per-sample ring buffers of 0/1 outcomes (foolbox `ArrayQueue`, NaN meaning empty). */
class SuccessWindow {
  #data: Float64Array;
  #next: Int32Array;
  #size: number;

  constructor(size: number, n: number) {
    this.#size = size;
    this.#data = new Float64Array(size * n).fill(NaN);
    this.#next = new Int32Array(n);
  }

  push(i: number, value: number): void {
    this.#data[i * this.#size + this.#next[i]] = value;
    this.#next[i] = (this.#next[i] + 1) % this.#size;
  }

  full(i: number): boolean {
    for (let k = 0; k < this.#size; k++) if (Number.isNaN(this.#data[i * this.#size + k])) return false;
    return true;
  }

  mean(i: number): number {
    let sum = 0;
    for (let k = 0; k < this.#size; k++) sum += this.#data[i * this.#size + k];
    return sum / this.#size;
  }

  clear(i: number): void {
    this.#data.fill(NaN, i * this.#size, (i + 1) * this.#size);
  }
}

/** Options of {@linkcode saltAndPepper} (foolbox 3 `SaltAndPepperNoiseAttack`). */
export interface SaltAndPepperOptions {
  /** Noise draws, one model query each. */
  steps?: number;
  /** One draw per pixel, shared by its channels. */
  acrossChannels?: boolean;
  /** The norm that decides which adversarial is best: l2 as foolbox, or l0 (changed values). */
  distance?: "l2" | "l0";
}

/**
 * foolbox 3's salt-and-pepper attack: each step sets pixels to the lower or
 * upper bound with probability p/2 each (fresh draws per step) and keeps the
 * misclassified draw of smallest `distance`; p rises by a per-sample step
 * from 0 toward 1, and after each new best restarts at half its value with
 * the ceiling 1.2·p and a step that spreads the remaining steps over that
 * range. Samples never fooled are returned clean (failure). L0 of the result
 * counts the changed pixel values (report it with `l0` of distances.ts).
 */
export function saltAndPepper(
  { steps = 1000, acrossChannels = true, distance = "l2" }: SaltAndPepperOptions = {},
): Attack {
  positive("steps", steps, true);
  if (distance !== "l2" && distance !== "l0") {
    throw new UsageError(`salt-and-pepper distance must be l2 or l0, got "${distance}"`);
  }
  return decisionAttack("salt_and_pepper", distance, async (model, batch, _epsilon, rng) => {
    const { n, shape, x, d, low, high } = batch;
    const result = x.slice();
    const clean = await adversarialRows(model, batch, x, allRows(n));
    const bestNorm = Float64Array.from(clean, (a) => a ? 0 : Infinity);
    const rows = allRows(n).filter((i) => !clean[i]);
    const minP = new Float64Array(n);
    const maxP = new Float64Array(n).fill(1);
    const stepSize = new Float64Array(n).fill(1 / steps);
    const p = new Float64Array(n).fill(1 / steps);
    const draws = new Float32Array(rows.length * d);
    for (let step = 0; step < steps && rows.length; step++) {
      const u = saltAndPepperDraws(rng, rows.length, shape, acrossChannels);
      rows.forEach((i, k) => {
        for (let j = 0; j < d; j++) {
          const v = u[k * d + j];
          draws[k * d + j] = v >= 1 - p[i] / 2 ? high : v < p[i] / 2 ? low : x[i * d + j];
        }
      });
      const isAdv = await adversarialAt(
        model,
        shape,
        rows,
        batch.labels,
        (_i, out, k) => out.set(draws.subarray(k * d, (k + 1) * d)),
      );
      const remaining = steps - step;
      rows.forEach((i, k) => {
        let norm = 0;
        for (let j = 0; j < d; j++) {
          const diff = draws[k * d + j] - x[i * d + j];
          norm += distance === "l2" ? diff * diff : diff !== 0 ? 1 : 0;
        }
        if (distance === "l2") norm = Math.sqrt(norm);
        const isBest = isAdv[k] === 1 && norm < bestNorm[i];
        if (isBest) {
          result.set(draws.subarray(k * d, (k + 1) * d), i * d);
          bestNorm[i] = norm;
          minP[i] = 0.5 * p[i];
          // Above p: the norm is not strictly monotone in p.
          maxP[i] = Math.min(1.2 * p[i], 1);
          stepSize[i] = (maxP[i] - minP[i]) / remaining;
        }
        if (isBest || p[i] === maxP[i]) p[i] = minP[i];
        p[i] = Math.min(p[i] + stepSize[i], maxP[i]);
      });
    }
    return result;
  });
}

/** Options of {@linkcode pointwise}. */
export interface PointwiseOptions {
  /** Independent runs (fresh salt-and-pepper start each); the smallest L0 per sample is kept. */
  restarts?: number;
  /** Steps of the salt-and-pepper start. */
  saltAndPepperSteps?: number;
  /** After the reset passes, bisect each remaining changed value toward its clean value (foolbox `l2_binary_search`). */
  l2BinarySearch?: boolean;
  /** Bisection passes at most; foolbox repeats until a pass improves nothing. */
  bisectionPasses?: number;
  /** Halvings per value in a bisection pass. */
  bisectionSteps?: number;
}

/**
 * The Pointwise attack (Schott2019 §5; foolbox 3 `PointwiseAttack`), an L0
 * minimization by decisions only: start from salt-and-pepper noise, then in
 * passes over the changed values in random order reset each to its clean
 * value where the input stays misclassified, until a pass resets none. With
 * `l2BinarySearch`, further passes bisect each value still changed between
 * its adversarial and clean value (`bisectionSteps` halvings), shrinking L2
 * at the same L0. `restarts` runs keep per sample the fewest changed values
 * (then the smaller L2). Samples never fooled are returned clean (failure).
 */
export function pointwise(options: PointwiseOptions = {}): Attack {
  const { restarts = 10, saltAndPepperSteps = 1000, l2BinarySearch = true, bisectionPasses = 10, bisectionSteps = 10 } =
    options;
  positive("restarts", restarts, true);
  positive("bisectionSteps", bisectionSteps, true);
  if (!(bisectionPasses >= 0)) throw new UsageError(`bisectionPasses must be ≥ 0, got ${bisectionPasses}`);
  const start = saltAndPepper({ steps: saltAndPepperSteps });
  return decisionAttack("pointwise", "l0", async (model, batch, epsilon, rng) => {
    const { n, x, d } = batch;
    const best = x.slice();
    const bestL0 = new Float64Array(n).fill(Infinity);
    const bestL2 = new Float64Array(n).fill(Infinity);
    for (let r = 0; r < restarts; r++) {
      const adv = await start.perturb(model, batch, epsilon, rng);
      const isAdv = await adversarialRows(model, batch, adv, allRows(n));
      const rows = allRows(n).filter((i) => isAdv[i]);
      await resetPasses(model, batch, adv, rows, rng);
      if (l2BinarySearch) await bisectionPassesOf(model, batch, adv, rows, rng, bisectionPasses, bisectionSteps);
      const zeros = l0(x, adv, n);
      const norms = l2(x, adv, n);
      for (const i of rows) {
        if (zeros[i] < bestL0[i] || (zeros[i] === bestL0[i] && norms[i] < bestL2[i])) {
          bestL0[i] = zeros[i];
          bestL2[i] = norms[i];
          best.set(adv.subarray(i * d, (i + 1) * d), i * d);
        }
      }
    }
    return best;
  });
}

/** Per row, the indices where `adv` differs from `x` by more than `tolerance`, in random order. */
function shuffledChanges(x: Float32Array, adv: Float32Array, d: number, rows: number[], rng: Rng, tolerance: number) {
  return new Map(rows.map((i) => {
    const changed: number[] = [];
    for (let j = 0; j < d; j++) if (Math.abs(x[i * d + j] - adv[i * d + j]) > tolerance) changed.push(j);
    return [i, Array.from(rng.permutation(changed.length), (k) => changed[k])];
  }));
}

/**
 * One Pointwise pass over `rows`, in place on `adv`: each row's changed values (by more than
 * `tolerance`) in random order; at each position the value of every row that has one is reset
 * to its clean value at once and those rows are queried. `settle` gets the rows tried, the flat
 * indices reset, their previous values and which rows stayed adversarial, and returns the rows
 * it improved. Returns the rows improved anywhere in the pass, in the order of `rows`.
 */
async function pointwisePass(
  model: AttackModel,
  batch: AttackBatch,
  adv: Float32Array,
  rows: number[],
  rng: Rng,
  tolerance: number,
  settle: (tried: number[], at: number[], old: number[], isAdv: Uint8Array) => number[] | Promise<number[]>,
): Promise<number[]> {
  const { x } = batch;
  const d = x.length / batch.n;
  const order = shuffledChanges(x, adv, d, rows, rng, tolerance);
  const improved = new Set<number>();
  const longest = Math.max(...rows.map((i) => order.get(i)!.length));
  for (let pos = 0; pos < longest; pos++) {
    const tried = rows.filter((i) => order.get(i)!.length > pos);
    const at = tried.map((i) => i * d + order.get(i)![pos]);
    const old = at.map((j) => adv[j]);
    for (const j of at) adv[j] = x[j];
    const isAdv = await adversarialRows(model, batch, adv, tried);
    for (const i of await settle(tried, at, old, isAdv)) improved.add(i);
  }
  return rows.filter((i) => improved.has(i));
}

/** Pointwise's reset passes, in place on `adv`: rows that reset nothing in a pass drop out. */
async function resetPasses(model: AttackModel, batch: AttackBatch, adv: Float32Array, rows: number[], rng: Rng) {
  let active = rows;
  while (active.length) {
    active = await pointwisePass(model, batch, adv, active, rng, 1e-8, (tried, at, old, isAdv) => {
      // A reset that loses the adversarial is undone.
      at.forEach((j, k) => {
        if (!isAdv[k]) adv[j] = old[k];
      });
      return tried.filter((_, k) => isAdv[k]);
    });
  }
}

/** Pointwise's bisection passes, in place on `adv` (foolbox `_binary_search` per value). */
async function bisectionPassesOf(
  model: AttackModel,
  batch: AttackBatch,
  adv: Float32Array,
  rows: number[],
  rng: Rng,
  passes: number,
  halvings: number,
) {
  const { x } = batch;
  let active = rows;
  for (let pass = 0; pass < passes && active.length; pass++) {
    active = await pointwisePass(model, batch, adv, active, rng, 1e-12, async (tried, at, old, isAdv) => {
      const improved = tried.filter((_, k) => isAdv[k]);
      const failed = tried.flatMap((_, k) => isAdv[k] ? [] : [k]);
      if (!failed.length) return improved;
      // Bisect between the adversarial old value and the clean one for the rows that lost the adversarial.
      const good = failed.map((k) => old[k]);
      const bad = failed.map((k) => x[at[k]]);
      const failedRows = failed.map((k) => tried[k]);
      for (let h = 0; h < halvings; h++) {
        failed.forEach((k, f) => (adv[at[k]] = Math.fround((good[f] + bad[f]) / 2)));
        const stillAdv = await adversarialRows(model, batch, adv, failedRows);
        failed.forEach((k, f) => {
          if (stillAdv[f]) good[f] = adv[at[k]];
          else bad[f] = adv[at[k]];
        });
      }
      failed.forEach((k, f) => {
        adv[at[k]] = good[f];
        if (good[f] !== old[k]) improved.push(tried[k]);
      });
      return improved;
    });
  }
}
