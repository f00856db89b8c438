/**
 * The study behind `abs-mnist` (experiments/abs_mnist.ts; Schott2019): the training phases
 * (ten class VAEs, the CNNs), the models under attack rebuilt and calibrated from the phases' weights, Table 1's
 * attack suite per model run over the test digits a chunk at a time (kept in attacks.jsonl, so a stopped run
 * resumes at the next chunk), the per-model metrics of the attacked digits and the distal adversarials.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunContext } from "../core/experiment.ts";
import { Rng } from "../core/rng.ts";
import { loadMnist, type Mnist, MNIST_CLASSES, MNIST_SIDE } from "../data/mnist.ts";
import { imageGrid } from "../data/preview.ts";
import { attack, logitsOf, minimize, misclassified, predictions } from "../attacks/attack.ts";
import { cwL2 } from "../attacks/carlini_wagner.ts";
import { boundary, pointwise, saltAndPepper } from "../attacks/decision.ts";
import { l2DeepFool, linfDeepFool } from "../attacks/deepfool.ts";
import { distalAscent } from "../attacks/distal.ts";
import { distanceOf } from "../attacks/distances.ts";
import { fgm, fgsm, l2Bim, linfBim, linfPgd } from "../attacks/gradient.ts";
import { latentDescent } from "../attacks/latent_descent.ts";
import { noiseLineSearch } from "../attacks/noise.ts";
import { transfer } from "../attacks/transfer.ts";
import type { Attack, AttackDistance, AttackModel } from "../attacks/types.ts";
import { resetBinaryPixels } from "../attacks/wrappers.ts";
import {
  ACCURACY_THRESHOLDS,
  accuracyDistortionCurve,
  bestDistances,
  reportedDistances,
  summarizeDistances,
} from "../metrics/adversarial.ts";
import { scoreAccuracy } from "../metrics/classification.ts";
import { Abs } from "../models/abs.ts";
import { type ClassVae, classVae, trainClassVae } from "../models/abs_vae.ts";
import { fitCalibration, fitClassScales } from "../models/abs_calibration.ts";
import { absCnn, absCnnModel, absCnnTraining } from "../models/abs_cnn.ts";
import { nearestNeighbor } from "../models/nearest_neighbor.ts";
import { trainClassifier } from "../train/classifier.ts";
import type { WorkerPhase } from "../train/parallel_phases.ts";
import type { PhaseArrays, PhaseOutcome } from "../train/phases.ts";

/** The models of Table 1's columns that this study trains and attacks. */
export const MODEL_NAMES = ["cnn", "abs", "binary_cnn", "binary_abs", "nn"] as const;
/** One of {@linkcode MODEL_NAMES}. */
export type ModelName = typeof MODEL_NAMES[number];
/** An MNIST image `[height, width, channels]`. */
export const IMAGE_SHAPE: [number, number, number] = [MNIST_SIDE, MNIST_SIDE, 1];
/** The norms of Table 1's rows. */
export const NORMS: readonly AttackDistance[] = ["l2", "linf", "l0"];
/** Table 1's ε per norm, as the accuracy metrics name it (`acc_l2_1.5`). */
export const EPSILON_LABEL = { l2: "1.5", linf: "0.3", l0: "12" } as const;
/** Whether the model is ABS or Binary ABS, which need the class VAEs. */
export const isAbs = (model: ModelName): boolean => model === "abs" || model === "binary_abs";
const isCnn = (model: ModelName) => model === "cnn" || model === "binary_cnn";

