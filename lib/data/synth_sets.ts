/**
 * A Synth data set as the training phases use it: the 80/10/10 split of
 * Zietlow2022 Ch. 3 with the training rows gathered, and
 * the test observations and factors every number is computed on.
 *
 * @module
 */
import { gatherRows, type Matrix } from "../core/matrix.ts";
import { Rng } from "../core/rng.ts";
import { splitIndices, type SynthData } from "./synth.ts";

/** Held-out observations and their factors. */
export interface TestSet {
  /** Observations, row-major `[rows, input]`. */
  x: Float32Array;
  /** The two factors of each row `[rows, 2]`. */
  w: Matrix;
  /** Number of test rows. */
  rows: number;
}

/** Training rows, test set and the factors' kinds (for the DS). */
export interface PreparedData {
  /** Training observations, row-major `[rows, input]` (80% of the data). */
  train: Float32Array;
  /** Observation dimension. */
  input: number;
  /** The 10% test split. */
  test: TestSet;
  /** Each factor as the DS treats it (lib/metrics/disentanglement_score.ts FactorKind). */
  kinds: ("regression" | "classification")[];
  /** The data set the split was made from. */
  synth?: SynthData;
}

/** Splits `d` 80/10/10 with a split seeded by `seed` and the data's name; the 10% evaluation split is unused. */
export function prepareSynth(d: SynthData, seed: number): PreparedData {
  const split = splitIndices(d.n, Rng.derive(seed, "split", d.name));
  const test = split.test;
  return {
    train: gatherRows(d.x, d.dim, split.train),
    input: d.dim,
    test: {
      x: gatherRows(d.x, d.dim, test),
      w: { data: Float64Array.from(gatherRows(d.w, 2, test)), rows: test.length, cols: 2 },
      rows: test.length,
    },
    kinds: ["regression", "regression"],
    synth: d,
  };
}
