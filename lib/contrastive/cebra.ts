/**
 * The CEBRA estimator (`cebra/integrations/sklearn/cebra.py` of the CEBRA
 * package): an encoder trained with InfoNCE on positives picked by time,
 * continuous behaviour (time_delta or delta), discrete classes, both (mixed),
 * several sessions at once, or behaviour and time together (hybrid); then
 * `transform` embeds new data. Defaults, the mode inferred from the labels and
 * the combinations refused follow the package's `CEBRA` and `_init_loader`.
 *
 * ```ts
 * const cebra = new Cebra({ modelArchitecture: "offset10-model", batchSize: 512, outputDimension: 3 });
 * await cebra.fit(neural, { continuous: position });
 * const embedding = await cebra.transform(neural);
 * ```
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { UsageError } from "../core/errors.ts";
import type { Matrix } from "../core/matrix.ts";
import { formatNpy, readNpy } from "../core/npy.ts";
import { readScalars } from "../core/readback.ts";
import { Rng } from "../core/rng.ts";
import { stopPoint } from "../core/run_guard.ts";
import { CEBRA_ARCHITECTURES, type CebraArchitecture, type CebraModel, cebraModel } from "../models/cebra_models.ts";
import { type Distance, DISTANCES, infoNce } from "./infonce.ts";
import { cebraStep, type ContrastiveLoss, HYBRID_BEHAVIOR_FEATURES, type StepIndices } from "./cebra_step.ts";
import {
  deltaSampler,
  discreteMultiSessionSampler,
  discreteSampler,
  fullBatchSampler,
  hybridSampler,
  type IndexBatch,
  mixedSampler,
  type MultiSessionBatch,
  multiSessionSampler,
  timeDeltaSampler,
  timeSampler,
} from "./samplers.ts";

/** Conditionals a user can ask for (`conditional` of the package). */
export type CebraConditional = "time" | "time_delta" | "delta";

/** Options of {@linkcode Cebra}; every one defaults to the package's value. */
export interface CebraOptions {
  /** Encoder, default "offset1-model". */
  modelArchitecture?: CebraArchitecture;
  /** Similarity of the InfoNCE loss, default "cosine". */
  distance?: Distance;
  /** Positive sampling for continuous labels, default null (time_delta; time without labels). */
  conditional?: CebraConditional | null;
  /** InfoNCE temperature (the start value when learnable), default 1. */
  temperature?: number;
  /** "constant" (default) or "auto" (learned, bounded below by `minTemperature`). */
  temperatureMode?: "constant" | "auto";
  /** Lowest learnable temperature, default 0.1. */
  minTemperature?: number;
  /** Time offset Δ of the time and time_delta conditionals, default 1. */
  timeOffsets?: number;
  /** Standard deviation of the delta conditional, default null (required for "delta"). */
  delta?: number | null;
  /** Adam steps of `fit`, default 10,000. */
  maxIterations?: number;
  /** Adam steps of `fit(..., { adapt: true })`, default 500. */
  maxAdaptIterations?: number;
  /** References per step; null (default) trains on the full dataset each step. */
  batchSize?: number | null;
  /** Adam learning rate, default 3e-4 (β 0.9, 0.999, ε 1e-8, no weight decay). */
  learningRate?: number;
  /** Embedding dimension, default 8. */
  outputDimension?: number;
  /** Hidden units of the encoder, default 32. */
  numHiddenUnits?: number;
  /** Replicate-pad the input in `transform` so the embedding has one row per input row, default true. */
  padBeforeTransform?: boolean;
  /** Train behaviour (features 0:3) and time (all features) objectives together, default false. */
  hybrid?: boolean;
  /** Seed of weights and sampling, default 0. */
  seed?: number;
  /**
   * Called with each step's index and loss, in step order, when the losses are read back: every
   * `lossReadEvery` steps and after the last.
   */
  onStep?: (step: number, loss: number) => void;
  /**
   * Called right after each step with its index, on the weights that step left, before its loss is read
   * (work queued here, e.g. a `transform`, sees exactly those weights).
   */
  afterStep?: (step: number) => void;
  /**
   * Steps whose losses are read back together (one readback each), default 100. The losses stay on the
   * device in between: on WebGPU a read waits for the queue to drain, so reading every step stalls it.
   */
  lossReadEvery?: number;
}