/** The config keys the study reads (experiments/abs_mnist.ts declares them, with their meaning). */
export interface AbsMnistSettings {
  /** Models trained and attacked. */
  models: readonly ModelName[];
  /** Training digits: all 60,000 of the official training file, or a seeded stratified subset. */
  train_digits: number;
  /** Test digits: all 10,000 of the official test file (a seeded stratified subset for smoke runs only). */
  test_digits: number;
  /** Epochs of each class VAE (App. A.7 does not give them; β anneals over the first 50). */
  vae_epochs: number;
  /** Images per class-VAE step. */
  vae_batch: number;
  /** Adam learning rate of the class VAEs (App. A.7 does not give it). */
  vae_lr: number;
  /** Epochs over which the KL weight falls linearly from 10 to 1 (App. A.7: 50). */
  beta_epochs: number;
  /** Epochs of the CNNs (App. A.7 does not give them). */
  cnn_epochs: number;
  /** Images per CNN step. */
  cnn_batch: number;
  /** Adam learning rate of the CNNs. */
  cnn_lr: number;
  /** Latent prototypes per class VAE, the start of ABS's inference (Schott2019: 8,000). */
  prototypes: number;
  /** Adam steps on each class's latent after the best prototype (Schott2019: 50). */
  inference_steps: number;
  /** Adam learning rate of ABS's latent search (reference get_ABS: 0.05). */
  inference_lr: number;
  /** Test digits the clean accuracy is measured on (the first of the test part). */
  clean_digits: number;
  /** Training digits α and the Binary ABS class scales are fit on. */
  calibration_digits: number;
  /** Test digits attacked (the first of the test part). */
  attack_digits: number;
  /** Digits attacked together; finished ones are appended to attacks.jsonl. */
  attack_batch: number;
  /** ε bisections that turn a fixed-ε attack (FGSM, BIM, PGD) into a minimal one. */
  bisection_steps: number;
  /** Steps of the L2 and L∞ BIM (foolbox: 10). */
  bim_steps: number;
  /** Steps of the L∞ PGD (foolbox: 40). */
  pgd_steps: number;
  /** DeepFool steps (foolbox: 50). */
  deepfool_steps: number;
  /** C&W binary search steps over c (foolbox: 9). */
  cw_binary_steps: number;
  /** C&W Adam steps per binary search step (foolbox: 10,000). */
  cw_steps: number;
  /** Boundary Attack steps (foolbox: 25,000). */
  boundary_steps: number;
  /** Latent Descent steps before a digit counts as not fooled. */
  latent_descent_steps: number;
  /** Models the Boundary Attack runs on (its queries are costly on ABS). */
  boundary_models: readonly ModelName[];
  /** Grid scales of the noise and transfer line searches before their bisection. */
  line_search_steps: number;
  /** Salt&Pepper noise steps (foolbox: 1,000). */
  sp_steps: number;
  /** Pointwise Attack restarts (Table 1: 10×). */
  pointwise_restarts: number;
  /**
   * Passes of Pointwise's per-pixel L2 bisection after its resets (foolbox repeats them until one improves nothing; 0:
   * none, its result then counts for L0 only as it is).
   */
  pointwise_bisection: number;
  /** Noise images each model's distal descent starts from (target class 1, as the reference). */
  distal_starts: number;
  /** SGD steps of the distal descent at most (reference scripts/attacks.py: 10,000). */
  distal_steps: number;
  /** Training steps between logged losses. */
  log_every: number;
}

// ---------------------------------------------------------------------------------------------
// Training: ten class VAEs and the CNNs, each a phase (two at once on two cores).

/** A training phase: one class's VAE or one CNN. */
export type TrainPhase = { kind: "vae"; digit: number } | { kind: "cnn"; binary: boolean };
/** A phase's last logged losses. */
export type TrainResult = Record<string, number>;

/** A phase's name, also its arrays' key prefix: `vae3`, `cnn` or `binary_cnn`. */
export const phaseName = (phase: TrainPhase): string =>
  phase.kind === "vae" ? `vae${phase.digit}` : phase.binary ? "binary_cnn" : "cnn";

/** The training phases a config needs: the class VAEs if any ABS is attacked, each CNN asked for. */
export function trainPhases(cfg: AbsMnistSettings): TrainPhase[] {
  const phases: TrainPhase[] = [];
  if (cfg.models.some(isAbs)) {
    for (let digit = 0; digit < MNIST_CLASSES; digit++) phases.push({ kind: "vae", digit });
  }
  for (const binary of [false, true]) {
    if (cfg.models.includes(binary ? "binary_cnn" : "cnn") || (!binary && needsTransferSource(cfg))) {
      phases.push({ kind: "cnn", binary });
    }
  }
  return phases;
}

/** The transfer attacks on ABS, Binary ABS and the NN take their directions from the CNN. */
const needsTransferSource = (cfg: AbsMnistSettings) => cfg.models.some((m) => !isCnn(m));

/** The run's digits: its seeded stratified train part and the first test digits. */
export const mnistOf = (seed: number, cfg: AbsMnistSettings): Mnist =>
  loadMnist({ seed, train: cfg.train_digits, test: cfg.test_digits });

