/**
 * Analysis by synthesis on MNIST (Schott et al. 2019, Paper D,
 * 000_306f4209a39c5a17.md §2.8–2.9, §5.4, §7.4): ten class VAEs classify by
 * their optimised ELBOs (ABS) and are attacked beside a CNN of the same
 * size by a foolbox-style suite, per norm the smallest adversarial any
 * attack finds; ABS's certified L2 lower bound; distal adversarials from
 * noise. Table 1's finding: ABS needs about twice the CNN's median L2
 * perturbation and more changed pixels.
 */
import * as tf from "@tensorflow/tfjs";
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { choices, type ConfigOf, integer, real } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { type Claim, defineExperiment, type RunContext, runFromCli, type Target } from "../lib/core/experiment.ts";
import { Rng } from "../lib/core/rng.ts";
import * as table1 from "../lib/data/abs_mnist_tables.ts";
import { imageGrid } from "../lib/data/preview.ts";
import {
  checkMnistParts,
  loadMnist,
  type Mnist,
  MNIST_CLASSES,
  MNIST_PARTS_CONFIG,
  MNIST_SIDE,
} from "../lib/data/mnist.ts";
import { argmaxRows, attack, logitsOf, minimize, misclassified, predictions } from "../lib/attacks/attack.ts";
import { cwL2 } from "../lib/attacks/carlini_wagner.ts";
import { boundary, pointwise, saltAndPepper } from "../lib/attacks/decision.ts";
import { l2DeepFool, linfDeepFool } from "../lib/attacks/deepfool.ts";
import { distalAscent } from "../lib/attacks/distal.ts";
import { distanceOf } from "../lib/attacks/distances.ts";
import { fgm, fgsm, l2Bim, linfBim, linfPgd } from "../lib/attacks/gradient.ts";
import { latentDescent } from "../lib/attacks/latent_descent.ts";
import { noiseLineSearch } from "../lib/attacks/noise.ts";
import { transfer } from "../lib/attacks/transfer.ts";
import type { Attack, AttackDistance, AttackModel } from "../lib/attacks/types.ts";
import { resetBinaryPixels } from "../lib/attacks/wrappers.ts";
import {
  ACCURACY_THRESHOLDS,
  accuracyDistortionCurve,
  bestDistances,
  reportedDistances,
  summarizeDistances,
} from "../lib/metrics/adversarial.ts";
import { Abs } from "../lib/models/abs.ts";
import { fitCalibration, fitClassScales } from "../lib/models/abs_calibration.ts";
import { type ClassVae, classVae, trainClassVae } from "../lib/models/abs_vae.ts";
import { absCnn, absCnnModel, trainAbsCnn } from "../lib/models/abs_cnn.ts";
import { nearestNeighbor } from "../lib/models/nearest_neighbor.ts";
import type { PhaseArrays } from "../lib/train/phases.ts";
import { runPhasesOn, type WorkerPhase, WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";

const SOURCE = "000_306f4209a39c5a17.md §2.8–2.9, §5.4, §7.4 (Paper D); targets Table 1 and §5.4's lower bound";

const MODEL_NAMES = ["cnn", "abs", "binary_cnn", "binary_abs", "nn"] as const;
type ModelName = typeof MODEL_NAMES[number];
/** An MNIST image `[height, width, channels]`. */
const IMAGE_SHAPE: [number, number, number] = [MNIST_SIDE, MNIST_SIDE, 1];
const NORMS: readonly AttackDistance[] = ["l2", "linf", "l0"];
const isAbs = (model: ModelName) => model === "abs" || model === "binary_abs";
const isCnn = (model: ModelName) => model === "cnn" || model === "binary_cnn";

const config = {
  models: choices(["cnn", "abs", "binary_cnn", "binary_abs", "nn"], MODEL_NAMES, "models trained and attacked"),
  ...MNIST_PARTS_CONFIG,
  vae_epochs: real(100, "epochs of each class VAE (App. A.7 does not give them; β anneals over the first 50)", {
    min: 0.01,
    max: 10_000,
  }),
  vae_batch: integer(64, "images per class-VAE step", { min: 2, max: 4_096 }),
  vae_lr: real(1e-3, "Adam learning rate of the class VAEs (App. A.7 does not give it)", { min: 0, max: 1 }),
  beta_epochs: real(50, "epochs over which the KL weight falls linearly from 10 to 1 (App. A.7: 50)", {
    min: 0,
    max: 10_000,
  }),
  cnn_epochs: real(50, "epochs of the CNNs (App. A.7 does not give them)", { min: 0.01, max: 10_000 }),
  cnn_batch: integer(64, "images per CNN step", { min: 2, max: 4_096 }),
  cnn_lr: real(1e-3, "Adam learning rate of the CNNs", { min: 0, max: 1 }),
  prototypes: integer(8_000, "latent prototypes per class VAE, the start of ABS's inference (§2.8: 8,000)", {
    min: 1,
    max: 100_000,
  }),
  inference_steps: integer(50, "Adam steps on each class's latent after the best prototype (§2.8: 50)", {
    min: 0,
    max: 10_000,
  }),
  inference_lr: real(0.05, "Adam learning rate of ABS's latent search (reference get_ABS: 0.05)", { min: 0, max: 10 }),
  clean_digits: integer(10_000, "test digits the clean accuracy is measured on (the first of the test part)", {
    min: 1,
    max: 10_000,
  }),
  calibration_digits: integer(2_000, "training digits α and the Binary ABS class scales are fit on", {
    min: 10,
    max: 60_000,
  }),
  attack_digits: integer(2_000, "test digits attacked (the first of the test part)", { min: 1, max: 10_000 }),
  attack_batch: integer(10, "digits attacked together; finished ones are appended to attacks.jsonl", {
    min: 1,
    max: 1_000,
  }),
  bisection_steps: integer(10, "ε bisections that turn a fixed-ε attack (FGSM, BIM, PGD) into a minimal one", {
    min: 1,
    max: 50,
  }),
  bim_steps: integer(10, "steps of the L2 and L∞ BIM (foolbox: 10)", { min: 1, max: 10_000 }),
  pgd_steps: integer(40, "steps of the L∞ PGD (foolbox: 40)", { min: 1, max: 10_000 }),
  deepfool_steps: integer(50, "DeepFool steps (foolbox: 50)", { min: 1, max: 10_000 }),
  cw_binary_steps: integer(9, "C&W binary search steps over c (foolbox: 9)", { min: 1, max: 100 }),
  cw_steps: integer(10_000, "C&W Adam steps per binary search step (foolbox: 10,000)", { min: 1, max: 100_000 }),
  boundary_steps: integer(25_000, "Boundary Attack steps (foolbox: 25,000)", { min: 1, max: 1_000_000 }),
  boundary_models: choices(
    ["cnn", "abs", "binary_cnn", "binary_abs", "nn"],
    MODEL_NAMES,
    "models the Boundary Attack runs on (its queries are costly on ABS)",
  ),
  line_search_steps: integer(100, "grid scales of the noise and transfer line searches before their bisection", {
    min: 1,
    max: 100_000,
  }),
  sp_steps: integer(1_000, "Salt&Pepper noise steps (foolbox: 1,000)", { min: 1, max: 100_000 }),
  pointwise_restarts: integer(10, "Pointwise Attack restarts (Table 1: 10×)", { min: 1, max: 100 }),
  pointwise_bisection: integer(
    10,
    "passes of Pointwise's per-pixel L2 bisection after its resets (foolbox repeats them until one improves " +
      "nothing; 0: none, its result then counts for L0 only as it is)",
    { min: 0, max: 100 },
  ),
  distal_starts: integer(
    10,
    "noise images each model's distal descent starts from (target class 1, as the reference)",
    {
      min: 0,
      max: 10_000,
    },
  ),
  distal_steps: integer(10_000, "SGD steps of the distal descent at most (reference scripts/attacks.py: 10,000)", {
    min: 1,
    max: 100_000,
  }),
  log_every: integer(50, "training steps between logged losses", { min: 1, max: 1_000_000 }),
  ...WORKERS_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

// ---------------------------------------------------------------------------------------------
// Targets and claims: Table 1 ("All L2/L∞/L0 attacks" rows) and §5.4.

const EPSILON_LABEL = { l2: "1.5", linf: "0.3", l0: "12" } as const;
type Nulls = Target<Cfg>["nulls"];
type TargetArgs = [ModelName, string, number, string, keyof typeof table1.TOLERANCES, Nulls];

/** A Table 1 target; its tolerance the scale's, or half the way to the nearest null (rounded down) where less. */
const target = (...[model, metric, paper, cell, scale, given]: TargetArgs): Target<Cfg> => {
  const untrained = table1.UNTRAINED_ABS[`${model}/${metric}`];
  const nulls = untrained === undefined ? given : [...given, { value: untrained, model: table1.NULLS.untrained }];
  const [base, step, why] = table1.TOLERANCES[scale];
  const near = nulls.reduce((a, b) => Math.abs(paper - b.value) < Math.abs(paper - a.value) ? b : a);
  const half = Number((Math.abs(paper - near.value) / 2).toFixed(4));
  return {
    metric: `${model}/${metric}`,
    paper,
    source: `000_306f4209a39c5a17.md §5.4 Table 1 (Paper D), ${model}: ${cell}`,
    tolerance: base <= half ? base : Number((Math.floor(half / step + 1e-9) * step).toFixed(4)),
    toleranceSource: base <= half
      ? `rule: ${base} (${why}), under half the way to the nearest null (${half})`
      : `rule: half the way from ${paper} to the nearest null (${near.model}, ${near.value}), rounded down`,
    direction: "match",
    nulls,
    kind: "like-for-like",
    standIn: table1.SCALE,
    // No curve: measured once over the attacked digits (the running values logged per chunk are no learning curve).
    appliesTo: (cfg) => cfg.models.includes(model),
  };
};

const targets: Target<Cfg>[] = [
  ...MODEL_NAMES.map((model) =>
    target(model, "clean", table1.CLEAN[model], "clean accuracy", "clean", table1.NULLS.chance)
  ),
  ...MODEL_NAMES.flatMap((model) =>
    NORMS.flatMap((norm, k) =>
      table1.ALL_ATTACKS[model][k].map((paper, i) => {
        const nulls: Nulls = [...(i === 0 ? table1.NULLS.median : table1.NULLS.accuracy)];
        if (model !== "cnn") nulls.push({ value: table1.ALL_ATTACKS.cnn[k][i], model: "undefended CNN (Table 1)" });
        const [eps, cell] = [EPSILON_LABEL[norm], `All ${table1.NORM_LABEL[norm]} attacks`];
        if (i === 0) return target(model, `median_${norm}`, paper, `${cell}, median`, norm, nulls);
        return target(model, `acc_${norm}_${eps}`, paper, `${cell}, accuracy at ε = ${eps}`, "accuracy", nulls);
      })
    )
  ).filter((t) => !table1.AT_NULL.includes(t.metric)),
  ...([["abs", 2.7], ["binary_abs", 2.6]] as const).map(([model, paper]) =>
    target(model, "latent_descent/median_l2", paper, "Latent Descent, median", "l2", [
      ...table1.NULLS.median,
      { value: 1.1, model: "undefended CNN (All L2 attacks median, Table 1)" },
    ])
  ),
  // Binary ABS's bound (0.601) is left out: the re-derived bound (§2.8) holds for real-valued inputs only.
  {
    ...target("abs", "lower_bound_l2_mean", 0.69, "", "l2", [{ value: 0, model: "trivial bound 0" }]),
    source: "000_306f4209a39c5a17.md §5.4 (Paper D), L2 lower bound, mean over the test set (abs): 0.690 ± 0.005",
    toleranceSource: "rule: 0.3, under half the way to the bound 0 (0.345); §5.4's ± 0.005 is over inference seeds",
  },
];

const both = (a: number | undefined, b: number | undefined, test: (a: number, b: number) => boolean) =>
  a === undefined || b === undefined ? undefined : test(a, b);
const TABLE1_ROW = '000_306f4209a39c5a17.md §5.4 Table 1, row "All';
/** ABS's median at least `ratio` × the CNN's: halfway from 1× to Table 1's ratio. */
const medianRatio = (norm: AttackDistance, ratio: number, cells: string): Claim<Cfg> => ({
  text: `ABS's median ${table1.NORM_LABEL[norm]} adversarial (all attacks) is at least ${ratio}× the CNN's`,
  source: `${TABLE1_ROW} ${table1.NORM_LABEL[norm]} attacks" (${cells}); margin halfway from 1×`,
  holds: (m) => both(m[`abs/median_${norm}`], m[`cnn/median_${norm}`], (abs, cnn) => abs >= ratio * cnn),
});

const claims: Claim<Cfg>[] = [
  medianRatio("l2", 1.5, "ABS 2.3 vs CNN 1.1: 2.1×"),
  medianRatio("l0", 1.4, "ABS 16.5 vs CNN 9: 1.8×"),
  medianRatio("linf", 1.9, "ABS 0.23 vs CNN 0.08: 2.9×"),
  {
    text: "ABS's accuracy under all L2 attacks at ε = 1.5 exceeds the CNN's by ≥ 0.36",
    source: `${TABLE1_ROW} L2 attacks" (ABS 80% vs CNN 8%); margin half the gap`,
    holds: (m) => both(m["abs/acc_l2_1.5"], m["cnn/acc_l2_1.5"], (abs, cnn) => abs - cnn >= 0.36),
  },
  {
    text: "binarization buys L∞ robustness: accuracy at L∞ ε = 0.3 of the Binary CNN ≥ the CNN's + 0.32 and of " +
      "Binary ABS ≥ ABS's + 0.34 (each pair that was trained)",
    source: `${TABLE1_ROW} L∞ attacks" (Binary CNN 64% vs CNN 0%, Binary ABS 77% vs ABS 8%); margins half the gaps`,
    holds: (m) => {
      const held = ([["binary_cnn", "cnn", 0.32], ["binary_abs", "abs", 0.34]] as const)
        .map(([b, p, gap]) => both(m[`${b}/acc_linf_0.3`], m[`${p}/acc_linf_0.3`], (x, y) => x - y >= gap));
      return held.every((h) => h === undefined) ? undefined : !held.includes(false);
    },
  },
  {
    text: "ABS's certified L2 bound: 0 < mean ≤ median L2 found; every attack's best L2 ≥ the bound on ≥ 95% of digits",
    source: "000_306f4209a39c5a17.md §2.8 (Eq. 6–8 re-derived), §5.4",
    holds: (m) => {
      const [bound, median, share] = ["lower_bound_l2_mean", "median_l2", "bound_respected"].map((k) => m[`abs/${k}`]);
      return share === undefined ? undefined : both(bound, median, (b, med) => b > 0 && b <= med && share >= 0.95);
    },
  },
  {
    text: "distal adversarials: ascent from noise reaches p ≥ 0.9 from ≥ 80% of starts for the CNN, ≤ 20% for ABS",
    source: "000_306f4209a39c5a17.md §7.4 (Paper D §7, Fig. 4)",
    holds: (m) => both(m["cnn/distal_reached"], m["abs/distal_reached"], (cnn, abs) => cnn >= 0.8 && abs <= 0.2),
  },
];

// ---------------------------------------------------------------------------------------------
// Training: ten class VAEs and the CNNs, each a phase (two at once on two cores).

type TrainPhase = { kind: "vae"; digit: number } | { kind: "cnn"; binary: boolean };
type TrainResult = Record<string, number>;

const phaseName = (phase: TrainPhase) =>
  phase.kind === "vae" ? `vae${phase.digit}` : phase.binary ? "binary_cnn" : "cnn";

/** The training phases a config needs: the class VAEs if any ABS is attacked, each CNN asked for. */
function trainPhases(cfg: Cfg): TrainPhase[] {
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
const needsTransferSource = (cfg: Cfg) => cfg.models.some((m) => !isCnn(m));

const mnistOf = (ctx: RunContext, cfg: Cfg): Mnist =>
  loadMnist({ seed: ctx.seed, train: cfg.train_digits, test: cfg.test_digits });

/** Plain arrays of parameters, as a phase hands them back. */
async function plainArrays(tensors: Record<string, tf.Tensor>): Promise<PhaseArrays> {
  const out: PhaseArrays = {};
  for (const [key, t] of Object.entries(tensors)) out[key] = { data: (await t.data()) as Float32Array, shape: t.shape };
  return out;
}

/** Trains one phase's model on the training digits and returns its weights. */
async function trainPhase(ctx: RunContext, cfg: Cfg, phase: TrainPhase): Promise<{
  result: TrainResult;
  arrays: PhaseArrays;
}> {
  const { train } = mnistOf(ctx, cfg);
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
      onStep: (s) => {
        ctx.stopRequested.throwIfAborted();
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
  const cnn = await trainAbsCnn(train.images, train.labels, {
    epochs: cfg.cnn_epochs,
    batch: cfg.cnn_batch,
    lr: cfg.cnn_lr,
    binary: phase.binary,
    rng,
    onStep: (s) => {
      ctx.stopRequested.throwIfAborted();
      last = { loss: s.loss };
      if (s.step % cfg.log_every === 0) ctx.log(s.step, { [`${name}/loss`]: s.loss });
    },
  });
  const arrays = await plainArrays({ ...cnn.params.entries(`${name}/`), ...cnn.stats.entries(`${name}/stats/`) });
  cnn.dispose();
  return { result: last, arrays };
}

/** A training phase as a worker runs it (lib/train/parallel_phases.ts). */
export const workerPhase: WorkerPhase<Cfg, TrainPhase, TrainResult> = (ctx, cfg, phase) => trainPhase(ctx, cfg, phase);

// ---------------------------------------------------------------------------------------------
// The models under attack.

/** A model as the attacks see it, with its calibrated softmax. */
interface AttackedModel {
  name: ModelName;
  model: AttackModel;
  /** Binary models: adversarial pixels reset to the clean value or the threshold where the decision holds. */
  binary: boolean;
  abs?: Abs;
  alpha: number;
  eta: number;
  /** Accuracy on the first `clean_digits` test digits. */
  clean: number;
}

/** Rebuilds the trained models from the phases' arrays and calibrates them on training digits. */
async function buildModels(cfg: Cfg, mnist: Mnist, arrays: PhaseArrays, seed: number) {
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
    const predicted = argmaxRows(clean.logits, cleanRows, MNIST_CLASSES);
    const accuracy = predicted.filter((p, r) => p === mnist.test.labels[r]).length / cleanRows;
    models.push({ name, model, binary: name.startsWith("binary"), abs, alpha, eta, clean: accuracy });
  }
  return { models, cnn, dispose: () => owned.forEach((o) => o.dispose()) };
}

// ---------------------------------------------------------------------------------------------
// The attack suite: per model the attacks of Table 1 that apply, with this config's budgets.

interface PlannedAttack {
  /** Metric name: `cnn/<label>/median_l2`. */
  label: string;
  /** Norms its adversarial counts under: its own, and L2 for Pointwise (Table 1 lists it in both). */
  norms: AttackDistance[];
  attack: Attack;
}

/** Table 1's rows for one model: gradient attacks where it has gradients (ABS: envelope), decision-based for all. */
function attackPlan(cfg: Cfg, model: AttackedModel, cnn: AttackModel | null): PlannedAttack[] {
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
  if (isAbs(name)) add("latent_descent", latentDescent(model.abs!));
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
interface DigitRecord {
  index: number;
  label: number;
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
const finite = (m: Record<string, number>) =>
  Object.fromEntries(Object.entries(m).filter(([, v]) => Number.isFinite(v)));
const fromJson = (v: number | null) => v ?? Infinity;

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
    // The bound is derived for ABS on real-valued inputs with equal class scales (§2.8), not Binary ABS.
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
function attackMetrics(
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

export const experiment = defineExperiment({
  name: "abs-mnist",
  description: "Analysis by synthesis (Paper D): ABS vs CNN on MNIST under a foolbox-style attack suite, L2 bound",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      train_digits: 200,
      test_digits: 50,
      vae_epochs: 3,
      vae_batch: 32,
      beta_epochs: 1,
      cnn_epochs: 1,
      prototypes: 20,
      inference_steps: 1,
      clean_digits: 50,
      calibration_digits: 100,
      // Three: with two, both latent-descent runs can fail on these tiny models and leave its median unmeasured.
      attack_digits: 3,
      attack_batch: 1,
      line_search_steps: 5,
      bisection_steps: 3,
      bim_steps: 2,
      pgd_steps: 2,
      deepfool_steps: 3,
      cw_binary_steps: 1,
      cw_steps: 3,
      boundary_steps: 5,
      sp_steps: 5,
      pointwise_restarts: 1,
      pointwise_bisection: 1,
      distal_starts: 2,
      distal_steps: 3,
      log_every: 1,
    },
    quick: {
      models: ["cnn", "abs"],
      // A stratified eighth of the training file keeps the VAEs' training short; clean accuracy on all 10,000 test
      // digits (ABS inference ≈ 45 ms a digit on one wasm core).
      train_digits: 8_000,
      vae_epochs: 30,
      beta_epochs: 10,
      cnn_epochs: 8,
      prototypes: 1_000,
      inference_steps: 5,
      clean_digits: 10_000,
      calibration_digits: 1_000,
      attack_digits: 30,
      bim_steps: 20,
      pgd_steps: 20,
      cw_binary_steps: 5,
      cw_steps: 1_000, // 5 × 200 leave MNIST's saturated pixels unmoved: 1.2–2.4× above 5 × 1,000 on a CNN
      boundary_steps: 1_000,
      boundary_models: ["cnn"],
      sp_steps: 100,
      pointwise_restarts: 1,
      pointwise_bisection: 0,
      line_search_steps: 25,
      distal_starts: 10,
      distal_steps: 100,
      workers: 2,
    },
    paper: {},
  },
  presetLimits: {
    quick: "8,000 of the 60,000 official training digits (stratified); clean accuracy on all 10,000 test digits; " +
      "10 class VAEs × 30 epochs (β 10 → 1 over 10), CNN 8 epochs; ABS with 1,000 prototypes and 5 Adam steps (paper 8,000 and 50); 30 attacked digits (paper: " +
      "the test set); reduced attack budgets (BIM/PGD 20 steps, C&W 5 × 1,000, Boundary 1,000 steps on the CNN only, " +
      "S&P 100, Pointwise 1× without its L2 bisection, line searches on 25 grid points); gradients of ABS by the envelope theorem, not the paper's finite-difference estimates",
    paper: "estimated, not run: ABS's attacks cost 37 s per digit in the quick run (1,000 prototypes, 5 steps); " +
      "inference at 8,000 prototypes and 50 steps costs about 10× as much (Adam steps dominate), so about 9 days " +
      "for 2,000 digits on this machine at the quick attack budgets and several weeks at foolbox's (Pointwise 10×, " +
      "S&P 1,000 steps); on a GPU not measured. Madry-style adversarial training is not built (its Table 1 column and claim 6 are left out); the " +
      'gradient-estimate ("w/ GE") and MIM attacks are not built',
  },
  targets,
  claims,
  validate(cfg) {
    checkMnistParts(cfg, ["attack_digits", "clean_digits"]);
    if (cfg.calibration_digits > cfg.train_digits) {
      throw new UsageError(
        `calibration_digits = ${cfg.calibration_digits} exceeds train_digits = ${cfg.train_digits}`,
      );
    }
  },
  async run(ctx, cfg) {
    const mnist = mnistOf(ctx, cfg);
    const phases = trainPhases(cfg);
    const trained = await runPhasesOn<Cfg, TrainPhase, TrainResult>(
      ctx,
      phases,
      (phase) => trainPhase(ctx, cfg, phase),
      {
        parallel: {
          module: import.meta.url,
          exportName: "workerPhase",
          cfg,
          workers: cfg.workers,
          cost: (phase) => phase.kind === "cnn" ? 2 : 1,
        },
      },
    );
    const built = await buildModels(cfg, mnist, trained.arrays, ctx.seed);
    try {
      const metrics: Record<string, number> = {};
      phases.forEach((phase, i) => {
        for (const [key, value] of Object.entries(trained.results[i])) metrics[`${phaseName(phase)}/${key}`] = value;
      });
      for (const m of built.models) {
        metrics[`${m.name}/clean`] = m.clean;
        metrics[`${m.name}/alpha`] = m.alpha;
        metrics[`${m.name}/eta`] = m.eta;
      }
      ctx.log(0, Object.fromEntries(built.models.map((m) => [`${m.name}/clean`, metrics[`${m.name}/clean`]])));

      const plans = built.models.map((m) => attackPlan(cfg, m, built.cnn));
      const path = join(ctx.dir, "attacks.jsonl");
      const records = readDigitRecords(path).filter((r) => r.index < cfg.attack_digits);
      const names = built.models.map((m) => m.name);
      const progress = ctx.progress("digits attacked", cfg.attack_digits);
      // Wall time per model and attack in this invocation: a resumed run counts only its own digits.
      const attackSeconds: Record<string, number> = {};
      progress.update(records.length);
      for (let start = records.length; start < cfg.attack_digits; start += cfg.attack_batch) {
        // A turn of the event loop between chunks lets a stop request (Ctrl-C) arrive.
        await new Promise((resolve) => setTimeout(resolve, 0));
        ctx.stopRequested.throwIfAborted();
        const n = Math.min(cfg.attack_batch, cfg.attack_digits - start);
        const chunk = await attackDigits(mnist, start, n, built.models, plans, ctx.seed);
        appendFileSync(path, chunk.records.map((r) => JSON.stringify(r) + "\n").join(""));
        records.push(...chunk.records);
        for (const [key, value] of Object.entries(chunk.seconds)) {
          attackSeconds[key] = (attackSeconds[key] ?? 0) + value;
        }
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
      const table = attackMetrics(records, names);
      Object.assign(metrics, finite(table));

      const distal: Record<string, unknown> = {};
      for (const m of built.models) {
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

      const grid = Array.from({ length: 61 }, (_, k) => k * 0.05);
      return {
        metrics,
        details: {
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
            built.models.map((m, i) => [
              m.name,
              plans[i].map((p) => `${p.label} (${p.attack.name}; ${p.norms.join(", ")})`),
            ]),
          ),
          attack_time: Object.fromEntries(
            Object.entries(attackSeconds).map(([key, seconds]) => [key, { seconds }]),
          ),
          // Medians where at least half the digits resisted every attack: ∞, which JSON metrics cannot hold.
          infinite_medians: Object.keys(table).filter((key) => !Number.isFinite(table[key])),
          calibration: Object.fromEntries(built.models.map((m) => [m.name, { alpha: m.alpha, eta: m.eta }])),
          accuracy_l2_curve: {
            epsilons: grid,
            ...Object.fromEntries(names.map((name) => [
              name,
              [...accuracyDistortionCurve(records.map((r) => fromJson(r.models[name].best_l2)), grid)],
            ])),
          },
          distal,
          deviations: [
            "ABS gradients by the envelope theorem (z* held fixed), not the paper's finite-difference estimates",
            "latent projection keeps signs (z·min(1, 5/‖z‖)); the reference clip_to_sphere drops them",
            "decoder kernels [4,5,5,4] as the reference code (the paper's [4,5,5,3] ends at 27 px)",
            "distal adversarials: the cross-entropy gradient of class 1 by backpropagation (ABS: envelope), not the " +
            "reference's coordinate-wise estimate",
            "attacks from this toolkit's foolbox-3-style suite, not foolbox 1.3",
          ],
        },
      };
    } finally {
      built.dispose();
    }
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