/** Options that shape a fit's hooks and reads, not the model (not saved with it). */
const FIT_HOOKS = ["onStep", "afterStep", "lossReadEvery"] as const;

/** Losses read back together by default (see {@linkcode CebraOptions.lossReadEvery}). */
const DEFAULT_LOSS_READ_EVERY = 100;

/** Integer label arrays accepted as discrete labels (any integer width). */
export type DiscreteLabels =
  | Int32Array
  | Int16Array
  | Int8Array
  | Uint32Array
  | Uint16Array
  | Uint8Array
  | Uint8ClampedArray
  | number[];

/** Labels of `fit`: continuous `[T, d]`, discrete `[T]`, or a list of either per session. */
export interface CebraLabels {
  /** Continuous labels `[T, d]`, or one matrix per session. */
  continuous?: Matrix | Matrix[];
  /** Discrete labels `[T]`, or one array per session. */
  discrete?: DiscreteLabels | DiscreteLabels[];
}

type Resolved = Required<Omit<CebraOptions, typeof FIT_HOOKS[number]>>;

const DEFAULTS: Resolved = {
  modelArchitecture: "offset1-model",
  distance: "cosine",
  conditional: null,
  temperature: 1,
  temperatureMode: "constant",
  minTemperature: 0.1,
  timeOffsets: 1,
  delta: null,
  maxIterations: 10_000,
  maxAdaptIterations: 500,
  batchSize: null,
  learningRate: 3e-4,
  outputDimension: 8,
  numHiddenUnits: 32,
  padBeforeTransform: true,
  hybrid: false,
  seed: 0,
};

const FORMAT = "latentlab-cebra";

function isPositiveInteger(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1;
}

function isPositiveNumber(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v > 0;
}

function resolveOptions(o: CebraOptions): Resolved {
  const allowed = new Set<string>([...Object.keys(DEFAULTS), ...FIT_HOOKS]);
  for (const key of Object.keys(o)) {
    if (!allowed.has(key)) throw new UsageError(`unknown Cebra option "${key}"; allowed: ${[...allowed].join(", ")}`);
  }
  const r: Resolved = { ...DEFAULTS };
  for (const [key, value] of Object.entries(o)) {
    const hook = (FIT_HOOKS as readonly string[]).includes(key);
    if (!hook && value !== undefined) (r as unknown as Record<string, unknown>)[key] = value;
  }
  const fail = (key: string, allowedText: string, value: unknown) => {
    throw new UsageError(`Cebra option ${key} must be ${allowedText}, got ${JSON.stringify(value)}`);
  };
  if (!CEBRA_ARCHITECTURES.includes(r.modelArchitecture)) {
    fail("modelArchitecture", `one of ${CEBRA_ARCHITECTURES.join(", ")}`, r.modelArchitecture);
  }
  if (!DISTANCES.includes(r.distance)) fail("distance", `one of ${DISTANCES.join(", ")}`, r.distance);
  if (r.conditional !== null && !["time", "time_delta", "delta"].includes(r.conditional)) {
    fail("conditional", "null, time, time_delta or delta", r.conditional);
  }
  if (!isPositiveNumber(r.temperature)) fail("temperature", "a positive number", r.temperature);
  if (r.temperatureMode !== "constant" && r.temperatureMode !== "auto") {
    fail("temperatureMode", '"constant" or "auto"', r.temperatureMode);
  }
  if (!isPositiveNumber(r.minTemperature)) fail("minTemperature", "a positive number", r.minTemperature);
  if (!isPositiveInteger(r.timeOffsets)) fail("timeOffsets", "a positive integer", r.timeOffsets);
  if (r.delta !== null && !isPositiveNumber(r.delta)) fail("delta", "null or a positive number", r.delta);
  if (!isPositiveInteger(r.maxIterations)) fail("maxIterations", "a positive integer", r.maxIterations);
  if (!isPositiveInteger(r.maxAdaptIterations)) fail("maxAdaptIterations", "a positive integer", r.maxAdaptIterations);
  if (r.batchSize !== null && !isPositiveInteger(r.batchSize)) {
    fail("batchSize", "null or a positive integer", r.batchSize);
  }
  if (!isPositiveNumber(r.learningRate)) fail("learningRate", "a positive number", r.learningRate);
  if (!isPositiveInteger(r.outputDimension)) fail("outputDimension", "a positive integer", r.outputDimension);
  if (!isPositiveInteger(r.numHiddenUnits)) fail("numHiddenUnits", "a positive integer", r.numHiddenUnits);
  if (r.modelArchitecture === "offset1-model" && r.numHiddenUnits < 2) {
    fail("numHiddenUnits", "at least 2 for offset1-model", r.numHiddenUnits);
  }
  if (typeof r.padBeforeTransform !== "boolean") fail("padBeforeTransform", "true or false", r.padBeforeTransform);
  if (typeof r.hybrid !== "boolean") fail("hybrid", "true or false", r.hybrid);
  if (!Number.isInteger(r.seed)) fail("seed", "an integer", r.seed);
  if (o.lossReadEvery !== undefined && !isPositiveInteger(o.lossReadEvery)) {
    fail("lossReadEvery", "a positive integer", o.lossReadEvery);
  }
  return r;
}