/** Plain arrays of parameters, as a phase hands them back. */
async function plainArrays(tensors: Record<string, tf.Tensor>): Promise<PhaseArrays> {
  const out: PhaseArrays = {};
  for (const [key, t] of Object.entries(tensors)) out[key] = { data: (await t.data()) as Float32Array, shape: t.shape };
  return out;
}

/** Trains one phase's model on the training digits and returns its weights. */
export async function trainPhase(ctx: RunContext, cfg: AbsMnistSettings, phase: TrainPhase): Promise<{
  result: TrainResult;
  arrays: PhaseArrays;
}> {
  const { train } = mnistOf(ctx.seed, cfg);
  const name = phaseName(phase);
  const rng = Rng.derive(ctx.seed, `abs-mnist/${name}`);
  if (phase.kind === "vae") {
    const rows = [...train.labels.keys()].filter((i) => train.labels[i] === phase.digit);
    const images = new Float32Array(rows.length * MNIST_SIDE * MNIST_SIDE);
    rows.forEach((i, r) => images.set(train.images.subarray(i * 784, (i + 1) * 784), r * 784));
    let last: TrainResult = {};
    const vae = await trainClassVae(images, {
      epochs: cfg.vae_epochs,
      batch: cfg.vae_batch,
      lr: cfg.vae_lr,
      betaEpochs: cfg.beta_epochs,
      rng,
      logEvery: cfg.log_every,
      signal: ctx.stopRequested,
      // Called at the logged steps and the last one, whose terms are the result.
      onStep: (s) => {
        last = { loss: s.loss, reconstruction: s.reconstruction, kl: s.kl };
        if (s.step % cfg.log_every === 0) {
          ctx.log(s.step, {
            [`${name}/loss`]: s.loss,
            [`${name}/reconstruction`]: s.reconstruction,
            [`${name}/kl`]: s.kl,
          });
        }
      },
    });
    const arrays = await plainArrays({ ...vae.params.entries(`${name}/`), ...vae.stats.entries(`${name}/stats/`) });
    vae.dispose();
    return { result: last, arrays };
  }
  let last: TrainResult = {};
  const cnn = absCnn(rng, { binary: phase.binary });
  const training = absCnnTraining(cnn);
  const optimizer = tf.train.adam(cfg.cnn_lr);
  // The latest step's loss stays on the device until a logged step or the end reads it.
  let latest: tf.Scalar | null = null;
  try {
    await trainClassifier({
      images: train.images,
      labels: train.labels,
      shape: IMAGE_SHAPE,
      logits: training.logits,
      variables: cnn.params.list(),
      optimizer,
      rng,
      batch: cfg.cnn_batch,
      epochs: cfg.cnn_epochs,
      minRows: 2,
      afterStep: async (step, loss) => {
        training.update();
        ctx.stopRequested.throwIfAborted();
        latest?.dispose();
        latest = tf.clone(loss);
        if (step % cfg.log_every === 0) ctx.log(step, { [`${name}/loss`]: (await latest.data())[0] });
      },
    });
    if (latest) last = { loss: (await (latest as tf.Scalar).data())[0] };
    const arrays = await plainArrays({ ...cnn.params.entries(`${name}/`), ...cnn.stats.entries(`${name}/stats/`) });
    return { result: last, arrays };
  } finally {
    (latest as tf.Scalar | null)?.dispose();
    optimizer.dispose();
    cnn.dispose();
  }
}

/** A training phase as a worker runs it (lib/train/parallel_phases.ts). */
export const workerPhase: WorkerPhase<AbsMnistSettings, TrainPhase, TrainResult> = (
  ctx,
  cfg,
  phase,
): Promise<PhaseOutcome<TrainResult>> => trainPhase(ctx, cfg, phase);

/** This module's URL: phase workers import its {@linkcode workerPhase}. */
export const WORKER_MODULE: string = import.meta.url;

// ---------------------------------------------------------------------------------------------
// The models under attack.

