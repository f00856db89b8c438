/**
 * The CEBRA encoders (`cebra/models/model.py`, `layers.py` of the CEBRA
 * package): `offset1-model(-mse)`, a per-sample MLP, and
 * `offset10-model(-mse)`, a 1-D convolutional network with a receptive field
 * of 10 samples. Weights and biases start from U(±1/√fan_in), PyTorch's
 * default for `nn.Linear` and `nn.Conv1d`; GELU is the exact (erf) form as
 * `nn.GELU()`; non-"-mse" outputs are divided by their L2 norm.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";

/** Model names of the CEBRA package this module implements. */
export type CebraArchitecture = "offset1-model" | "offset1-model-mse" | "offset10-model" | "offset10-model-mse";

/** Every {@linkcode CebraArchitecture}. */
export const CEBRA_ARCHITECTURES: readonly CebraArchitecture[] = [
  "offset1-model",
  "offset1-model-mse",
  "offset10-model",
  "offset10-model-mse",
];

/** Sizes of a CEBRA encoder. */
export interface CebraModelOptions {
  /** Input features per time step (neurons). */
  inputs: number;
  /** Hidden units (`num_units`); the offset1-model-mse ignores it, as the package does. */
  hidden: number;
  /** Embedding dimension. */
  output: number;
}

/** A CEBRA encoder with its trainable state. */
export interface CebraModel {
  /** Its architecture. */
  readonly architecture: CebraArchitecture;
  /** Input width; changes when {@linkcode CebraModel.reinitFirstLayer} adapts to another session. */
  readonly inputs: number;
  /** Embedding dimension. */
  readonly output: number;
  /** Samples to the left and right of a time step the model sees: offset1 {0, 1}, offset10 {5, 5}. */
  readonly offset: { left: number; right: number };
  /** Whether outputs are L2-normalised (the non-"-mse" models). */
  readonly normalize: boolean;
  /** All trainable variables, first layer first. */
  readonly variables: tf.Variable[];
  /** The input layer's kernel and bias (what adaptation retrains). */
  readonly firstLayer: tf.Variable[];
  /** Windows `[batch, left + right, inputs]` → one embedding each, `[batch, output]`. */
  apply(windows: tf.Tensor3D): tf.Tensor2D;
  /**
   * A sequence `[T, inputs]` → `[T, output]` when `pad` (the default; replicate
   * padding of `left` rows before and `right − 1` after, as the package's
   * `pad_before_transform`), else `[T − left − right + 1, output]`.
   * `batchSize` bounds the output rows computed at once.
   */
  embed(sequence: tf.Tensor2D, options?: { pad?: boolean; batchSize?: number }): tf.Tensor2D;
  /** A fresh input layer for `inputs` features (adaptation to a session of another width). */
  reinitFirstLayer(rng: Rng, inputs: number): void;
  /** The variables by key (`layer{i}/kernel`, `layer{i}/bias`; dense kernels `[in, out]`, conv `[k, in, out]`). */
  state(): Record<string, tf.Tensor>;
  /** Sets every variable from `state` (shapes must match; a first layer of another width is rebuilt). */
  load(state: Record<string, { data: Float32Array; shape: number[] }>): void;
  /** Frees its variables. */
  dispose(): void;
}

/**
 * x·Φ(x) with its derivative Φ(x) + x·φ(x) written out: autodiff through erf
 * and the products runs about twice as many elementwise kernels.
 */
const geluWithGradient = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, save] = args as [tf.Tensor, tf.GradSaveFunc];
  // ½ scales exactly, so x·(½(1 + erf)) has the bits of ½x·(1 + erf).
  const cdf = tf.mul(tf.add(1, tf.erf(tf.mul(x, Math.SQRT1_2))), 0.5);
  save([x, cdf]);
  return {
    value: tf.mul(x, cdf),
    gradFunc: (dy: tf.Tensor | tf.Tensor[], [input, phi]: tf.Tensor[]) => {
      const density = tf.mul(tf.exp(tf.mul(tf.square(input), -0.5)), 1 / Math.sqrt(2 * Math.PI));
      return tf.mul(dy as tf.Tensor, tf.add(phi, tf.mul(input, density)));
    },
  };
});