/** The model's window for an architecture, without building it. */
function windowOf(architecture: CebraArchitecture): { left: number; right: number } {
  return architecture.startsWith("offset10") ? { left: 5, right: 5 } : { left: 0, right: 1 };
}

function isMatrix(v: unknown): v is Matrix {
  return typeof v === "object" && v !== null && "data" in v && "rows" in v && "cols" in v;
}

function checkData(x: unknown, what: string, minRows: number): Float32Array {
  if (!isMatrix(x)) throw new UsageError(`${what} must be a matrix { data, rows, cols }`);
  if (!Number.isInteger(x.rows) || !Number.isInteger(x.cols) || x.cols < 1 || x.data.length !== x.rows * x.cols) {
    throw new UsageError(`${what}: data of length ${x.data.length} does not fit shape [${x.rows}, ${x.cols}]`);
  }
  if (x.rows < minRows) {
    throw new UsageError(`${what} has ${x.rows} rows, fewer than the model's receptive field of ${minRows}`);
  }
  const out = Float32Array.from(x.data);
  for (let i = 0; i < out.length; i++) {
    // Checked after the float32 conversion, which turns values beyond ±3.4e38 into ±Infinity.
    if (!Number.isFinite(out[i])) {
      throw new UsageError(`${what} has a non-finite value (${x.data[i]}) at row ${Math.floor(i / x.cols)}`);
    }
  }
  return out;
}

function checkContinuous(y: unknown, rows: number, what: string): Matrix {
  if (!isMatrix(y)) throw new UsageError(`${what} must be a matrix { data, rows, cols }`);
  if (!Number.isInteger(y.cols) || y.cols < 1 || y.data.length !== y.rows * y.cols) {
    throw new UsageError(`${what}: data of length ${y.data.length} does not fit shape [${y.rows}, ${y.cols}]`);
  }
  if (y.rows !== rows) throw new UsageError(`${what} have ${y.rows} rows but the data ${rows}`);
  for (let i = 0; i < y.data.length; i++) {
    if (!Number.isFinite(y.data[i])) throw new UsageError(`${what} have a non-finite value at index ${i}`);
  }
  return y;
}

const INTEGER_ARRAYS = [Int32Array, Int16Array, Int8Array, Uint32Array, Uint16Array, Uint8Array, Uint8ClampedArray];