/** A model as the attacks see it, with its calibrated softmax. */
export interface AttackedModel {
  /** Table 1's column. */
  name: ModelName;
  /** The model as the attacks query it. */
  model: AttackModel;
  /** Binary models: adversarial pixels reset to the clean value or the threshold where the decision holds. */
  binary: boolean;
  /** The ABS model itself for ABS and Binary ABS (latent descent and the L2 lower bound need it). */
  abs?: Abs;
  /**
   * α of the calibrated softmax (e^{α·logit_c} + η)/(Σ e^{α·logit} + C·η): the cross-entropy minimum on the calibration
   * digits.
   */
  alpha: number;
  /** η of the calibrated softmax: the median confidence on the clean test digits is 0.9 (0 when already below). */
  eta: number;
  /** Accuracy on the first `clean_digits` test digits. */
  clean: number;
}

/** Rebuilds the trained models from the phases' arrays and calibrates them on training digits. */
export async function buildModels(
  cfg: AbsMnistSettings,
  mnist: Mnist,
  arrays: PhaseArrays,
  seed: number,
): Promise<{ models: AttackedModel[]; cnn: AttackModel | null; dispose(): void }> {
  const { train } = mnist;
  const owned: { dispose(): void }[] = [];
  const npy = (prefix: string) =>
    Object.fromEntries(
      Object.entries(arrays).filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k, { ...v, dtype: "f4" }]),
    );
  const cnnOf = (name: string): AttackModel => {
    const cnn = absCnn(new Rng(0), { binary: name === "binary_cnn" });
    cnn.params.load(npy(`${name}/`), `${name}/`);
    cnn.stats.load(npy(`${name}/stats/`), `${name}/stats/`);
    owned.push(cnn);
    return absCnnModel(cnn);
  };
  const vaes: ClassVae[] = [];
  if (cfg.models.some(isAbs)) {
    for (let digit = 0; digit < MNIST_CLASSES; digit++) {
      const vae = classVae(new Rng(0));
      vae.params.load(npy(`vae${digit}/`), `vae${digit}/`);
      vae.stats.load(npy(`vae${digit}/stats/`), `vae${digit}/stats/`);
      vaes.push(vae);
      owned.push(vae);
    }
  }
  const calibrationRows = Math.min(cfg.calibration_digits, train.n);
  const calibrationImages = train.images.subarray(0, calibrationRows * 784);
  const calibrationLabels = train.labels.subarray(0, calibrationRows);
  const cleanRows = cfg.clean_digits;
  const absOptions = { prototypes: cfg.prototypes, steps: cfg.inference_steps, lr: cfg.inference_lr, seed };
  const models: AttackedModel[] = [];
  const cnn = cfg.models.includes("cnn") || needsTransferSource(cfg) ? cnnOf("cnn") : null;
  for (const name of cfg.models) {
    let model: AttackModel;
    let abs: Abs | undefined;
    if (name === "cnn") model = cnn!;
    else if (name === "binary_cnn") model = cnnOf("binary_cnn");
    else if (name === "nn") {
      const nn = nearestNeighbor(train.images, train.labels);
      owned.push(nn);
      model = nn;
    } else {
      abs = await Abs.create(vaes, { ...absOptions, binary: name === "binary_abs" });
      owned.push(abs);
      if (name === "binary_abs") {
        const { logits } = await logitsOf(abs, calibrationImages, calibrationRows, IMAGE_SHAPE, 50);
        abs.classScales = fitClassScales(logits.map((l) => -l), calibrationLabels, MNIST_CLASSES);
      }
      model = abs;
    }
    const fit = await logitsOf(model, calibrationImages, calibrationRows, IMAGE_SHAPE, 50);
    const clean = await logitsOf(model, mnist.test.images.subarray(0, cleanRows * 784), cleanRows, IMAGE_SHAPE, 50);
    const { alpha, eta } = fitCalibration({
      logits: fit.logits,
      labels: calibrationLabels,
      classes: MNIST_CLASSES,
      confidenceLogits: clean.logits,
    });
    const accuracy = scoreAccuracy(clean.logits, mnist.test.labels.subarray(0, cleanRows), MNIST_CLASSES);
    models.push({ name, model, binary: name.startsWith("binary"), abs, alpha, eta, clean: accuracy });
  }
  return { models, cnn, dispose: () => owned.forEach((o) => o.dispose()) };
}

// ---------------------------------------------------------------------------------------------
// The attack suite: per model the attacks of Table 1 that apply, with this config's budgets.

/** One attack of a model's plan, under the metric name it reports. */
export interface PlannedAttack {
  /** Metric name: `cnn/<label>/median_l2`. */
  label: string;
  /** Norms its adversarial counts under: its own, and L2 for Pointwise (Table 1 lists it in both). */
  norms: AttackDistance[];
  /** The attack, with this config's budget. */
  attack: Attack;
}

