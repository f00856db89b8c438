/**
 * Noise training against common corruptions (Rusak2020
 * §3.1–3.2; bethgelab/game-of-noise `utils.py`, `evaluation_utils.py`):
 * Gaussian noise training (GNT) perturbs the last half of each batch with
 * clipped Gaussian noise; adversarial noise training (ANT) learns the noise
 * distribution with a generator that maximises the classifier's loss at a
 * fixed L2 size ε, and trains the classifier on a batch mixing clean images,
 * the current generator's noise and noise from earlier generators.
 *
 * The L2 size is fixed after clipping by Rauber & Bethge's clipping-aware
 * rescaling (`fix_perturbation_size`), in a plain version on arrays and a
 * TF.js version whose gradient reaches the generator through the scale, as
 * the reference's autograd does.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import {
  freezeGenerator,
  type FrozenNoiseGenerator,
  GENERATOR_KINDS,
  generatorInputSide,
  type GeneratorKind,
  type NoiseGenerator,
  noiseGenerator,
} from "../models/noise_generator.ts";
import type { Classifier } from "../models/small_cnn.ts";

/** GNT_mult's σ per image: the ImageNet-C Gaussian-noise severities (`gaussian_noise_torch`). */
export const GNT_MULT_SIGMAS: readonly number[] = [0.08, 0.12, 0.18, 0.26, 0.38];

/** The Speckle baseline's σ per image (`speckle_noise_torch`, ImageNet-C's hold-out speckle noise). */
export const SPECKLE_SIGMAS: readonly number[] = [0.15, 0.2, 0.35, 0.45, 0.6];

/** The squared-δ floor of the reference, so a zero direction entry never divides by zero. */
const TINY = 1e-20;

// ---------------------------------------------------------------------------------------------
// Gaussian and speckle noise training

/**
 * GNT's training batch: the last rows of `x` `[b, h, w, c]` (values in [0, 1])
 * become clip(x + N(0, σ²)), the first rows stay clean. With one σ the noisy
 * rows start at round(b·cleanFraction) (`Gauss_single`); with a set, each noisy
 * image draws its σ uniformly from it and the rows start at
 * round(b·(1 − cleanFraction)) (`Gauss_mult`; the same at the default 0.5).
 * Rounding is numpy's (halves to even: b = 5 keeps 2 clean, b = 7 keeps 4).
 *
 * @param sigma one noise s.d. (pixel units), or the set to draw from ({@linkcode GNT_MULT_SIGMAS})
 * @param cleanFraction share of the batch left clean
 * @returns a new `[b, h, w, c]` tensor (the caller disposes it)
 */
export function gaussianNoiseBatch(
  x: tf.Tensor4D,
  sigma: number | readonly number[],
  rng: Rng,
  cleanFraction = 0.5,
): tf.Tensor4D {
  return noiseBatch(x, sigma, rng, cleanFraction, false);
}

/**
 * The Speckle baseline's batch: as {@linkcode gaussianNoiseBatch}, which takes the same
 * arguments, with multiplicative noise clip(x + x·N(0, σ²)); with a set (the reference's is
 * {@linkcode SPECKLE_SIGMAS}) σ is drawn per image and the noisy rows start at
 * round(b·(1 − cleanFraction)).
 */
export function speckleNoiseBatch(...args: Parameters<typeof gaussianNoiseBatch>): tf.Tensor4D {
  const [x, sigma, rng, cleanFraction = 0.5] = args;
  return noiseBatch(x, sigma, rng, cleanFraction, true);
}