function checkDiscreteLabels(y: unknown, rows: number, what: string): Int32Array {
  if (isMatrix(y)) {
    throw new UsageError(`${what} must be one-dimensional (one class per row), got a [${y.rows}, ${y.cols}] matrix`);
  }
  const typed = INTEGER_ARRAYS.some((C) => y instanceof C);
  if (!typed && !Array.isArray(y)) {
    const name = (y as object)?.constructor?.name ?? typeof y;
    throw new UsageError(`${what} must be an integer array (Int32Array, Uint8Array, … or number[]), got ${name}`);
  }
  const values = y as ArrayLike<unknown>;
  if (values.length !== rows) throw new UsageError(`${what} have ${values.length} rows but the data ${rows}`);
  const out = new Int32Array(rows);
  for (let i = 0; i < rows; i++) {
    const v = values[i];
    if (typeof v !== "number" || !Number.isInteger(v)) {
      throw new UsageError(`${what} must be integers (one-dimensional), got ${JSON.stringify(v)} at row ${i}`);
    }
    if (v < 0 || v > 2 ** 31 - 1) throw new UsageError(`${what} must be non-negative integers, got ${v} at row ${i}`);
    out[i] = v;
  }
  return out;
}

function isSessionList(v: unknown): v is unknown[] {
  // A list of sessions is an array whose items are matrices or arrays, not numbers.
  return Array.isArray(v) && v.length > 0 && typeof v[0] === "object" && v[0] !== null;
}

interface Plan {
  data: { values: Float32Array; rows: number; cols: number }[];
  multi: boolean;
  solver: "single-session" | "single-session-full" | "single-session-hybrid" | "multi-session";
  draw: (rng: Rng) => StepIndices;
  iterations: number;
}

/** CEBRA: consistent embeddings of high-dimensional recordings using auxiliary variables. */
export class Cebra {
  /** The resolved options (defaults filled in). */
  readonly options: Readonly<Required<Omit<CebraOptions, "onStep" | "afterStep" | "lossReadEvery">>>;
  /** Loss of every step of the last `fit` (for hybrid: behaviour + time). */
  lossHistory: number[] = [];
  readonly #onStep?: (step: number, loss: number) => void;
  readonly #afterStep?: (step: number) => void;
  readonly #lossReadEvery: number;
  #models: CebraModel[] | null = null;
  #multi = false;
  #solver: Plan["solver"] | null = null;
  #alpha: tf.Variable | null = null;
  #learnedTemperature: number | null = null;

  /** An unfitted estimator; unset options take their defaults. */
  constructor(options: CebraOptions = {}) {
    this.options = resolveOptions(options);
    this.#onStep = options.onStep;
    this.#afterStep = options.afterStep;
    this.#lossReadEvery = options.lossReadEvery ?? DEFAULT_LOSS_READ_EVERY;
  }

  /** Whether `fit` has run. */
  get fitted(): boolean {
    return this.#models !== null;
  }

  /** Sessions of a multi-session fit, null for a single session. */
  get numSessions(): number | null {
    return this.#models && this.#multi ? this.#models.length : null;
  }

  /** Input features per session. */
  get inputDimensions(): number[] {
    return this.#models?.map((m) => m.inputs) ?? [];
  }

  /** The package's solver name of the last fit ("single-session", "single-session-full", ...). */
  get solver(): string | null {
    return this.#solver;
  }

  /** The temperature in use: the constant, or 1/min(e^α, 1/minTemperature) when learned. */
  get temperature(): number {
    return this.#learnedTemperature ?? this.options.temperature;
  }

  /** Reads the learned α back (asynchronously, as GPU tensors need) into {@linkcode Cebra.temperature}. */
  async #readTemperature(): Promise<void> {
    if (!this.#alpha) {
      this.#learnedTemperature = null;
      return;
    }
    const alpha = (await this.#alpha.data())[0];
    this.#learnedTemperature = 1 / Math.min(Math.exp(alpha), 1 / this.options.minTemperature);
  }