/** Table 1's rows for one model: gradient attacks where it has gradients (ABS: envelope), decision-based for all. */
function attackPlan(cfg: AbsMnistSettings, model: AttackedModel, cnn: AttackModel | null): PlannedAttack[] {
  const name = model.name;
  const plan: PlannedAttack[] = [];
  const add = (label: string, attack: Attack, norms: AttackDistance[] = [attack.distance]) =>
    plan.push({ label, norms, attack });
  const envelope = isAbs(name) ? "_envelope" : "";
  if (isCnn(name) || isAbs(name)) {
    add(`fgm${envelope}`, minimize(fgm(), cfg.bisection_steps));
    add(`fgsm${envelope}`, minimize(fgsm(), cfg.bisection_steps));
    add(`deepfool_l2${envelope}`, l2DeepFool({ steps: cfg.deepfool_steps }));
    add(`deepfool_linf${envelope}`, linfDeepFool({ steps: cfg.deepfool_steps }));
  }
  if (isCnn(name)) {
    add("bim_l2", minimize(l2Bim({ steps: cfg.bim_steps }), cfg.bisection_steps));
    add("bim_linf", minimize(linfBim({ steps: cfg.bim_steps }), cfg.bisection_steps));
    add("pgd_linf", minimize(linfPgd({ steps: cfg.pgd_steps }), cfg.bisection_steps));
    add("cw_l2", cwL2({ binarySearchSteps: cfg.cw_binary_steps, steps: cfg.cw_steps }));
  }
  if (!isCnn(name) && cnn) {
    add(
      "transfer_l2",
      transfer(cnn, [fgm(), l2Bim({ steps: cfg.bim_steps })], { distance: "l2", gridSteps: cfg.line_search_steps }),
    );
    add(
      "transfer_linf",
      transfer(cnn, [fgsm(), linfBim({ steps: cfg.bim_steps })], {
        distance: "linf",
        gridSteps: cfg.line_search_steps,
      }),
    );
  }
  if (isAbs(name)) add("latent_descent", latentDescent(model.abs!, { maxIterations: cfg.latent_descent_steps }));
  add("gaussian_noise", noiseLineSearch({ noise: "gaussian", distance: "l2", gridSteps: cfg.line_search_steps }));
  if (cfg.boundary_models.includes(name)) add("boundary", boundary({ steps: cfg.boundary_steps }));
  add("salt_and_pepper", saltAndPepper({ steps: cfg.sp_steps, distance: "l0" }));
  add(
    "pointwise",
    pointwise({
      restarts: cfg.pointwise_restarts,
      saltAndPepperSteps: cfg.sp_steps,
      l2BinarySearch: cfg.pointwise_bisection > 0,
      bisectionPasses: Math.max(1, cfg.pointwise_bisection),
    }),
    ["l0", "l2"],
  );
  return plan;
}

/** One attacked digit's line of attacks.jsonl; ∞ (no adversarial found) is written as null. */
export interface DigitRecord {
  /** Position of the digit in the test part. */
  index: number;
  /** Its true class, 0–9. */
  label: number;
  /** Model → whether it classified the clean digit correctly, each attack's distance and the best per norm. */
  models: Record<string, {
    clean_correct: boolean;
    attacks: Record<string, number | null>;
    best_l0: number | null;
    best_l2: number | null;
    best_linf: number | null;
    lower_bound_l2?: number;
  }>;
}

const finiteOrNull = (v: number) => Number.isFinite(v) ? v : null;
/** The entries of `m` that are finite (JSON metrics cannot hold ∞). */
export const finite = (m: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(m).filter(([, v]) => Number.isFinite(v)));
/** A distance read back from attacks.jsonl: null (no adversarial found) is ∞. */
export const fromJson = (v: number | null): number => v ?? Infinity;

/**
 * The digits attacks.jsonl holds already. A line torn by a crash, and
 * anything after it, is dropped and the file rewritten without it, so that
 * the digits appended next follow whole lines.
 */