function noiseBatch(
  x: tf.Tensor4D,
  sigma: number | readonly number[],
  rng: Rng,
  cleanFraction: number,
  multiplicative: boolean,
): tf.Tensor4D {
  checkImages(x, "noise batch");
  checkFraction(cleanFraction, "cleanFraction");
  const set = typeof sigma === "number" ? [sigma] : sigma;
  if (set.length === 0 || !set.every((s) => Number.isFinite(s) && s > 0)) {
    throw new UsageError(`noise σ must be finite and > 0 (one value or a non-empty set), got ${JSON.stringify(sigma)}`);
  }
  const b = x.shape[0];
  // The reference's two modes place the cut differently; they agree at cleanFraction 0.5.
  const start = roundHalfEven(b * (typeof sigma === "number" ? cleanFraction : 1 - cleanFraction));
  const rows = b - start;
  if (rows === 0) return tf.clone(x);
  const sigmas = Float32Array.from({ length: rows }, () => set.length === 1 ? set[0] : set[rng.int(set.length)]);
  const seed = rng.int32();
  return tf.tidy(() => {
    const tail = tf.slice(x, [start, 0, 0, 0], [rows, -1, -1, -1]);
    let noise: tf.Tensor = tf.mul(
      tf.randomNormal(tail.shape, 0, 1, "float32", seed),
      tf.tensor4d(sigmas, [rows, 1, 1, 1]),
    );
    if (multiplicative) noise = tf.mul(tail, noise);
    const noisy = tf.clipByValue(tf.add(tail, noise), 0, 1) as tf.Tensor4D;
    return start === 0 ? noisy : tf.concat([tf.slice(x, [0, 0, 0, 0], [start, -1, -1, -1]), noisy], 0);
  });
}

// ---------------------------------------------------------------------------------------------
// Clipping-aware rescaling

/**
 * Per row, the scale η ≥ 0 with ‖clip(x + ηδ, low, high) − x‖₂ = ε (Rauber &
 * Bethge 2020; game-of-noise `fix_perturbation_size`). The squared norm is
 * piecewise linear in η²: coordinate k clips at η² = f²_k = (δ_k ≥ 0 ? high −
 * x_k : x_k − low)²/δ²_k. With f² ascending, m_k = Σ_{j≥k} δ²_j and y =
 * cumsum(m·Δf²), the first k with y_k ≥ ε² gives η² = f²_k − (y_k − ε²)/m_k;
 * where even full clipping stays below ε, η² = max f² (every coordinate clipped).
 * Computed in float64.
 *
 * @param x clean inputs `[n, d]` row-major, inside [low, high]
 * @param delta directions `[n, d]`
 * @returns `[n]` the scale per row
 */
export function clippingAwareRescale(
  x: Float32Array,
  delta: Float32Array,
  n: number,
  d: number,
  eps: number,
  low = 0,
  high = 1,
): Float64Array {
  checkRescaleInputs(x, delta, n, d, eps, low, high);
  const eta = new Float64Array(n);
  const f2 = new Float64Array(d), d2 = new Float64Array(d), m = new Float64Array(d);
  const order = Array.from({ length: d }, (_, k) => k);
  const eps2 = eps * eps;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < d; k++) {
      const v = delta[i * d + k], xv = x[i * d + k];
      const space = v >= 0 ? high - xv : xv - low;
      d2[k] = v * v;
      f2[k] = (space * space) / Math.max(d2[k], TINY);
    }
    order.sort((a, b) => f2[a] - f2[b]);
    let tail = 0;
    for (let k = d - 1; k >= 0; k--) m[k] = tail += d2[order[k]];
    let y = 0, previous = 0, eta2 = f2[order[d - 1]];
    for (let k = 0; k < d; k++) {
      const f = f2[order[k]];
      y += m[k] * (f - previous);
      previous = f;
      if (y >= eps2) {
        eta2 = f - (y - eps2) / m[k];
        break;
      }
    }
    eta[i] = Math.sqrt(eta2);
  }
  return eta;
}

/**
 * clip(x + ηδ, low, high) with η from {@linkcode clippingAwareRescale}, which
 * takes the same arguments: each row at L2 distance ε from x (less where full
 * clipping cannot reach ε).
 *
 * @returns `[n, d]` the rescaled, clipped inputs
 */