  /**
   * Trains on `x` `[T, features]` (or a list of sessions) with optional labels.
   * Without labels: time-contrastive; continuous `[T, d]`: time_delta (or the
   * `conditional` asked for); discrete `[T]`: same class; both: mixed; lists:
   * multi-session, one whole encoder per session trained jointly on the
   * stacked loss (as the package's multi-session solver over its list of
   * models; nothing is shared but the embedding space). `adapt` (after a single-session
   * fit) retrains a fresh input layer for `maxAdaptIterations`, the rest frozen.
   * Every input check runs before any training.
   */
  async fit(x: Matrix | Matrix[], labels: CebraLabels = {}, options: { adapt?: boolean } = {}): Promise<this> {
    const adapt = options.adapt === true && this.fitted;
    if (adapt && this.#multi) {
      throw new UsageError("adapt works on single-session models only; this one was fit on several sessions");
    }
    const plan = this.#plan(x, labels, adapt);
    const o = this.options;
    let models: CebraModel[];
    if (adapt) {
      models = this.#models!;
      models[0].reinitFirstLayer(Rng.derive(o.seed, "cebra", "adapt"), plan.data[0].cols);
    } else {
      this.#disposeModels();
      models = plan.data.map((d, s) =>
        cebraModel(
          o.modelArchitecture,
          { inputs: d.cols, hidden: o.numHiddenUnits, output: o.outputDimension },
          Rng.derive(o.seed, "cebra", "model", s),
        )
      );
      this.#models = models;
      this.#multi = plan.multi;
    }
    this.#solver = plan.solver;
    this.#alpha?.dispose();
    this.#alpha = o.temperatureMode === "auto" ? learnableAlpha(Math.log(1 / o.temperature)) : null;
    const trainable = [...(adapt ? models[0].firstLayer : models.flatMap((m) => m.variables))];
    if (this.#alpha) trainable.push(this.#alpha);
    await this.#train(plan, models, trainable, adapt ? "adapt" : "fit");
    await this.#readTemperature();
    return this;
  }

  /** Validates everything and picks the sampler, as the package's `_prepare_data` and `_init_loader`. */
  #plan(x: Matrix | Matrix[], labels: CebraLabels, adapt: boolean): Plan {
    const o = this.options;
    if (typeof labels !== "object" || labels === null) {
      throw new UsageError("labels must be an object { continuous?, discrete? }");
    }
    for (const key of Object.keys(labels)) {
      if (key !== "continuous" && key !== "discrete") {
        throw new UsageError(`unknown label kind "${key}"; use continuous and/or discrete`);
      }
    }
    const w = windowOf(o.modelArchitecture);
    const receptive = w.left + w.right;
    const multi = Array.isArray(x);
    const full = o.batchSize === null;
    const hasCont = labels.continuous !== undefined;
    const hasDisc = labels.discrete !== undefined;
    const combination = `continuous ${hasCont}, discrete ${hasDisc}, hybrid ${o.hybrid}, full batch ${full}`;
    const notImplemented = () => {
      throw new UsageError(
        `this label combination is not supported (${combination}${multi ? ", multi-session" : ""}); ` +
          "supported: none, continuous, discrete or both on one session with a batch size (time, continuous also " +
          "full batch), hybrid with continuous labels only, and several sessions with continuous or discrete labels " +
          "and a batch size",
      );
    };
    if (adapt && multi) throw new UsageError("adapt takes the data of one session, got a list of sessions");

    if (multi) {
      const xs = x as unknown[];
      if (xs.length < 1) throw new UsageError("a list of sessions needs at least one session");
      const data = xs.map((m, s) => ({
        values: checkData(m, `data of session ${s}`, receptive),
        rows: (m as Matrix).rows,
        cols: (m as Matrix).cols,
      }));
      if (!hasCont && !hasDisc) {
        throw new UsageError("multi-session training needs labels (continuous or discrete) to align the sessions");
      }
      if (hasCont && hasDisc) notImplemented();
      const given = hasCont ? labels.continuous : labels.discrete;
      if (!isSessionList(given) || given.length !== xs.length) {
        throw new UsageError(
          `multi-session labels must be a list with one entry per session (${xs.length}), got ${
            isSessionList(given) ? given.length : "a single array"
          }`,
        );
      }
      if (full || o.hybrid) notImplemented();
      const n = o.batchSize!;
      let sampler: { sample(rng: Rng, n: number): MultiSessionBatch };
      if (hasCont) {
        const cont = given.map((y, s) => checkContinuous(y, data[s].rows, `continuous labels of session ${s}`));
        cont.forEach((c, s) => {
          if (c.cols !== cont[0].cols) {
            throw new UsageError(
              `label widths differ across sessions: session 0 has ${cont[0].cols}, session ${s} has ${c.cols}`,
            );
          }
          this.#checkOffset(c.rows, `session ${s}`);
        });
        sampler = multiSessionSampler(cont, { offset: o.timeOffsets, ...w });
      } else {
        const disc = given.map((y, s) => checkDiscreteLabels(y, data[s].rows, `discrete labels of session ${s}`));
        sampler = discreteMultiSessionSampler(disc, w);
      }
      return {
        data,
        multi,
        solver: "multi-session",
        draw: (rng) => ({ kind: "multi", batch: sampler.sample(rng, n) }),
        iterations: o.maxIterations,
      };
    }

    const xm = x as Matrix;
    const values = checkData(xm, "data", receptive);
    const rows = xm.rows;
    if (isSessionList(labels.continuous) || isSessionList(labels.discrete)) {
      throw new UsageError("labels are lists of sessions but the data is a single session");
    }
    const data = [{ values, rows, cols: xm.cols }];
    const cont = hasCont ? checkContinuous(labels.continuous, rows, "continuous labels") : null;
    const disc = hasDisc ? checkDiscreteLabels(labels.discrete, rows, "discrete labels") : null;
    const iterations = adapt ? o.maxAdaptIterations : o.maxIterations;
    const n = o.batchSize ?? 0;
    const single = (sampler: { sample(rng: Rng, n: number): IndexBatch }): Plan["draw"] => (rng) => ({
      kind: "single",
      batch: sampler.sample(rng, n),
    });

    if (!cont && !disc) {
      // Without labels the package falls back to time-contrastive learning, whatever `conditional` says.
      if (o.hybrid) notImplemented();
      this.#checkOffset(rows, "data");
      if (full) {
        const sampler = fullBatchSampler(rows, { ...w, offset: o.timeOffsets, conditional: "time" });
        return { data, multi, solver: "single-session-full", draw: (rng) => fullDraw(sampler, rng), iterations };
      }
      const sampler = timeSampler(rows, { offset: o.timeOffsets, ...w });
      return { data, multi, solver: "single-session", draw: single(sampler), iterations };
    }
    if (cont && !disc) {
      const conditional = o.conditional ?? "time_delta";
      if (conditional === "delta" && o.delta === null) {
        throw new UsageError('conditional "delta" needs the delta option (the standard deviation of the positives)');
      }
      if (conditional !== "delta") this.#checkOffset(rows, "data");
      if (o.hybrid) {
        if (full) notImplemented();
        if (o.outputDimension < HYBRID_BEHAVIOR_FEATURES) {
          throw new UsageError(
            `hybrid training uses the first ${HYBRID_BEHAVIOR_FEATURES} features for behaviour; outputDimension must be at least ${HYBRID_BEHAVIOR_FEATURES}, got ${o.outputDimension}`,
          );
        }
        this.#checkOffset(rows, "data");
        const sampler = hybridSampler(cont, {
          offset: o.timeOffsets,
          ...w,
          conditional,
          delta: o.delta ?? undefined,
        });
        return {
          data,
          multi,
          solver: "single-session-hybrid",
          draw: (rng) => ({ kind: "hybrid", batch: sampler.sample(rng, n) }),
          iterations,
        };
      }
      if (full) {
        const sampler = fullBatchSampler(rows, {
          ...w,
          offset: o.timeOffsets,
          conditional,
          continuous: cont,
          delta: o.delta ?? undefined,
        });
        return { data, multi, solver: "single-session-full", draw: (rng) => fullDraw(sampler, rng), iterations };
      }
      const sampler = conditional === "time"
        ? timeSampler(rows, { offset: o.timeOffsets, ...w })
        : conditional === "time_delta"
        ? timeDeltaSampler(cont, { offset: o.timeOffsets, ...w })
        : deltaSampler(cont, { delta: o.delta!, ...w });
      return { data, multi, solver: "single-session", draw: single(sampler), iterations };
    }
    if (full || o.hybrid) notImplemented();
    if (disc && !cont) {
      return { data, multi, solver: "single-session", draw: single(discreteSampler(disc, w)), iterations };
    }
    this.#checkOffset(rows, "data");
    const sampler = mixedSampler(cont!, disc!, { offset: o.timeOffsets, ...w });
    return { data, multi, solver: "single-session", draw: single(sampler), iterations };
  }

