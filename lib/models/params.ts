/**
 * Named trainable parameters of a model, initialised from the run's seeded
 * generator (so weights do not depend on TF.js's own random state) and
 * checkpointed by key.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import type { NpyArray } from "../core/npy.ts";
import type { Rng } from "../core/rng.ts";

let variableCounter = 0;

/** An ordered set of trainable variables keyed by a stable name ("block0/w1"). */
export class Params {
  #vars = new Map<string, tf.Variable>();

  /** Adds a variable holding `values` with `shape`. */
  add(key: string, values: Float32Array, shape: number[]): tf.Variable {
    if (this.#vars.has(key)) throw new Error(`parameter "${key}" exists`);
    // TF.js variable names are process-global; the counter keeps them unique across models.
    const variable = tf.tidy(() => tf.variable(tf.tensor(values, shape), true, `${key}#${variableCounter++}`));
    this.#vars.set(key, variable);
    return variable;
  }

  /** Adds a `[rows, cols]` matrix drawn from N(0, gain²/rows) (He init for gain √2). */
  addNormal(rng: Rng, key: string, rows: number, cols: number, gain: number): tf.Variable {
    return this.add(key, rng.normalArray(rows * cols, gain / Math.sqrt(rows)), [rows, cols]);
  }

  /**
   * Adds a tensor of any shape drawn from Glorot-uniform, U(±√(6 / (fanIn + fanOut))),
   * TensorFlow's default kernel initializer.
   */
  addGlorotUniform(rng: Rng, key: string, shape: number[], fanIn: number, fanOut: number): tf.Variable {
    const limit = Math.sqrt(6 / (fanIn + fanOut));
    const size = shape.reduce((a, b) => a * b, 1);
    // A plain loop: Float32Array.from with a mapping function is about 4× slower on large layers.
    const values = new Float32Array(size);
    for (let i = 0; i < size; i++) values[i] = (2 * rng.uniform() - 1) * limit;
    return this.add(key, values, shape);
  }

  /** Adds a tensor of zeros. */
  addZeros(key: string, shape: number[]): tf.Variable {
    return this.add(key, new Float32Array(shape.reduce((a, b) => a * b, 1)), shape);
  }

  /** The variable stored under `key`. */
  get(key: string): tf.Variable {
    const variable = this.#vars.get(key);
    if (!variable) throw new Error(`no parameter "${key}"`);
    return variable;
  }

  /** All variables, in insertion order (the order optimizers see them). */
  list(): tf.Variable[] {
    return [...this.#vars.values()];
  }

  /** Number of scalar parameters. */
  count(): number {
    return this.list().reduce((n, v) => n + v.size, 0);
  }

  /** Variables keyed by name, prefixed, for checkpoints. */
  entries(prefix: string): Record<string, tf.Tensor> {
    return Object.fromEntries([...this.#vars].map(([key, v]) => [`${prefix}${key}`, v]));
  }

  /** Restores values saved by {@linkcode entries}; every key must be present. */
  load(arrays: Record<string, NpyArray>, prefix: string): void {
    for (const [key, variable] of this.#vars) {
      const saved = arrays[`${prefix}${key}`];
      if (!saved) throw new Error(`checkpoint lacks "${prefix}${key}"`);
      tf.tidy(() => variable.assign(tf.tensor(saved.data as Float32Array, saved.shape)));
    }
  }

  /** Frees every variable. */
  dispose(): void {
    for (const variable of this.#vars.values()) variable.dispose();
    this.#vars.clear();
  }
}
