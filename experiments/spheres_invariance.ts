/**
 * Excessive invariance on the adversarial spheres (Jacobsen2019 Example 6,
 * §2.2, App. B.1).
 *
 *   - analytic (Example 6): points uniform on two spheres of radii R₁ < R₂
 *     in d dimensions. The classifier of Eq. 5 reads only x₁..x_{d−1}; it
 *     is perfect on the data, yet moving the one coordinate it ignores
 *     (x_d ← sign(x_d)·√(R₂² − ‖x₁..d−1‖²)) puts every inner point on the
 *     outer sphere without changing its decision: accuracy drops to chance
 *     while the max-margin oracle sign(‖x‖ − (R₁+R₂)/2) sees the change.
 *     In low dimension Eq. 5 also errs on clean outer points (a Beta tail).
 *   - firevnet (§2.2, App. B.1, Fig. 3): a dense fully invertible RevNet
 *     reads its two logits z_s off a bijection; a post-hoc classifier on the
 *     frozen nuisances z_n shows that they hold the label too. Metamers
 *     F⁻¹(z_s(inner), z_n(outer)) keep the "inner" logits but lie near the
 *     outer sphere; on the plane through x and its metamer the logit
 *     classifier calls large outer regions "inner" where the nuisance
 *     classifier is right.
 */
import * as tf from "@tensorflow/tfjs";
import { choices, type ConfigOf, integer, integers, real } from "../lib/core/config.ts";
import { type Claim, defineExperiment, type RunContext, runFromCli, type Target } from "../lib/core/experiment.ts";
import { UsageError } from "../lib/core/errors.ts";
import { Rng } from "../lib/core/rng.ts";
import type { ResultTable } from "../lib/core/scorecard.ts";
import { imageGrid } from "../lib/data/preview.ts";
import {
  analyticShift,
  maxMarginClassifier,
  misalignedClassifier,
  outerErrorClosedForm,
  sampleSpheres,
  sphereThreshold,
} from "../lib/data/spheres.ts";
import { DenseFiRevNet, metamers } from "../lib/models/firevnet.ts";
import {
  classifierScores,
  encodeRows,
  type LabelledRows,
  logitMatchError,
  pickRows,
  roundTripError,
  trainFiRevNet,
} from "../lib/train/firevnet_training.ts";
import { fiRevNetReadouts, logitError } from "../lib/train/firevnet_readout.ts";
import type { NuisanceClassifier } from "../lib/train/ice.ts";
import type { PhaseCheckpoints } from "../lib/train/phases.ts";
import { runPhases } from "../lib/train/phases.ts";
import { checkpointEveryConfig, logEveryConfig } from "../lib/train/config.ts";

const SOURCE = "Jacobsen2019 §2, Example 6, App. B.1";
const EXAMPLE_6 = "Jacobsen2019 Example 6";
const APP_B1 = "Jacobsen2019 App. B.1";

export const PARTS = ["analytic", "firevnet"] as const;

const config = {
  parts: choices([...PARTS], PARTS, "analytic: Example 6's attack on Eq. 5; firevnet: the dense fiRevNet and metamers"),
  dim: integer(100, "d, the dimension of the spheres (Jacobsen2019: 100)", { min: 2, max: 100_000 }),
  r1: real(1, "R₁, the inner radius", { min: 0 }),
  r2: real(10, "R₂, the outer radius", { min: 0 }),
  analytic_points: integer(2_000_000, "analytic: test points (balanced; Example 6: 2M)", {
    min: 2,
    max: 100_000_000,
  }),
  outer_dims: integers([2, 3, 5, 10], "analytic: d of Eq. 5's clean outer-point error beside its Beta closed form", {
    min: 2,
    max: 100_000,
  }),
  train: integer(500_000, "firevnet: training points (App. B.1: 500,000)", { min: 2, max: 100_000_000 }),
  val: integer(100_000, "firevnet: validation points (App. B.1: 100,000)", { min: 2, max: 100_000_000 }),
  epochs: integer(10, "firevnet: passes over the training points (App. B.1: 10)", { min: 1, max: 10_000 }),
  batch: integer(256, "firevnet: points per step (not stated in the paper)", { min: 2, max: 65_536 }),
  lr: real(1e-4, "firevnet: Adam learning rate (App. B.1: 1e-4)", { min: 0, max: 1 }),
  blocks: integer(4, "firevnet: additive coupling blocks (App. B.1: 4)", { min: 1, max: 1_000 }),
  hidden: integer(128, "firevnet: bottleneck width (not stated; ours: 128)", { min: 1, max: 16_384 }),
  nuisance_hidden: integer(1_000, "firevnet: post-hoc classifier on z_n, ReLU width (App. B.1: 1,000)", {
    min: 1,
    max: 16_384,
  }),
  nuisance_layers: integer(3, "firevnet: its hidden layers (App. B.1: 3)", { min: 1, max: 16 }),
  nuisance_epochs: integer(10, "firevnet: epochs of the post-hoc classifier (not stated: ours)", {
    min: 1,
    max: 10_000,
  }),
  nuisance_lr: real(1e-3, "firevnet: Adamax learning rate of the post-hoc classifier (ours)", { min: 0, max: 1 }),
  metamers: integer(2_000, "firevnet: metamers (z_s of an inner point, z_n of an outer one)", {
    min: 1,
    max: 1_000_000,
  }),
  plane_side: integer(200, "firevnet: grid points per side of each Fig. 3 plane", { min: 2, max: 2_000 }),
  eval_points: integer(2_000, "firevnet: validation points of the learning curve", { min: 2, max: 1_000_000 }),
  eval_every: integer(200, "firevnet: steps between learning-curve points", { min: 1, max: 100_000_000 }),
  ...logEveryConfig(50),
  ...checkpointEveryConfig(500),
};
export type Cfg = ConfigOf<typeof config>;

