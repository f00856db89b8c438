/**
 * A procedural stand-in for the rat hippocampus recordings of CEBRA's
 * Fig. 7.2–7.6 (hc-11, Grosmark & Buzsáki 2016, which cannot be shipped):
 * a rat runs back and forth on a 1.6 m linear track and directional place
 * cells fire Poisson spikes in 25 ms bins (Schneider2023 Ch. 7;
 * the specification of our issue "Place cells").
 *
 * - Each run crosses the whole track with a sin² speed profile of peak
 *   U[0.5, 1] m/s (duration 2L/peak), then the rat pauses U[1, 3] s at the
 *   end; the next run goes the other way. The first run starts at either end.
 * - Each neuron has one Gaussian place field per running direction: centre
 *   U[0, 1.6] m, width σ U[5, 15] cm, peak U[5, 20] Hz, over a 0.1 Hz base.
 *   During a pause the rat sits at the end in the direction of the run it
 *   finished.
 * - Labels per bin are [position (m), right, left], right/left one-hot of the
 *   running direction, as CEBRA's `rat-hippocampus-*` continuous index; a run
 *   id per bin counts runs (one direction each, with the pause after it).
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";
import type { Rng } from "../core/rng.ts";
import { poissonVariate } from "./random_variates.ts";

/** Track length (m). */
export const TRACK_LENGTH = 1.6;
/** Bin width (s). */
export const BIN_SECONDS = 0.025;
/** Peak running speed range (m/s). */
export const PEAK_SPEED: readonly [number, number] = [0.5, 1];
/** Pause range at the track ends (s). */
export const PAUSE_SECONDS: readonly [number, number] = [1, 3];
/** Place-field width range σ (m). */
export const FIELD_SIGMA: readonly [number, number] = [0.05, 0.15];
/** Place-field peak rate range above the base (Hz). */
export const FIELD_PEAK: readonly [number, number] = [5, 20];
/** Base firing rate (Hz). */
export const BASE_RATE = 0.1;

/** One place field per neuron for one running direction. */
export interface PlaceFields {
  /** Centres (m). */
  centre: Float64Array;
  /** Widths σ (m). */
  sigma: Float64Array;
  /** Peak rates above the base (Hz). */
  peak: Float64Array;
}

/** One simulated rat. */
export interface PlaceCellRat {
  /** Spike counts per bin `[T, neurons]`. */
  spikes: Matrix;
  /** `[T, 3]`: position (m), right, left. */
  labels: Matrix;
  /** Run id per bin (0, 1, …; a run is one crossing and the pause after it). */
  runs: Int32Array;
  /** Number of neurons. */
  neurons: number;
  /** Firing rates (Hz) per bin `[T, neurons]`, the Poisson means divided by the bin width. */
  rates: Matrix;
  /** The fields for running right (position increasing) and left. */
  fields: { right: PlaceFields; left: PlaceFields };
  /** Peak speed of each run (m/s), by run id. */
  peakSpeed: Float64Array;
  /** Pause after each run (s), by run id. */
  pause: Float64Array;
}

/** Options of {@linkcode placeCellRats}. */
export interface PlaceCellOptions {
  /** Neurons of each rat (default [120, 48, 80, 64], the four rats of hc-11 as CEBRA uses them). */
  rats?: number[];
  /** Bins per rat (default 10,000: 250 s). */
  bins?: number;
}

const uniformIn = (rng: Rng, [lo, hi]: readonly [number, number]) => lo + (hi - lo) * rng.uniform();

function drawFields(rng: Rng, neurons: number): PlaceFields {
  return {
    centre: Float64Array.from({ length: neurons }, () => TRACK_LENGTH * rng.uniform()),
    sigma: Float64Array.from({ length: neurons }, () => uniformIn(rng, FIELD_SIGMA)),
    peak: Float64Array.from({ length: neurons }, () => uniformIn(rng, FIELD_PEAK)),
  };
}

/** Firing rate (Hz) of neuron `i` at `position` under `fields`. */
export function fieldRate(fields: PlaceFields, i: number, position: number): number {
  const d = (position - fields.centre[i]) / fields.sigma[i];
  return BASE_RATE + fields.peak[i] * Math.exp(-0.5 * d * d);
}

/**
 * Simulated rats (module notes), each drawn from `rng` in turn: fields,
 * trajectory, spikes. Every rat has exactly `bins` bins; its last run may be
 * cut short.
 */