export function clippingAwareRescaled(...args: Parameters<typeof clippingAwareRescale>): Float32Array {
  const eta = clippingAwareRescale(...args);
  const [x, delta, n, d, , low = 0, high = 1] = args;
  const out = new Float32Array(n * d);
  for (let i = 0; i < n; i++) {
    for (let k = i * d; k < (i + 1) * d; k++) out[k] = Math.min(high, Math.max(low, x[k] + eta[i] * delta[k]));
  }
  return out;
}

/**
 * TF.js version of {@linkcode clippingAwareRescale}'s η², per row of
 * `x`, `delta` `[n, ...]`. Not differentiable (it sorts); it serves as the
 * reference point of {@linkcode rescaleToNorm}.
 *
 * @returns `[n]` η² (the caller disposes it)
 */
export function clippingAwareScaleSquared(
  x: tf.Tensor,
  delta: tf.Tensor,
  eps: number,
  low = 0,
  high = 1,
): tf.Tensor1D {
  return tf.tidy(() => {
    const { d2, f2 } = clipGeometry(x, delta, low, high);
    const [n, d] = f2.shape;
    const sorted = tf.topk(tf.neg(f2), d, true);
    const f2Sorted = tf.neg(sorted.values) as tf.Tensor2D;
    const flatIndex = tf.add(sorted.indices, tf.range(0, n * d, d, "int32").reshape([n, 1]));
    const d2Sorted = tf.gather(tf.reshape(d2, [n * d]), tf.reshape(flatIndex, [n * d])).reshape([n, d]);
    const m = tf.cumsum(d2Sorted, 1, false, true);
    const dx = d === 1 ? f2Sorted : tf.concat([
      tf.slice(f2Sorted, [0, 0], [n, 1]),
      tf.sub(tf.slice(f2Sorted, [0, 1], [n, d - 1]), tf.slice(f2Sorted, [0, 0], [n, d - 1])),
    ], 1);
    const y = tf.cumsum(tf.mul(m, dx), 1);
    // The first k with y_k ≥ ε²: weights d, d−1, …, 1 make the first crossing the unique maximum.
    const score = tf.mul(tf.cast(tf.greaterEqual(y, eps * eps), "float32"), tf.range(d, 0, -1, "float32"));
    const pick = tf.oneHot(tf.argMax(score, 1), d).toFloat();
    const at = (t: tf.Tensor) => tf.sum(tf.mul(t, pick), 1);
    const crossing = tf.sub(at(f2Sorted), tf.div(tf.sub(at(y), eps * eps), at(m)));
    return tf.where(tf.greater(tf.max(score, 1), 0), crossing, tf.max(f2Sorted, 1)) as tf.Tensor1D;
  });
}

/**
 * clip(x + ηδ, low, high) with ‖clip(x + ηδ) − x‖₂ = ε, differentiable in δ:
 * with the clipped coordinates fixed at those of `eta2Reference` (η² from
 * {@linkcode clippingAwareScaleSquared} on the same δ), η² = (ε² − Σ_clipped
 * (space_k)²) / Σ_unclipped δ²_k, which is the reference's formula rewritten.
 * Its gradient is the one PyTorch's autograd takes through
 * `fix_perturbation_size` (the scale is not treated as a constant).
 *
 * @param x clean inputs `[n, h, w, c]` in [low, high]
 * @param delta directions `[n, h, w, c]`
 * @param eta2Reference `[n]` η² for δ's current values
 * @returns `[n, h, w, c]` (inside a gradient scope, or the caller disposes it)
 */
export function rescaleToNorm(
  x: tf.Tensor4D,
  delta: tf.Tensor4D,
  eps: number,
  eta2Reference: tf.Tensor1D,
  low = 0,
  high = 1,
): tf.Tensor4D {
  return tf.tidy(() => {
    const { d2, s2, f2 } = clipGeometry(x, delta, low, high);
    const n = f2.shape[0];
    const unclipped = tf.greaterEqual(f2, tf.reshape(eta2Reference, [n, 1]));
    const zeros = tf.zerosLike(d2);
    const numerator = tf.sub(eps * eps, tf.sum(tf.where(unclipped, zeros, s2), 1));
    const denominator = tf.sum(tf.where(unclipped, d2, zeros), 1);
    // Where clipping every coordinate that moves stays below ε the reference takes η² = max f².
    const reachable = tf.greaterEqual(tf.sum(tf.where(tf.greaterEqual(d2, TINY), s2, zeros), 1), eps * eps);
    const eta2 = tf.where(reachable, tf.div(numerator, tf.maximum(denominator, TINY)), tf.max(f2, 1));
    const eta = tf.sqrt(tf.maximum(eta2, TINY)).reshape([n, 1, 1, 1]);
    return tf.clipByValue(tf.add(x, tf.mul(eta, delta)), low, high) as tf.Tensor4D;
  });
}