function readDigitRecords(path: string): DigitRecord[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  const records: DigitRecord[] = [];
  let kept = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) break;
    try {
      records.push(JSON.parse(line));
    } catch {
      break;
    }
    kept += line.length + 1;
  }
  if (kept !== text.length) {
    writeFileSync(`${path}.tmp`, text.slice(0, kept));
    renameSync(`${path}.tmp`, path);
  }
  return records;
}

/** Attacks digits `[start, start + n)` of the test part with every planned attack on every model. */
async function attackDigits(
  mnist: Mnist,
  start: number,
  n: number,
  models: AttackedModel[],
  plans: PlannedAttack[][],
  seed: number,
): Promise<{ records: DigitRecord[]; examples: Record<string, Float32Array>; seconds: Record<string, number> }> {
  const x = mnist.test.images.slice(start * 784, (start + n) * 784);
  const labels = mnist.test.labels.slice(start, start + n);
  const records: DigitRecord[] = Array.from({ length: n }, (_, r) => ({
    index: start + r,
    label: labels[r],
    models: {},
  }));
  const examples: Record<string, Float32Array> = {};
  const seconds: Record<string, number> = {};
  for (const [m, attacked] of models.entries()) {
    const predicted = await predictions(attacked.model, x, n, IMAGE_SHAPE);
    const cleanCorrect = Uint8Array.from(predicted, (p, r) => (p === labels[r] ? 1 : 0));
    const perNorm: Record<AttackDistance, Float64Array[]> = { l2: [], linf: [], l0: [] };
    const attacks: Record<string, Float64Array> = {};
    const bestL2 = new Float64Array(n).fill(Infinity);
    for (const planned of plans[m]) {
      // Each (model, attack, chunk) draws from its own stream, so a resumed run repeats it exactly.
      const rng = Rng.derive(seed, `abs-mnist/${attacked.name}/${planned.label}/${start}`);
      const started = performance.now();
      const out = await attack(
        planned.attack,
        attacked.model,
        { values: x, n, shape: IMAGE_SHAPE },
        labels,
        [null],
        rng,
      );
      let adversarial = out.raw[0];
      if (attacked.binary) {
        adversarial = await resetBinaryPixels(attacked.model, { x, n, shape: IMAGE_SHAPE, labels }, adversarial);
      }
      const success = attacked.binary
        ? await misclassified(attacked.model, adversarial, n, IMAGE_SHAPE, labels)
        : out.success[0];
      seconds[`${attacked.name}/${planned.label}`] = (performance.now() - started) / 1000;
      for (const norm of planned.norms) {
        const distances = reportedDistances(distanceOf(norm)(x, adversarial, n), cleanCorrect, success);
        attacks[`${planned.label}/${norm}`] = distances;
        perNorm[norm].push(distances);
        if (norm !== "l2") continue;
        distances.forEach((d, r) => {
          if (d < bestL2[r]) {
            bestL2[r] = d;
            examples[`${attacked.name}/best_l2`] ??= x.slice();
            examples[`${attacked.name}/best_l2`].set(adversarial.subarray(r * 784, (r + 1) * 784), r * 784);
          }
        });
      }
    }
    const best = Object.fromEntries(NORMS.map((norm) => [norm, bestDistances(perNorm[norm])])) as Record<
      AttackDistance,
      Float64Array
    >;
    let bound: Float64Array | null = null;
    // The bound is derived for ABS on real-valued inputs with equal class scales (Schott2019 §4), not Binary ABS.
    if (attacked.abs && attacked.name === "abs") {
      const input = tf.tensor4d(x, [n, ...IMAGE_SHAPE]);
      try {
        bound = await attacked.abs.lowerBoundL2(input, labels);
      } finally {
        input.dispose();
      }
    }
    records.forEach((record, r) => {
      record.models[attacked.name] = {
        clean_correct: cleanCorrect[r] === 1,
        attacks: Object.fromEntries(Object.entries(attacks).map(([label, d]) => [label, finiteOrNull(d[r])])),
        best_l0: finiteOrNull(best.l0[r]),
        best_l2: finiteOrNull(best.l2[r]),
        best_linf: finiteOrNull(best.linf[r]),
        ...(bound ? { lower_bound_l2: cleanCorrect[r] ? bound[r] : 0 } : {}),
      };
    });
  }
  return { records, examples, seconds };
}