export function placeCellRats(rng: Rng, options: PlaceCellOptions = {}): PlaceCellRat[] {
  const rats = options.rats ?? [120, 48, 80, 64];
  const bins = options.bins ?? 10_000;
  if (!Array.isArray(rats) || rats.length === 0 || !rats.every((n) => Number.isSafeInteger(n) && n >= 1)) {
    throw new UsageError(`rats must be a non-empty list of neuron counts ≥ 1, got ${JSON.stringify(rats)}`);
  }
  if (!Number.isSafeInteger(bins) || bins < 1) throw new UsageError(`bins must be an integer ≥ 1, got ${bins}`);
  return rats.map((neurons) => simulateRat(rng, neurons, bins));
}

function simulateRat(rng: Rng, neurons: number, bins: number): PlaceCellRat {
  const fields = { right: drawFields(rng, neurons), left: drawFields(rng, neurons) };
  const labels = new Float64Array(bins * 3);
  const runs = new Int32Array(bins);
  const peakSpeed: number[] = [];
  const pause: number[] = [];
  let right = rng.uniform() < 0.5;
  let runStart = 0;
  let bin = 0;
  while (bin < bins) {
    const speed = uniformIn(rng, PEAK_SPEED);
    const rest = uniformIn(rng, PAUSE_SECONDS);
    // ∫ v sin²(πτ/D) dτ over [0, D] is vD/2: a crossing of L takes D = 2L/v.
    const duration = 2 * TRACK_LENGTH / speed;
    const runEnd = runStart + duration + rest;
    const id = peakSpeed.length;
    peakSpeed.push(speed);
    pause.push(rest);
    for (; bin < bins && (bin + 0.5) * BIN_SECONDS < runEnd; bin++) {
      const tau = (bin + 0.5) * BIN_SECONDS - runStart;
      // Exactly at the end during the pause (sin 2π is not 0 in floating point).
      const covered = tau >= duration
        ? TRACK_LENGTH
        : TRACK_LENGTH * (tau / duration - Math.sin(2 * Math.PI * tau / duration) / (2 * Math.PI));
      labels[3 * bin] = right ? covered : TRACK_LENGTH - covered;
      labels[3 * bin + 1] = right ? 1 : 0;
      labels[3 * bin + 2] = right ? 0 : 1;
      runs[bin] = id;
    }
    runStart = runEnd;
    right = !right;
  }
  const rates = new Float64Array(bins * neurons);
  const spikes = new Float64Array(bins * neurons);
  for (let t = 0; t < bins; t++) {
    const f = labels[3 * t + 1] === 1 ? fields.right : fields.left;
    for (let i = 0; i < neurons; i++) {
      const rate = fieldRate(f, i, labels[3 * t]);
      rates[t * neurons + i] = rate;
      spikes[t * neurons + i] = poissonVariate(rng, rate * BIN_SECONDS);
    }
  }
  return {
    spikes: { data: spikes, rows: bins, cols: neurons },
    labels: { data: labels, rows: bins, cols: 3 },
    runs,
    neurons,
    rates: { data: rates, rows: bins, cols: neurons },
    fields,
    peakSpeed: Float64Array.from(peakSpeed),
    pause: Float64Array.from(pause),
  };
}

/** Row indices of a split by runs. */
export interface RunSplit {
  /** Training rows. */
  train: Int32Array;
  /** Validation rows. */
  valid: Int32Array;
  /** Test rows. */
  test: Int32Array;
}

/**
 * Splits a rat's bins by whole runs, in time order: the first `train`
 * fraction of runs, then `valid`, then the rest (default 80/10/10), so no
 * run is cut between sets.
 */
export function splitByRuns(runs: Int32Array, fractions: { train?: number; valid?: number } = {}): RunSplit {
  const train = fractions.train ?? 0.8;
  const valid = fractions.valid ?? 0.1;
  if (!(train > 0 && valid >= 0 && train + valid < 1)) {
    throw new UsageError(`split fractions need train > 0, valid ≥ 0 and train + valid < 1, got ${train}, ${valid}`);
  }
  const count = runs.length ? runs[runs.length - 1] + 1 : 0;
  const trainRuns = Math.round(train * count);
  const validRuns = Math.round((train + valid) * count);
  const rows = (from: number, to: number) => {
    const out: number[] = [];
    runs.forEach((id, t) => {
      if (id >= from && id < to) out.push(t);
    });
    return Int32Array.from(out);
  };
  return { train: rows(0, trainRuns), valid: rows(trainRuns, validRuns), test: rows(validRuns, count) };
}