/** GELU in its exact form, x·Φ(x) = ½x(1 + erf(x/√2)), as PyTorch's default `nn.GELU()`. */
export function gelu(x: tf.Tensor): tf.Tensor {
  return tf.tidy(() => geluWithGradient(x) as tf.Tensor);
}

interface LayerSpec {
  kind: "dense" | "conv";
  inputs: number;
  outputs: number;
  kernel: number; // conv width; 1 for dense
}

let variableCounter = 0;

function uniformInit(rng: Rng, count: number, bound: number): Float32Array {
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = (2 * rng.uniform() - 1) * bound;
  return out;
}

function layerVariables(rng: Rng, spec: LayerSpec, name: string): [tf.Variable, tf.Variable] {
  // torch's default init: kaiming_uniform(a = √5) on the weight is U(±1/√fan_in), and the bias is U(±1/√fan_in).
  const fanIn = spec.inputs * spec.kernel;
  const bound = 1 / Math.sqrt(fanIn);
  const shape = spec.kind === "dense" ? [spec.inputs, spec.outputs] : [spec.kernel, spec.inputs, spec.outputs];
  const w = uniformInit(rng, spec.inputs * spec.outputs * spec.kernel, bound);
  const b = uniformInit(rng, spec.outputs, bound);
  const id = variableCounter++;
  return tf.tidy(() => [
    tf.variable(tf.tensor(w, shape), true, `${name}/kernel#${id}`),
    tf.variable(tf.tensor1d(b), true, `${name}/bias#${id}`),
  ]);
}

function checkSize(value: number, what: string, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new UsageError(`${what} must be an integer ≥ ${min}, got ${value}`);
  }
}

function layerSpecs(architecture: CebraArchitecture, o: CebraModelOptions): LayerSpec[] {
  const { inputs, hidden: h, output: e } = o;
  const dense = (i: number, out: number): LayerSpec => ({ kind: "dense", inputs: i, outputs: out, kernel: 1 });
  const conv = (i: number, out: number, k: number): LayerSpec => ({ kind: "conv", inputs: i, outputs: out, kernel: k });
  switch (architecture) {
    case "offset1-model":
      checkSize(h, "hidden units of offset1-model", 2);
      return [dense(inputs, h), dense(h, h), dense(h, Math.floor(h / 2)), dense(Math.floor(h / 2), e)];
    case "offset1-model-mse":
      // The package sizes this model from the output alone (num_units is unused).
      return [dense(inputs, 30 * e), dense(30 * e, 30 * e), dense(30 * e, 10 * e), dense(10 * e, e)];
    case "offset10-model":
    case "offset10-model-mse":
      checkSize(h, "hidden units of offset10-model", 1);
      return [conv(inputs, h, 2), conv(h, h, 3), conv(h, h, 3), conv(h, h, 3), conv(h, e, 3)];
  }
}

class CebraNet implements CebraModel {
  readonly architecture: CebraArchitecture;
  readonly output: number;
  readonly offset: { left: number; right: number };
  readonly normalize: boolean;
  readonly #hidden: number;
  #inputs: number;
  #layers: [tf.Variable, tf.Variable][];
  readonly #conv: boolean;

  constructor(architecture: CebraArchitecture, o: CebraModelOptions, rng: Rng) {
    this.architecture = architecture;
    this.output = o.output;
    this.#inputs = o.inputs;
    this.#hidden = o.hidden;
    this.#conv = architecture.startsWith("offset10");
    this.offset = this.#conv ? { left: 5, right: 5 } : { left: 0, right: 1 };
    this.normalize = !architecture.endsWith("-mse");
    this.#layers = layerSpecs(architecture, o).map((spec, i) => layerVariables(rng, spec, `cebra/layer${i}`));
  }