/** clip(x + ηδ) at L2 distance ε from x, without gradients (classifier batches, evaluation). */
export function clippingAwareRescaleTensor(
  x: tf.Tensor4D,
  delta: tf.Tensor4D,
  eps: number,
  low = 0,
  high = 1,
): tf.Tensor4D {
  return tf.tidy(() => rescaleToNorm(x, delta, eps, clippingAwareScaleSquared(x, delta, eps, low, high), low, high));
}

/** Per coordinate `[n, d]`: δ², the room to the bound δ points to squared, and their ratio f². */
function clipGeometry(x: tf.Tensor, delta: tf.Tensor, low: number, high: number) {
  const n = x.shape[0];
  const flatX = tf.reshape(x, [n, -1]) as tf.Tensor2D, flatDelta = tf.reshape(delta, [n, -1]) as tf.Tensor2D;
  const d2 = tf.square(flatDelta);
  const space = tf.where(tf.greaterEqual(flatDelta, 0), tf.sub(high, flatX), tf.sub(flatX, low));
  const s2 = tf.square(space);
  const f2 = tf.div(s2, tf.maximum(d2, TINY)) as tf.Tensor2D;
  return { d2, s2, f2 };
}

function checkRescaleInputs(
  x: Float32Array,
  delta: Float32Array,
  n: number,
  d: number,
  eps: number,
  low: number,
  high: number,
): void {
  if (!(Number.isInteger(n) && n >= 0 && Number.isInteger(d) && d >= 1)) {
    throw new UsageError(`rescale needs integer n ≥ 0 and d ≥ 1, got n = ${n}, d = ${d}`);
  }
  if (x.length !== n * d || delta.length !== n * d) {
    throw new UsageError(`rescale needs x and delta of n·d = ${n * d} values, got ${x.length} and ${delta.length}`);
  }
  if (!(Number.isFinite(eps) && eps > 0)) throw new UsageError(`ε must be finite and > 0, got ${eps}`);
  if (!(low < high)) throw new UsageError(`bounds must satisfy low < high, got [${low}, ${high}]`);
  for (let k = 0; k < n * d; k++) {
    if (!(x[k] >= low && x[k] <= high)) throw new UsageError(`x[${k}] = ${x[k]} is outside [${low}, ${high}]`);
    if (!Number.isFinite(delta[k])) throw new UsageError(`delta[${k}] = ${delta[k]} is not finite`);
  }
}

// ---------------------------------------------------------------------------------------------
// Adversarial noise training

/** Settings of ANT (defaults: game-of-noise `DefaultArguments`, Rusak2020 App. B). */
export interface AntOptions {
  /** Image channels C. */
  channels: number;
  /** Generator architecture (default `1x1`). */
  kind?: GeneratorKind;
  /** L2 size of every perturbation after clipping (MNIST 10, ImageNet 135 for 1×1). */
  epsilon: number;
  /** Adam learning rate of the generator during joint training. */
  generatorLr: number;
  /** Adam learning rate of a restarted generator's own training (default `generatorLr`). */
  restartLr?: number;
  /** Share of clean images in a classifier batch (default 0.5). */
  cleanFraction?: number;
  /** Share perturbed by the current generator after epoch 0 (default 0.3; in epoch 0, 1 − cleanFraction). */
  currentFraction?: number;
  /** Share per saved generator (experience replay, default 0.1). */
  historyFraction?: number;
  /** The input box (default [0, 1]). */
  bounds?: [number, number];
}