/** Table 1 from the attacked digits: per model and norm the median and accuracy of the best attack, per attack too. */
export function attackMetrics(
  records: DigitRecord[],
  models: ModelName[],
): Record<string, number> {
  const metrics: Record<string, number> = {};
  for (const name of models) {
    const rows = records.map((r) => r.models[name]).filter((r) => r !== undefined);
    if (rows.length === 0) continue;
    for (const norm of NORMS) {
      const best = rows.map((r) => fromJson(r[`best_${norm}`]));
      const { median, accuracy } = summarizeDistances(best, ACCURACY_THRESHOLDS[norm]);
      metrics[`${name}/median_${norm}`] = median;
      metrics[`${name}/acc_${norm}_${EPSILON_LABEL[norm]}`] = accuracy;
    }
    for (const label of Object.keys(rows[0].attacks)) {
      const norm = label.slice(label.lastIndexOf("/") + 1) as AttackDistance;
      const { median, accuracy } = summarizeDistances(
        rows.map((r) => fromJson(r.attacks[label])),
        ACCURACY_THRESHOLDS[norm],
      );
      const attackName = label.slice(0, label.lastIndexOf("/"));
      metrics[`${name}/${attackName}/median_${norm}`] = median;
      metrics[`${name}/${attackName}/acc_${norm}_${EPSILON_LABEL[norm]}`] = accuracy;
    }
    const bounds = rows.map((r) => r.lower_bound_l2).filter((b): b is number => b !== undefined);
    if (bounds.length > 0) {
      metrics[`${name}/lower_bound_l2_mean`] = bounds.reduce((a, b) => a + b, 0) / bounds.length;
      metrics[`${name}/bound_respected`] = rows.filter((r) => fromJson(r.best_l2) >= (r.lower_bound_l2 ?? 0) - 1e-6)
        .length / rows.length;
    }
  }
  return metrics;
}

// ---------------------------------------------------------------------------------------------
// The run's attacks and distal adversarials

/** The attacked digits of a run: per digit and model its distances, with the wall time of this invocation. */
export interface AttackedDigits {
  /** Every attacked digit, the ones of earlier invocations included, in test order. */
  records: DigitRecord[];
  /** Per model (in the order of `models`), its planned attacks. */
  plans: PlannedAttack[][];
  /** Seconds per model and attack in this invocation: a resumed run counts only its own digits. */
  seconds: Record<string, number>;
}

/**
 * Attacks the first `attack_digits` test digits `attack_batch` at a time, appending each chunk to
 * attacks.jsonl (the digits it holds already are not attacked again) and logging the running metrics.
 */
export async function attackAllDigits(
  ctx: RunContext,
  cfg: AbsMnistSettings,
  mnist: Mnist,
  models: AttackedModel[],
  cnn: AttackModel | null,
): Promise<AttackedDigits> {
  const plans = models.map((m) => attackPlan(cfg, m, cnn));
  const path = join(ctx.dir, "attacks.jsonl");
  const records = readDigitRecords(path).filter((r) => r.index < cfg.attack_digits);
  const names = models.map((m) => m.name);
  const progress = ctx.progress("digits attacked", cfg.attack_digits);
  const seconds: Record<string, number> = {};
  progress.update(records.length);
  for (let start = records.length; start < cfg.attack_digits; start += cfg.attack_batch) {
    // A turn of the event loop between chunks lets a stop request (Ctrl-C) arrive.
    await new Promise((resolve) => setTimeout(resolve, 0));
    ctx.stopRequested.throwIfAborted();
    const n = Math.min(cfg.attack_batch, cfg.attack_digits - start);
    const chunk = await attackDigits(mnist, start, n, models, plans, ctx.seed);
    appendFileSync(path, chunk.records.map((r) => JSON.stringify(r) + "\n").join(""));
    records.push(...chunk.records);
    for (const [key, value] of Object.entries(chunk.seconds)) seconds[key] = (seconds[key] ?? 0) + value;
    progress.update(records.length);
    const running = finite(attackMetrics(records, names));
    ctx.log(
      records.length,
      Object.fromEntries(Object.entries(running).map(([key, value]) => [`${key}/running`, value])),
    );
    if (start === 0) {
      for (const [key, images] of Object.entries(chunk.examples)) {
        ctx.image(`adversarial/${key}`, 0, imageGrid(images, n, IMAGE_SHAPE, n));
      }
      ctx.image("adversarial/clean", 0, imageGrid(mnist.test.images.slice(0, n * 784), n, IMAGE_SHAPE, n));
    }
  }
  return { records, plans, seconds };
}