/**
 * Claim 3's margin on the plane: above the s.d. over seeds of the nuisance classifier's lead over D on the outer
 * grid points (quick preset, seeds 0, 1, 2: −0.000, −0.015, +0.149; s.d. 0.09).
 */
const PLANE_MARGIN = 0.1;

// Example 6's clean accuracy (1) and shifted accuracy (0.5, chance) are computed from the construction itself (Eq. 5
// reads x₁..x_{d−1}, the attack sets ‖x‖ = R₂; the clean error is a Beta tail, ≈ 1e-27 at d 100): checked in
// tests/data/spheres_test.ts, not targets. The nuisance classifier's 100 % (App. B.1) is what an untrained fiRevNet
// gives too (its z_n is 98 of the 100 coordinates, whose norm tells the spheres apart: 1.000 measured), so it is a
// claim relative to the logits.
const targets: Target<Cfg>[] = [
  {
    metric: "firevnet/logit_val_acc",
    paper: 1,
    source: `${APP_B1}: 100% validation accuracy of the logit classifier`,
    tolerance: 0.01,
    toleranceSource: "rule: 0.01 on accuracy (no spread given), far below half the way (0.25) to chance",
    nulls: [
      { value: 0.5, model: "chance (2 balanced classes)" },
      { value: 0.507, model: "untrained fiRevNet's logits, measured (quick, seed 0)" },
    ],
    direction: "higher",
    kind: "like-for-like",
    standIn: "quick: 50,000 of the 500,000 training points (10×), Adam 1e-3 instead of 1e-4; bottleneck width 128 " +
      "(not stated in the paper)",
    appliesTo: (cfg) => cfg.parts.includes("firevnet"),
  },
];

const claims: Claim<Cfg>[] = [
  {
    text: "(1) the attack succeeds on every inner point (Eq. 5 still says inner) and the max-margin oracle says " +
      "outer for every attacked point",
    source: `${EXAMPLE_6} ("accuracy drops to chance"; by construction, as tests/data/spheres_test.ts checks)`,
    holds: (m) =>
      m["analytic/attack_success"] === undefined
        ? undefined
        : m["analytic/attack_success"] === 1 && m["analytic/oracle_outer"] === 1,
  },
  {
    text: "(2) the trained fiRevNet's z_n still holds the label: the post-hoc nuisance classifier's validation " +
      "accuracy is within 0.01 of the logits' (an untrained net's z_n reads it as well, 1.000, while its logits " +
      "are at chance)",
    source: `${APP_B1}: "100 % train and validation accuracy for logit and nuisance classifier"`,
    holds: (m) =>
      m["firevnet/nuisance_val_acc"] === undefined || m["firevnet/logit_val_acc"] === undefined
        ? undefined
        : Math.abs(m["firevnet/nuisance_val_acc"] - m["firevnet/logit_val_acc"]) <= 0.01,
  },
  {
    text: "(3) most metamers of inner logits and outer nuisances lie outside (R₁+R₂)/2 (adversarial rate > 0.5), " +
      `and on the plane through x and its metamer the nuisance classifier is right on more outer points than D, ` +
      `by > ${PLANE_MARGIN}`,
    source: `Jacobsen2019 §2.2 (Fig. 3: D calls "large regions" of the outer sphere inner, the ` +
      `nuisance classifier does not; no numbers); margin ${PLANE_MARGIN} > the lead's s.d. over ` +
      "3 seeds (0.09, quick)",
    holds: (m) =>
      m["metamer/adversarial_rate"] === undefined
        ? undefined
        : m["metamer/adversarial_rate"] > 0.5 && m["plane/dnc_outer_acc"] > m["plane/d_outer_acc"] + PLANE_MARGIN,
  },
];