  get inputs(): number {
    return this.#inputs;
  }

  get variables(): tf.Variable[] {
    return this.#layers.flat();
  }

  get firstLayer(): tf.Variable[] {
    return [...this.#layers[0]];
  }

  /** The network on `[batch, time, inputs]` (conv) or `[rows, inputs]` (dense), before normalisation. */
  #forward(x: tf.Tensor): tf.Tensor2D {
    const l = this.#layers;
    if (!this.#conv) {
      let h = x as tf.Tensor2D;
      for (let i = 0; i < l.length; i++) {
        h = tf.add(tf.matMul(h, l[i][0] as tf.Tensor2D), l[i][1]);
        if (i < l.length - 1) h = gelu(h) as tf.Tensor2D;
      }
      return h;
    }
    const conv = (t: tf.Tensor3D, i: number) => tf.add(tf.conv1d(t, l[i][0] as tf.Tensor3D, 1, "valid"), l[i][1]);
    let h = gelu(conv(x as tf.Tensor3D, 0)) as tf.Tensor3D;
    for (let i = 1; i <= 3; i++) {
      // _Skip: the block's input cropped by one step on each side plus GELU(conv(input)).
      const width = h.shape[1];
      h = tf.add(tf.slice(h, [0, 1, 0], [-1, width - 2, -1]), gelu(conv(h, i))) as tf.Tensor3D;
    }
    const out = conv(h, 4) as tf.Tensor3D; // [batch, time − 9, output]
    return tf.reshape(out, [-1, this.output]) as tf.Tensor2D;
  }