  #checkOffset(rows: number, what: string): void {
    if (this.options.timeOffsets >= rows) {
      throw new UsageError(
        `timeOffsets ${this.options.timeOffsets} must be below the number of rows of the ${what} (${rows})`,
      );
    }
  }

  async #train(plan: Plan, models: CebraModel[], trainable: tf.Variable[], phase: string): Promise<void> {
    const o = this.options;
    const rng = Rng.derive(o.seed, "cebra", "sampler", phase);
    const optimizer = tf.train.adam(o.learningRate, 0.9, 0.999, 1e-8);
    const tensors = plan.data.map((d) => tf.tensor2d(d.values, [d.rows, d.cols]));
    const loss: ContrastiveLoss = (ref, pos, neg) =>
      infoNce(ref, pos, neg, {
        distance: o.distance,
        temperature: o.temperature,
        logInverseTemperature: this.#alpha ?? undefined,
        minTemperature: o.minTemperature,
      }).total;
    this.lossHistory = [];
    // Losses of the steps since the last read, still on the device.
    let unread: tf.Scalar[] = [];
    try {
      for (let step = 0; step < plan.iterations; step++) {
        // A fit on wasm never yields to the event loop: SIGINT/SIGTERM reach it through the run guard's flag.
        stopPoint();
        unread.push(cebraStep(optimizer, models, tensors, plan.draw(rng), loss, trainable));
        this.#afterStep?.(step);
        if ((step + 1) % this.#lossReadEvery !== 0 && step + 1 < plan.iterations) continue;
        const values = await readScalars(unread);
        const first = step + 1 - unread.length;
        tf.dispose(unread);
        unread = [];
        values.forEach((value, i) => {
          this.lossHistory.push(value);
          this.#onStep?.(first + i, value);
        });
      }
    } finally {
      tf.dispose([...tensors, ...unread]);
      optimizer.dispose();
    }
  }

  /**
   * The embedding `[T, outputDimension]` of `x` `[T, features]` (with
   * `padBeforeTransform` false and offset10: `[T − 9, …]`). `session` picks the
   * encoder of a multi-session fit; `batchSize` bounds the rows embedded at once.
   */
  async transform(x: Matrix, options: { session?: number; batchSize?: number } = {}): Promise<Matrix> {
    if (!this.#models) throw new UsageError("transform needs a fitted model; call fit first");
    const { session, batchSize } = options;
    let index = 0;
    if (this.#multi) {
      if (session === undefined) {
        throw new UsageError(
          `this model was fit on ${this.#models.length} sessions; pass session 0…${this.#models.length - 1}`,
        );
      }
      if (!Number.isInteger(session) || session < 0 || session >= this.#models.length) {
        throw new UsageError(`session must be an integer in 0…${this.#models.length - 1}, got ${session}`);
      }
      index = session;
    } else if (session !== undefined && session !== 0) {
      throw new UsageError(`this model was fit on one session; session must be omitted or 0, got ${session}`);
    }
    if (batchSize !== undefined && !isPositiveInteger(batchSize)) {
      throw new UsageError(`batchSize must be a positive integer, got ${batchSize}`);
    }
    const model = this.#models[index];
    const receptive = model.offset.left + model.offset.right;
    const values = checkData(x, "data", receptive);
    if (x.cols !== model.inputs) {
      throw new UsageError(
        `the model${this.#multi ? ` of session ${index}` : ""} takes ${model.inputs} features, got ${x.cols}`,
      );
    }
    const out = tf.tidy(() =>
      model.embed(tf.tensor2d(values, [x.rows, x.cols]), { pad: this.options.padBeforeTransform, batchSize })
    );
    try {
      const data = await out.data() as Float32Array;
      return { data, rows: out.shape[0], cols: out.shape[1] };
    } finally {
      out.dispose();
    }
  }

  /**
   * Writes the fitted model to `dir`: `cebra.json` (options, sessions, input
   * widths, solver, loss history) and one `.npy` per weight
   * (`model{s}.layer{i}.kernel.npy`, `.bias.npy`; `log_inverse_temperature.npy` when learned).
   */
  async save(dir: string): Promise<void> {
    if (!this.#models) throw new UsageError("save needs a fitted model; call fit first");
    await Deno.mkdir(dir, { recursive: true });
    const weights: Record<string, string> = {};
    for (const [s, model] of this.#models.entries()) {
      for (const [key, tensor] of Object.entries(model.state())) {
        const file = `model${s}.${key.replaceAll("/", ".")}.npy`;
        weights[`${s}/${key}`] = file;
        await Deno.writeFile(`${dir}/${file}`, formatNpy(await tensor.data() as Float32Array, tensor.shape));
      }
    }
    if (this.#alpha) {
      await Deno.writeFile(
        `${dir}/log_inverse_temperature.npy`,
        formatNpy(await this.#alpha.data() as Float32Array, [1]),
      );
    }
    const meta = {
      format: FORMAT,
      version: 1,
      options: this.options,
      sessions: this.#multi ? this.#models.length : null,
      inputs: this.#models.map((m) => m.inputs),
      solver: this.#solver,
      weights,
      lossHistory: this.lossHistory,
    };
    await Deno.writeTextFile(`${dir}/cebra.json`, JSON.stringify(meta, null, 2) + "\n");
  }

  /** A model written by {@linkcode Cebra.save}; its transforms are bit-identical to the saved model's. */
  static async load(dir: string): Promise<Cebra> {
    let meta;
    try {
      meta = JSON.parse(await Deno.readTextFile(`${dir}/cebra.json`));
    } catch (error) {
      throw new UsageError(`${dir} holds no readable cebra.json: ${(error as Error).message}`);
    }
    if (meta?.format !== FORMAT) throw new UsageError(`${dir}/cebra.json is not a saved Cebra model`);
    const cebra = new Cebra(meta.options);
    const o = cebra.options;
    const inputs: number[] = meta.inputs;
    const models = inputs.map((n, s) =>
      cebraModel(o.modelArchitecture, { inputs: n, hidden: o.numHiddenUnits, output: o.outputDimension }, new Rng(s))
    );
    try {
      for (const [s, model] of models.entries()) {
        const state: Record<string, { data: Float32Array; shape: number[] }> = {};
        for (const key of Object.keys(model.state())) {
          const file = meta.weights[`${s}/${key}`];
          if (!file) throw new UsageError(`${dir}/cebra.json lists no file for ${s}/${key}`);
          const array = await readNpy(`${dir}/${file}`);
          if (!(array.data instanceof Float32Array)) throw new UsageError(`${dir}/${file} is not float32`);
          state[key] = { data: array.data, shape: array.shape };
        }
        model.load(state);
      }
    } catch (error) {
      for (const m of models) m.dispose();
      throw error;
    }
    cebra.#models = models;
    cebra.#multi = meta.sessions !== null;
    cebra.#solver = meta.solver;
    cebra.lossHistory = meta.lossHistory ?? [];
    if (o.temperatureMode === "auto") {
      const alpha = await readNpy(`${dir}/log_inverse_temperature.npy`);
      if (!(alpha.data instanceof Float32Array) || alpha.data.length !== 1) {
        throw new UsageError(`${dir}/log_inverse_temperature.npy must hold one float32`);
      }
      cebra.#alpha = learnableAlpha(alpha.data[0]);
    }
    await cebra.#readTemperature();
    return cebra;
  }

  #disposeModels(): void {
    for (const m of this.#models ?? []) m.dispose();
    this.#models = null;
  }

  /** Frees the encoders and the learned temperature. */
  dispose(): void {
    this.#disposeModels();
    this.#alpha?.dispose();
    this.#alpha = null;
    this.#learnedTemperature = null;
  }
}

let alphaCounter = 0;

/** The learnable α = ln(1/τ) as a float32 scalar variable. */
function learnableAlpha(value: number): tf.Variable {
  return tf.tidy(() => tf.variable(tf.scalar(value), true, `cebra/log_inverse_temperature#${alphaCounter++}`));
}

function fullDraw(sampler: { sample(rng: Rng, n: number): IndexBatch }, rng: Rng): StepIndices {
  return { kind: "full", batch: sampler.sample(rng, 0) };
}