/** The running state of ANT: the current generator, its optimizer and the saved generators. */
export interface AntState {
  /** The options with every default filled in. */
  readonly options: Readonly<Required<AntOptions>>;
  /** The generator being trained now. */
  generator: NoiseGenerator;
  /** The generator's Adam optimizer. */
  optimizer: tf.Optimizer;
  /** Generators saved by {@linkcode saveGeneratorState}, oldest first. */
  history: FrozenNoiseGenerator[];
}

/** Checks `options` and builds a fresh generator with its Adam optimizer; free it with {@linkcode disposeAnt}. */
export function createAnt(rng: Rng, options: AntOptions): AntState {
  const resolved: Required<AntOptions> = {
    kind: "1x1",
    restartLr: options.generatorLr,
    cleanFraction: 0.5,
    currentFraction: 0.3,
    historyFraction: 0.1,
    bounds: [0, 1],
    ...options,
  };
  const { channels, kind, epsilon, generatorLr, restartLr, bounds } = resolved;
  if (!(Number.isInteger(channels) && channels >= 1)) {
    throw new UsageError(`channels must be an integer ≥ 1, got ${channels}`);
  }
  if (!GENERATOR_KINDS.includes(kind)) {
    throw new UsageError(`unknown generator kind "${kind}"; valid: ${GENERATOR_KINDS.join(", ")}`);
  }
  if (!(Number.isFinite(epsilon) && epsilon > 0)) throw new UsageError(`ANT ε must be finite and > 0, got ${epsilon}`);
  for (const [name, lr] of [["generatorLr", generatorLr], ["restartLr", restartLr]] as const) {
    if (!(Number.isFinite(lr) && lr > 0)) throw new UsageError(`${name} must be finite and > 0, got ${lr}`);
  }
  for (const name of ["cleanFraction", "currentFraction", "historyFraction"] as const) {
    checkFraction(resolved[name], name);
  }
  if (resolved.currentFraction + resolved.cleanFraction > 1 + 1e-12) {
    throw new UsageError(
      `currentFraction + cleanFraction must be ≤ 1, got ${resolved.currentFraction} + ${resolved.cleanFraction}`,
    );
  }
  if (!(bounds[0] < bounds[1])) throw new UsageError(`bounds must satisfy low < high, got [${bounds}]`);
  return {
    options: resolved,
    generator: noiseGenerator(rng, channels, kind),
    optimizer: tf.train.adam(generatorLr),
    history: [],
  };
}

/**
 * One Adam step of the current generator maximising the frozen classifier's
 * mean cross-entropy on clip(x + η·g(z)) at L2 size ε (`train_noise_generator`),
 * z ~ N(0, I) drawn per call. Only the generator's variables change.
 *
 * @param x clean images `[b, h, w, C]`, `labels` `[b]` int32 (both stay the caller's)
 * @returns the cross-entropy before the step, nats (the caller disposes it)
 */
export function antGeneratorStep(
  classifier: Classifier,
  state: AntState,
  x: tf.Tensor4D,
  labels: tf.Tensor1D,
  rng: Rng,
): tf.Scalar {
  checkImages(x, "ANT generator step", state.options.channels);
  if (labels.shape[0] !== x.shape[0]) {
    throw new UsageError(`ANT generator step: ${labels.shape[0]} labels for ${x.shape[0]} images`);
  }
  const { generator, optimizer, options: { epsilon, bounds: [low, high] } } = state;
  const z = drawZ(generator.kind, x.shape[0], x, rng);
  // The clipped coordinates are read off δ's current values outside the tape (the sort has no gradient).
  const reference = tf.tidy(() => clippingAwareScaleSquared(x, generator.noise(z), epsilon, low, high));
  const negativeLoss = optimizer.minimize(
    () => {
      const noisy = rescaleToNorm(x, generator.noise(z), epsilon, reference, low, high);
      const logits = classifier.logits(noisy);
      return tf.neg(tf.losses.softmaxCrossEntropy(tf.oneHot(labels, logits.shape[1]).toFloat(), logits)) as tf.Scalar;
    },
    true,
    generator.params.list(),
  )!;
  const loss = tf.neg(negativeLoss) as tf.Scalar;
  tf.dispose([z, reference, negativeLoss]);
  return loss;
}