// ---------------------------------------------------------------------------------------------------------------
// Analytic

/** Example 6 on `points` fresh points, in chunks so that 2M points of d 100 stay small. */
function analyticPart(seed: number, cfg: Cfg): Record<string, number> {
  const radii = { r1: cfg.r1, r2: cfg.r2 };
  const rng = Rng.derive(seed, "analytic");
  const chunk = 20_000;
  let clean = 0, shifted = 0, attacked = 0, fooled = 0, oracleOuter = 0, total = 0;
  for (let done = 0; done < cfg.analytic_points; done += chunk) {
    const n = Math.min(chunk, cfg.analytic_points - done);
    const { x, y } = sampleSpheres(n, cfg.dim, rng, radii);
    const before = misalignedClassifier(x, cfg.dim, radii);
    const moved = analyticShift(x, y, cfg.dim, radii);
    const after = misalignedClassifier(moved, cfg.dim, radii);
    const oracle = maxMarginClassifier(moved, cfg.dim, radii);
    for (let i = 0; i < n; i++) {
      if (before[i] === y[i]) clean++;
      // After the attack the true class is what the geometry (the max-margin oracle) says: attacked inner points lie
      // on the outer sphere, outer points are unchanged.
      if (after[i] === oracle[i]) shifted++;
      if (y[i] === 0) {
        attacked++;
        if (after[i] === 0) fooled++;
        if (oracle[i] === 1) oracleOuter++;
      }
    }
    total += n;
  }
  const out: Record<string, number> = {
    "analytic/clean_acc": clean / total,
    "analytic/shifted_acc": shifted / total,
    "analytic/attack_success": fooled / attacked,
    "analytic/oracle_outer": oracleOuter / attacked,
  };
  for (const d of cfg.outer_dims) {
    const n = 2 * Math.floor(Math.min(cfg.analytic_points, 400_000) / 2);
    const outer = sampleSpheres(n, d, Rng.derive(seed, "outer", d), radii);
    const said = misalignedClassifier(outer.x, d, radii);
    let wrong = 0, count = 0;
    for (let i = 0; i < outer.y.length; i++) if (outer.y[i] === 1) (count++, said[i] !== 1 && wrong++);
    out[`analytic/outer_err@${d}`] = wrong / count;
    out[`analytic/outer_err_closed@${d}`] = outerErrorClosedForm(d, cfg.r1, cfg.r2);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// fiRevNet

const asRows = (s: { x: Float32Array; y: Int32Array }, dim: number): LabelledRows => ({
  x: s.x,
  labels: s.y,
  rows: s.y.length,
  dim,
});

const norm = (x: ArrayLike<number>, row: number, dim: number) => {
  let s = 0;
  for (let j = 0; j < dim; j++) s += x[row * dim + j] ** 2;
  return Math.sqrt(s);
};

/** Decisions (argmax of 2 scores) of the net's logits and of the post-hoc classifier on z_n, for points `x`. */
async function decisions(net: DenseFiRevNet, posthoc: NuisanceClassifier, x: Float32Array, dim: number) {
  const rows = x.length / dim;
  const { logits, zn } = await encodeRows(net, { x, labels: new Int32Array(rows), rows, dim });
  const nuisance = await classifierScores(posthoc, zn);
  const pick = (s: Float32Array) => Int32Array.from({ length: rows }, (_, i) => (s[2 * i + 1] > s[2 * i] ? 1 : 0));
  return { d: pick(logits), dnc: pick(nuisance) };
}

/**
 * A Fig. 3 plane through the origin spanned by `u` and `v` (orthonormalised), `side`² points over
 * [−1.1 R₂, 1.1 R₂]²: D and D_nc as two panels (inner blue, outer red, the circles R₁, R₂ white), and on the
 * points the oracle calls outer (up to 1.1 R₂) the share each classifier gets right.
 */
async function plane(
  net: DenseFiRevNet,
  posthoc: NuisanceClassifier,
  u: Float32Array,
  v: Float32Array,
  cfg: Cfg,
) {
  const dim = cfg.dim, side = cfg.plane_side, extent = 1.1 * cfg.r2;
  const unit = (a: Float32Array) => {
    const n = Math.hypot(...a);
    return a.map((x) => x / n);
  };
  const e1 = unit(u);
  const dot = v.reduce((s, x, j) => s + x * e1[j], 0);
  const e2 = unit(v.map((x, j) => x - dot * e1[j]));
  const points = new Float32Array(side * side * dim);
  const radius = new Float64Array(side * side);
  for (let r = 0; r < side; r++) {
    for (let c = 0; c < side; c++) {
      const a = -extent + (2 * extent * c) / (side - 1), b = extent - (2 * extent * r) / (side - 1);
      const i = r * side + c;
      radius[i] = Math.hypot(a, b);
      for (let j = 0; j < dim; j++) points[i * dim + j] = a * e1[j] + b * e2[j];
    }
  }
  const { d, dnc } = await decisions(net, posthoc, points, dim);
  const threshold = sphereThreshold({ r1: cfg.r1, r2: cfg.r2 });
  let outer = 0, dRight = 0, dncRight = 0;
  const panels = new Float32Array(2 * side * side * 3);
  const cell = (2 * extent) / (side - 1);
  for (let i = 0; i < side * side; i++) {
    if (radius[i] > threshold) (outer++, d[i] === 1 && dRight++, dnc[i] === 1 && dncRight++);
    const onCircle = Math.abs(radius[i] - cfg.r1) < cell || Math.abs(radius[i] - cfg.r2) < cell;
    for (const [panel, decision] of [[0, d], [1, dnc]] as const) {
      const at = (panel * side * side + i) * 3;
      const rgb = onCircle ? [1, 1, 1] : decision[i] === 1 ? [0.85, 0.3, 0.25] : [0.25, 0.4, 0.85];
      panels.set(rgb, at);
    }
  }
  return {
    image: imageGrid(panels, 2, [side, side, 3], 2),
    dOuterAcc: dRight / outer,
    dncOuterAcc: dncRight / outer,
  };
}

async function firevnetPart(ctx: RunContext, cfg: Cfg, checkpoints: PhaseCheckpoints) {
  const radii = { r1: cfg.r1, r2: cfg.r2 };
  const train = asRows(sampleSpheres(cfg.train, cfg.dim, Rng.derive(ctx.seed, "train"), radii), cfg.dim);
  const val = asRows(sampleSpheres(cfg.val, cfg.dim, Rng.derive(ctx.seed, "val"), radii), cfg.dim);
  const curveSet = pickRows(val, Array.from({ length: Math.min(cfg.eval_points, val.rows) }, (_, i) => i));
  const net = new DenseFiRevNet(Rng.derive(ctx.seed, "model"), {
    dim: cfg.dim,
    classes: 2,
    blocks: cfg.blocks,
    hidden: cfg.hidden,
  });
  try {
    const steps = Math.ceil((cfg.epochs * cfg.train) / cfg.batch);
    await trainFiRevNet(ctx, {
      label: "firevnet",
      net,
      train,
      steps,
      batch: cfg.batch,
      optimizer: "adam",
      lr: cfg.lr,
      objective: "ce",
      ice: { hidden: [], updates: 0, variant: "permuted", lambdaN: 0, lambdaM: 0 },
      dequantize: 0,
      seed: ctx.seed,
      logEvery: cfg.log_every,
      evaluateEvery: cfg.eval_every,
      evaluate: async () => ({ logit_val_acc: 1 - await logitError(net, curveSet) }),
      checkpointEvery: cfg.checkpoint_every,
    }, checkpoints);

    const { posthoc, ...read } = await fiRevNetReadouts(net, train, val, {
      hidden: Array.from({ length: cfg.nuisance_layers }, () => cfg.nuisance_hidden),
      epochs: cfg.nuisance_epochs,
      batch: cfg.batch,
      lr: cfg.nuisance_lr,
      seed: ctx.seed,
    });
    try {
      const metrics: Record<string, number> = {
        "firevnet/logit_train_acc": 1 - read.logitTrainErr,
        "firevnet/logit_val_acc": 1 - read.logitHeldErr,
        "firevnet/nuisance_train_acc": 1 - read.nuisanceTrainErr,
        "firevnet/nuisance_val_acc": 1 - read.nuisanceHeldErr,
      };

      // Invertibility on validation points, then metamers: z_s of inner points, z_n of outer ones.
      const probe = pickRows(val, Array.from({ length: Math.min(1_000, val.rows) }, (_, i) => i));
      metrics["invert/max_err"] = await roundTripError(net, probe.x, cfg.dim);

      const inner: number[] = [], outer: number[] = [];
      val.labels.forEach((y, i) => (y === 0 ? inner : outer).push(i));
      const count = Math.min(cfg.metamers, inner.length, outer.length);
      const a = pickRows(val, inner.slice(0, count)), b = pickRows(val, outer.slice(0, count));
      const [xA, xB] = [tf.tensor2d(a.x, [count, cfg.dim]), tf.tensor2d(b.x, [count, cfg.dim])];
      const met = await metamers(net, xA, xB);
      const metValues = new Float32Array(await met.data());
      metrics["metamer/logit_match_err"] = await logitMatchError(net, xA, met);
      tf.dispose([xA, xB, met]);
      const threshold = sphereThreshold(radii);
      const metDecisions = await decisions(net, posthoc, metValues, cfg.dim);
      let outside = 0, dInner = 0, dncAgrees = 0;
      const norms = new Float64Array(count);
      for (let i = 0; i < count; i++) {
        norms[i] = norm(metValues, i, cfg.dim);
        const oracle = norms[i] > threshold ? 1 : 0;
        if (oracle === 1 && metDecisions.d[i] === 0) outside++;
        if (metDecisions.d[i] === 0) dInner++;
        if (metDecisions.dnc[i] === oracle) dncAgrees++;
      }
      // Adversarial: the oracle says outer while the logits (z_s of an inner point) still say inner.
      metrics["metamer/adversarial_rate"] = outside / count;
      metrics["metamer/logit_inner_rate"] = dInner / count;
      metrics["metamer/nuisance_oracle_agreement"] = dncAgrees / count;
      metrics["metamer/norm_median"] = [...norms].sort((p, q) => p - q)[Math.floor(count / 2)];

      // Fig. 3: the plane through two data points, and the plane through x and its metamer.
      const first = plane(net, posthoc, a.x.slice(0, cfg.dim), b.x.slice(0, cfg.dim), cfg);
      const data = await first;
      ctx.image("plane_data", steps, data.image);
      const second = await plane(net, posthoc, a.x.slice(0, cfg.dim), metValues.slice(0, cfg.dim), cfg);
      ctx.image("plane_metamer", steps, second.image);
      metrics["plane/d_outer_acc"] = second.dOuterAcc;
      metrics["plane/dnc_outer_acc"] = second.dncOuterAcc;
      metrics["plane_data/d_outer_acc"] = data.dOuterAcc;
      metrics["plane_data/dnc_outer_acc"] = data.dncOuterAcc;
      return metrics;
    } finally {
      posthoc.dispose();
    }
  } finally {
    net.dispose();
  }
}

function resultTables(m: Record<string, number>, cfg: Cfg): ResultTable[] {
  const tables: ResultTable[] = [];
  if (cfg.parts.includes("analytic")) {
    tables.push({
      title: `Example 6, d ${cfg.dim}: Eq. 5 clean and after the x_d attack`,
      rows: [
        { quantity: "clean accuracy", ours: m["analytic/clean_acc"], paper: "1 (perfect)" },
        { quantity: "accuracy after the attack", ours: m["analytic/shifted_acc"], paper: "0.5 (chance)" },
        { quantity: "attacked inner points still called inner", ours: m["analytic/attack_success"], paper: "—" },
        { quantity: "attacked points the max-margin oracle calls outer", ours: m["analytic/oracle_outer"], paper: "—" },
      ],
    });
    tables.push({
      title: "Eq. 5's error on clean outer points by dimension, beside the Beta(½, (d−1)/2) tail",
      rows: cfg.outer_dims.map((d) => ({
        d,
        measured: m[`analytic/outer_err@${d}`],
        "closed form": m[`analytic/outer_err_closed@${d}`],
      })),
    });
  }
  if (cfg.parts.includes("firevnet")) {
    tables.push({
      title: "fiRevNet on the spheres (App. B.1: 100% for both classifiers) and its metamers",
      rows: [
        "firevnet/logit_train_acc",
        "firevnet/logit_val_acc",
        "firevnet/nuisance_train_acc",
        "firevnet/nuisance_val_acc",
        "invert/max_err",
        "metamer/logit_match_err",
        "metamer/logit_inner_rate",
        "metamer/adversarial_rate",
        "metamer/nuisance_oracle_agreement",
        "metamer/norm_median",
        "plane/d_outer_acc",
        "plane/dnc_outer_acc",
      ].map((key) => ({ metric: key, value: m[key] ?? null })),
    });
  }
  return tables;
}

/** The spheres experiment as a latentlab experiment. */
export const experiment = defineExperiment({
  name: "spheres-invariance",
  finding: "Excessive invariance: inputs of another class that the classifier cannot tell apart",
  description: "Excessive invariance on the adversarial spheres: Example 6's attack, a dense fiRevNet, metamers",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      dim: 20,
      analytic_points: 2_000,
      train: 2_000,
      val: 1_000,
      epochs: 1,
      batch: 128,
      lr: 1e-3,
      hidden: 16,
      nuisance_hidden: 16,
      nuisance_layers: 2,
      nuisance_epochs: 1,
      metamers: 100,
      plane_side: 20,
      eval_points: 200,
      eval_every: 5,
      log_every: 5,
      checkpoint_every: 10,
    },
    // Our CPU-scale design: 50,000 points × 10 epochs at batch 256; Adam 1e-3 for the short budget (the paper's 1e-4 is
    // the paper preset), a 3 × 256 post-hoc classifier.
    quick: {
      analytic_points: 200_000,
      train: 50_000,
      val: 10_000,
      lr: 1e-3,
      nuisance_hidden: 256,
    },
    paper: {},
  },
  presetLimits: {
    smoke: "d 20, 2,000 points, one epoch of a width-16 net: the pipeline only",
    quick: "50,000 training and 10,000 validation points instead of 500,000 / 100,000, Adam 1e-3 instead of 1e-4, " +
      "a 3 × 256 post-hoc classifier instead of 3 × 1,000, 200,000 analytic points instead of 2M",
    paper: "not run: 500,000 points × 10 epochs (≈ 20,000 steps of batch 256 at ≈ 40 ms on one wasm core: ≈ 15 min) " +
      "and a 3 × 1,000 post-hoc classifier (an estimate from the bench's d-100 step, not measured)",
  },
  targets,
  claims,
  validate(cfg) {
    if (cfg.parts.length === 0) throw new UsageError(`parts must name at least one of: ${PARTS.join(", ")}`);
    if (!(cfg.r1 > 0 && cfg.r1 < cfg.r2)) {
      throw new UsageError(`the radii must satisfy 0 < r1 < r2, got r1 ${cfg.r1}, r2 ${cfg.r2}`);
    }
    for (const key of ["analytic_points", "train", "val"] as const) {
      if (cfg[key] % 2 !== 0) throw new UsageError(`${key} must be even (half per sphere), got ${cfg[key]}`);
    }
    if (cfg.parts.includes("firevnet") && cfg.dim < 3) {
      throw new UsageError(`the fiRevNet needs dim ≥ 3 (2 logits and at least one nuisance), got ${cfg.dim}`);
    }
  },
  async run(ctx, cfg) {
    const metrics: Record<string, number> = {};
    if (cfg.parts.includes("analytic")) {
      Object.assign(metrics, analyticPart(ctx.seed, cfg));
      ctx.log(0, metrics);
    }
    if (cfg.parts.includes("firevnet")) {
      const steps = Math.ceil((cfg.epochs * cfg.train) / cfg.batch);
      const { results } = await runPhases(
        ctx,
        ["firevnet"],
        async (_, __, checkpoints) => ({ result: await firevnetPart(ctx, cfg, checkpoints) }),
        { stride: steps + 1 },
      );
      Object.assign(metrics, results[0]);
    }
    return {
      metrics,
      details: {
        results: resultTables(metrics, cfg),
        deviations: {
          posthoc: "the post-hoc classifier trains nuisance_epochs passes with Adamax, no dropout (not stated)",
          attack: "inner points with ‖x₁..d−1‖ > R₂ cannot exist; analyticShift would set x_d to 0 for them",
        },
      },
    };
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