/** The summary's details of the attacked digits (JSON: ∞ distances are null). */
export interface AttackDetails {
  /** Model → per attacked digit, its best distance under each norm (null: none found) and the L2 lower bound (ABS). */
  per_digit: Record<string, {
    index: number;
    label: number;
    best_l0: number | null;
    best_l2: number | null;
    best_linf: number | null;
    lower_bound_l2?: number;
  }[]>;
  /** Model → its attacks as "label (attack; norms)". */
  attacks: Record<string, string[]>;
  /** `<model>/<attack>` → seconds spent in this invocation. */
  attack_time: Record<string, { seconds: number }>;
  /** Metric keys whose median is ∞ (at least half the digits resisted every attack). */
  infinite_medians: string[];
  /** Model → α and η of its calibrated softmax. */
  calibration: Record<string, { alpha: number; eta: number }>;
  /** The L2 accuracy–distortion curve: `epsilons`, and per model the accuracy at each ε. */
  accuracy_l2_curve: Record<string, number[]>;
}

/** The details of the attacked digits: per digit the best distances, the attacks, their times and curves. */
export function attackDetails(
  attacked: AttackedDigits,
  models: AttackedModel[],
  table: Record<string, number>,
): AttackDetails {
  const { records, plans } = attacked;
  const names = models.map((m) => m.name);
  const grid = Array.from({ length: 61 }, (_, k) => k * 0.05);
  return {
    per_digit: Object.fromEntries(names.map((name) => [
      name,
      records.map((r) => ({
        index: r.index,
        label: r.label,
        best_l0: r.models[name].best_l0,
        best_l2: r.models[name].best_l2,
        best_linf: r.models[name].best_linf,
        ...(r.models[name].lower_bound_l2 !== undefined ? { lower_bound_l2: r.models[name].lower_bound_l2 } : {}),
      })),
    ])),
    attacks: Object.fromEntries(
      models.map((m, i) => [m.name, plans[i].map((p) => `${p.label} (${p.attack.name}; ${p.norms.join(", ")})`)]),
    ),
    attack_time: Object.fromEntries(Object.entries(attacked.seconds).map(([key, seconds]) => [key, { seconds }])),
    // Medians where at least half the digits resisted every attack: ∞, which JSON metrics cannot hold.
    infinite_medians: Object.keys(table).filter((key) => !Number.isFinite(table[key])),
    calibration: Object.fromEntries(models.map((m) => [m.name, { alpha: m.alpha, eta: m.eta }])),
    accuracy_l2_curve: {
      epsilons: grid,
      ...Object.fromEntries(names.map((name) => [
        name,
        [...accuracyDistortionCurve(records.map((r) => fromJson(r.models[name].best_l2)), grid)],
      ])),
    },
  };
}

/**
 * Distal adversarials (Schott2019 §7): per model with gradients, `distal_starts` noise images ascended towards class 1;
 * adds each model's reached share and median confidence to `metrics` and returns the per-start details.
 */
export async function distalAdversarials(
  ctx: RunContext,
  cfg: AbsMnistSettings,
  models: AttackedModel[],
  metrics: Record<string, number>,
): Promise<Record<string, unknown>> {
  const distal: Record<string, unknown> = {};
  for (const m of models) {
    if (cfg.distal_starts === 0 || !m.model.gradient) continue;
    const result = await distalAscent(m.model, {
      starts: cfg.distal_starts,
      shape: IMAGE_SHAPE,
      steps: cfg.distal_steps,
      alpha: m.alpha,
      eta: m.eta,
    }, Rng.derive(ctx.seed, `abs-mnist/distal/${m.name}`));
    metrics[`${m.name}/distal_reached`] = result.reached.reduce((a, b) => a + b, 0) / cfg.distal_starts;
    metrics[`${m.name}/distal_confidence_median`] = [...result.confidence].sort((a, b) => a - b)[
      cfg.distal_starts >> 1
    ];
    ctx.image(
      `distal/${m.name}`,
      0,
      imageGrid(result.images, cfg.distal_starts, IMAGE_SHAPE, Math.min(10, cfg.distal_starts)),
    );
    distal[m.name] = { targets: [...result.targets], confidence: [...result.confidence], steps: [...result.steps] };
  }
  return distal;
}