/** Row ranges of an ANT classifier batch; rows from `cleanFrom` on stay clean. */
export interface AntBatchSlices {
  /** Rows [0, current) carry the current generator's noise. */
  current: number;
  /** One [start, end) per saved generator used, in the order they are filled. */
  history: [number, number][];
  /** First clean row: rows [cleanFrom, b) carry no noise. */
  cleanFrom: number;
}

/**
 * The layout of a classifier batch of `b` images (`generate_noisy_data`):
 * round(b·currentFraction) rows from the current generator (round(b·(1 −
 * cleanFraction)) in epoch 0, which has no history), then slices of
 * round-bounded b·historyFraction rows, one per saved generator (each used at
 * most once) while the running fraction is below cleanFraction − 0.001 (the
 * reference compares with cleanFraction itself, which equals 1 − cleanFraction
 * at its default 0.5), then clean rows. Rounding is numpy's (halves to even).
 */
export function antBatchSlices(
  b: number,
  epoch: number,
  saved: number,
  options: Pick<Required<AntOptions>, "cleanFraction" | "currentFraction" | "historyFraction">,
): AntBatchSlices {
  const { cleanFraction, historyFraction } = options;
  const currentFraction = epoch === 0 ? 1 - cleanFraction : options.currentFraction;
  const current = Math.min(b, roundHalfEven(b * currentFraction));
  const history: [number, number][] = [];
  if (epoch > 0) {
    let counter = currentFraction;
    for (let k = 0; k < saved && counter < cleanFraction - 0.001; k++, counter += historyFraction) {
      history.push([
        Math.min(b, roundHalfEven(b * counter)),
        Math.min(b, roundHalfEven(b * (counter + historyFraction))),
      ]);
    }
  }
  return { current, history, cleanFrom: history.length ? Math.max(current, history.at(-1)![1]) : current };
}

/**
 * The classifier's training batch (see {@linkcode antBatchSlices}): rows
 * perturbed by the current generator, then one slice per randomly chosen
 * saved generator, then clean rows; every perturbation at L2 size ε after
 * clipping. Labels keep their order.
 *
 * @param x clean images `[b, h, w, C]` (stays the caller's)
 * @param epoch 0-based; epoch 0 uses no history
 * @returns `[b, h, w, C]` (the caller disposes it)
 */
export function antClassifierBatch(state: AntState, x: tf.Tensor4D, rng: Rng, epoch: number): tf.Tensor4D {
  checkImages(x, "ANT classifier batch", state.options.channels);
  if (!(Number.isInteger(epoch) && epoch >= 0)) throw new UsageError(`epoch must be an integer ≥ 0, got ${epoch}`);
  const { epsilon, bounds: [low, high] } = state.options;
  const b = x.shape[0];
  const slices = antBatchSlices(b, epoch, state.history.length, state.options);
  const order = epoch > 0 ? rng.permutation(state.history.length) : new Int32Array(0);
  const parts: [FrozenNoiseGenerator | NoiseGenerator, number, number][] = [[state.generator, 0, slices.current]];
  slices.history.forEach(([start, end], k) => parts.push([state.history[order[k]], start, end]));
  const draws = parts.map(([generator, start, end]) => end > start ? drawZ(generator.kind, end - start, x, rng) : null);
  const batch = tf.tidy(() => {
    const pieces: tf.Tensor4D[] = [];
    parts.forEach(([generator, start, end], k) => {
      if (end <= start) return;
      const clean = tf.slice(x, [start, 0, 0, 0], [end - start, -1, -1, -1]);
      pieces.push(clippingAwareRescaleTensor(clean, generator.noise(draws[k]!), epsilon, low, high));
    });
    if (slices.cleanFrom < b) pieces.push(tf.slice(x, [slices.cleanFrom, 0, 0, 0], [b - slices.cleanFrom, -1, -1, -1]));
    return pieces.length === 1 ? pieces[0] : tf.concat(pieces, 0);
  });
  tf.dispose(draws.filter((z) => z !== null));
  return batch;
}