  #finish(h: tf.Tensor2D): tf.Tensor2D {
    return this.normalize ? tf.div(h, tf.norm(h, "euclidean", 1, true)) : h;
  }

  apply(windows: tf.Tensor3D): tf.Tensor2D {
    const receptive = this.offset.left + this.offset.right;
    const [batch, width, inputs] = windows.shape;
    if (width !== receptive || inputs !== this.#inputs) {
      throw new UsageError(
        `${this.architecture} takes windows [batch, ${receptive}, ${this.#inputs}], got [${windows.shape}]`,
      );
    }
    return tf.tidy(() => {
      const x = this.#conv ? windows : tf.reshape(windows, [batch, inputs]);
      return this.#finish(this.#forward(x));
    });
  }

  embed(sequence: tf.Tensor2D, options: { pad?: boolean; batchSize?: number } = {}): tf.Tensor2D {
    const { pad = true, batchSize } = options;
    const [rows, inputs] = sequence.shape;
    const { left, right } = this.offset;
    const receptive = left + right;
    if (inputs !== this.#inputs) {
      throw new UsageError(`${this.architecture} takes ${this.#inputs} input features, got ${inputs}`);
    }
    if (rows < receptive) {
      throw new UsageError(`${this.architecture} needs at least ${receptive} rows (its receptive field), got ${rows}`);
    }
    if (batchSize !== undefined && (!Number.isInteger(batchSize) || batchSize < 1)) {
      throw new UsageError(`batchSize must be a positive integer, got ${batchSize}`);
    }
    return tf.tidy(() => {
      let x: tf.Tensor2D = sequence;
      if (pad && receptive > 1) {
        // Replicate padding, left rows before and right − 1 after, so output t sees rows t − left … t + right − 1.
        const first = tf.tile(tf.slice(sequence, [0, 0], [1, -1]), [left, 1]);
        const last = tf.tile(tf.slice(sequence, [rows - 1, 0], [1, -1]), [right - 1, 1]);
        x = tf.concat([first, sequence, last], 0);
      }
      const outRows = x.shape[0] - receptive + 1;
      const chunk = batchSize ?? outRows;
      const parts: tf.Tensor2D[] = [];
      for (let start = 0; start < outRows; start += chunk) {
        const n = Math.min(chunk, outRows - start);
        const slice = tf.slice(x, [start, 0], [n + receptive - 1, -1]);
        const input = this.#conv ? tf.expandDims(slice, 0) : slice;
        parts.push(this.#finish(this.#forward(input)));
      }
      return parts.length === 1 ? parts[0] : tf.concat(parts, 0);
    });
  }

  reinitFirstLayer(rng: Rng, inputs: number): void {
    checkSize(inputs, "inputs", 1);
    const spec = layerSpecs(this.architecture, { inputs, hidden: this.#hidden, output: this.output })[0];
    const fresh = layerVariables(rng, spec, "cebra/layer0");
    for (const v of this.#layers[0]) v.dispose();
    this.#layers[0] = fresh;
    this.#inputs = inputs;
  }

  state(): Record<string, tf.Tensor> {
    const out: Record<string, tf.Tensor> = {};
    this.#layers.forEach(([w, b], i) => {
      out[`layer${i}/kernel`] = w;
      out[`layer${i}/bias`] = b;
    });
    return out;
  }

  load(state: Record<string, { data: Float32Array; shape: number[] }>): void {
    const first = state["layer0/kernel"];
    if (!first) throw new UsageError(`state lacks "layer0/kernel"`);
    // The input width is the kernel's second-to-last axis in both layouts; a first layer of another width is rebuilt.
    const inputs = first.shape[first.shape.length - 2];
    const expected = layerSpecs(this.architecture, { inputs, hidden: this.#hidden, output: this.output });
    expected.forEach((spec, i) => {
      const shapes = {
        [`layer${i}/kernel`]: spec.kind === "dense"
          ? [spec.inputs, spec.outputs]
          : [spec.kernel, spec.inputs, spec.outputs],
        [`layer${i}/bias`]: [spec.outputs],
      };
      for (const [key, shape] of Object.entries(shapes)) {
        const entry = state[key];
        if (!entry) throw new UsageError(`state lacks "${key}"`);
        if (entry.shape.join() !== shape.join() || entry.data.length !== sizeOf(shape)) {
          throw new UsageError(`state "${key}" has shape [${entry.shape}], expected [${shape}]`);
        }
      }
    });
    if (inputs !== this.#inputs) {
      for (const v of this.#layers[0]) v.dispose();
      const id = variableCounter++;
      this.#layers[0] = tf.tidy(() => [
        tf.variable(tf.zeros(first.shape), true, `cebra/layer0/kernel#${id}`),
        tf.variable(tf.zeros(state["layer0/bias"].shape), true, `cebra/layer0/bias#${id}`),
      ]);
      this.#inputs = inputs;
    }
    this.#layers.forEach(([w, b], i) => {
      tf.tidy(() => {
        w.assign(tf.tensor(state[`layer${i}/kernel`].data, w.shape));
        b.assign(tf.tensor(state[`layer${i}/bias`].data, b.shape));
      });
    });
  }

  dispose(): void {
    for (const v of this.variables) v.dispose();
  }
}

function sizeOf(shape: number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/**
 * A CEBRA encoder named as in the package, its weights drawn from `rng`.
 * Throws UsageError for an unknown name or sizes the package refuses.
 */
export function cebraModel(architecture: CebraArchitecture, options: CebraModelOptions, rng: Rng): CebraModel {
  if (!CEBRA_ARCHITECTURES.includes(architecture)) {
    throw new UsageError(`unknown model architecture "${architecture}"; allowed: ${CEBRA_ARCHITECTURES.join(", ")}`);
  }
  checkSize(options.inputs, "inputs", 1);
  checkSize(options.output, "output dimension", 1);
  checkSize(options.hidden, "hidden units", 1);
  return new CebraNet(architecture, options, rng);
}