/**
 * Adds a frozen copy of the current generator to the history. The reference
 * saves once per epoch right after the epoch's restart, so the history includes
 * the generator the current epoch started with.
 */
export function saveGeneratorState(state: AntState): void {
  state.history.push(freezeGenerator(state.generator));
}

/**
 * Replaces the generator by a fresh one trained from scratch against the
 * frozen classifier (`retrain_ng_and_evaluate`): `steps` Adam steps at
 * `restartLr` on the batches `nextBatch(step)` returns (0-based; this function
 * disposes them after use), then the old generator and its optimizer are freed
 * and joint training continues with a fresh Adam at `generatorLr`.
 *
 * @returns the cross-entropy of the last training step (null when `steps` is 0; the caller disposes it)
 */
export function restartGenerator(
  classifier: Classifier,
  state: AntState,
  rng: Rng,
  steps: number,
  nextBatch: (step: number) => { x: tf.Tensor4D; labels: tf.Tensor1D },
): tf.Scalar | null {
  if (!(Number.isInteger(steps) && steps >= 0)) {
    throw new UsageError(`restart steps must be an integer ≥ 0, got ${steps}`);
  }
  const { channels, kind, restartLr, generatorLr } = state.options;
  const fresh: AntState = {
    options: state.options,
    generator: noiseGenerator(rng, channels, kind),
    optimizer: tf.train.adam(restartLr),
    history: [],
  };
  let last: tf.Scalar | null = null;
  try {
    for (let step = 0; step < steps; step++) {
      const { x, labels } = nextBatch(step);
      try {
        last?.dispose();
        last = antGeneratorStep(classifier, fresh, x, labels, rng);
      } finally {
        tf.dispose([x, labels]);
      }
    }
  } catch (error) {
    last?.dispose();
    fresh.generator.params.dispose();
    throw error;
  } finally {
    fresh.optimizer.dispose();
  }
  state.generator.params.dispose();
  state.optimizer.dispose();
  state.generator = fresh.generator;
  state.optimizer = tf.train.adam(generatorLr);
  return last;
}

/** Frees the generator, its optimizer and every saved generator. */
export function disposeAnt(state: AntState): void {
  state.generator.params.dispose();
  state.optimizer.dispose();
  for (const saved of state.history) saved.dispose();
  state.history.length = 0;
}

/** z ~ N(0, I) `[rows, h', w', C]` for images like `x`, with the sides the generator kind needs. */
function drawZ(kind: GeneratorKind, rows: number, x: tf.Tensor4D, rng: Rng): tf.Tensor4D {
  const [, h, w, c] = x.shape;
  return tf.randomNormal(
    [rows, generatorInputSide(kind, h), generatorInputSide(kind, w), c],
    0,
    1,
    "float32",
    rng.int32(),
  );
}

// ---------------------------------------------------------------------------------------------
// Checks and rounding

/** numpy's `np.round`: halves go to the even neighbour (2.5 → 2, 3.5 → 4). */
function roundHalfEven(v: number): number {
  const r = Math.round(v);
  return Math.abs(v - Math.trunc(v)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

function checkFraction(value: number, name: string): void {
  if (!(Number.isFinite(value) && value >= 0 && value <= 1)) {
    throw new UsageError(`${name} must be a fraction in [0, 1], got ${value}`);
  }
}

function checkImages(x: tf.Tensor, what: string, channels?: number): void {
  if (x.rank !== 4) throw new UsageError(`${what}: images must be [b, h, w, c], got shape [${x.shape}]`);
  if (channels !== undefined && x.shape[3] !== channels) {
    throw new UsageError(`${what}: images have ${x.shape[3]} channels, the generator ${channels}`);
  }
}
