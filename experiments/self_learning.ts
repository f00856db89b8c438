/**
 * Self-learning for test-time adaptation on corrupted MNIST digits (Rusak et al.; Schneider2023 Ch. 3, App. B,
 * Tables 3.4, 3.8, 3.10, 3.13, 3.14, B.3).
 *
 * A BN CNN trained on clean digits (lib/adapt/source_model.ts, cached) meets each (corruption, severity) set on its
 * own (episodic: the source weights and a fresh optimizer every time). BN normalises each batch of 128 by its own
 * statistics, and one SGD step (momentum 0.9) per batch trains the BN affine parameters γ, β on an unsupervised loss
 * of that batch's forward; the predictions are those of the same forward, before the update (Tent's online
 * protocol). Over several epochs the digits are reshuffled each epoch and the reported error is the online error of
 * the last epoch.
 *
 * - ENT (eq. 3.3): softmax entropy, gradient through both factors.
 * - RPL (eq. 3.4): generalised cross-entropy (1 − p_i^q)/q to the argmax i of the same forward, q 0.8.
 * - hard PL (eq. 3.1): cross-entropy to the argmax where max p > threshold; soft PL (eq. 3.5 with f_t = sg(f)).
 *
 * The learning rate and the number of epochs of ENT and RPL are chosen on the held-out dev corruptions (speckle
 * noise, Gaussian blur, spatter; saturate is the identity on grey digits) by their relative mCE, then used on the
 * test corruptions. mCE is relative to a reference MLP 784-256-10 trained on the same digits (errors summed over
 * severities per corruption, as Hendrycks' CE against AlexNet). The run also measures the ECE of the online
 * predictions (Table 3.13), ENT with all parameters or the last layer instead of γ, β (Table 3.10), and the
 * clean-digit error of the model adapted on severity-5 data (forgetting, Table 3.14).
 *
 * Every (corruption, severity) set is a phase: the dev sets, then the test sets, each checkpointed as it finishes
 * and run `workers` at a time.
 */
import { whenMeasured } from "../lib/core/claims.ts";
import { choice, choices, type ConfigOf, integer, integers, real, reals } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { type Claim, defineExperiment, runFromCli, type Target } from "../lib/core/experiment.ts";
import { COMMON_CORRUPTIONS, CORRUPTION_NAMES, type CorruptionName, type Severity } from "../lib/data/corruptions.ts";
import { checkMnistParts, MNIST_PARTS_CONFIG } from "../lib/data/mnist.ts";
import { SOURCE_EPOCHS_CONFIG, SOURCE_SMOKE_DIGITS } from "../lib/adapt/source_model.ts";
import { ADAPT_PARAMS } from "../lib/adapt/self_learning.ts";
import {
  ablationKey,
  addSetAndForgettingMetrics,
  devKey,
  type DevResult,
  devSelection,
  loadResources,
  logDevCurves,
  logRunningTest,
  mceKey,
  partRunner,
  type Phase,
  sorted,
  summaryTable,
  testMethods,
  testMetrics,
  type TestResult,
} from "../lib/studies/self_learning.ts";
import { WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";

const SOURCE = "Schneider2023 Ch. 3, App. B (Tables 3.4, 3.8, 3.10, 3.13, 3.14, B.3)";

/** The dev corruptions of the thesis (IN-C holdout) without saturate, which leaves grey images as they are. */
const DEV_DEFAULT: CorruptionName[] = ["speckle_noise", "gaussian_blur", "spatter"];
/**
 * The quick preset's 10 of the 15: every family (noise 3, blur 2, weather 1, digital 4), without the four slowest
 * to compute on 2 cores (zoom blur, elastic transform, defocus blur, snow) and the procedural frost stand-in. Every
 * corruption costs the same adaptation steps, so 10 instead of 15 is what keeps the budget.
 */
const QUICK_CORRUPTIONS = ("gaussian_noise shot_noise impulse_noise glass_blur motion_blur fog brightness contrast " +
  "pixelate jpeg_compression").split(" ") as CorruptionName[];

const config = {
  ...MNIST_PARTS_CONFIG,
  source_epochs: SOURCE_EPOCHS_CONFIG,
  corruptions: choices(
    [...COMMON_CORRUPTIONS],
    CORRUPTION_NAMES,
    "test corruptions (the thesis reports on the 15 common ones)",
  ),
  dev_corruptions: choices(DEV_DEFAULT, CORRUPTION_NAMES, "dev corruptions the learning rate and epochs are chosen on"),
  severities: integers([1, 2, 3, 4, 5], "severities of every dev and test corruption", { min: 1, max: 5 }),
  ablation_severities: integers(
    [1, 2, 3, 4, 5],
    "severities (of `severities`) at which hard PL, soft PL and ENT on other parameters also run",
    { min: 1, max: 5 },
  ),
  table: choice("cifar", ["cifar", "imagenet"], "corruption constants (cifar: make_cifar_c.py, for 28-px digits)"),
  digits: integer(2_000, "test digits per (corruption, severity); also the clean digits of the forgetting check", {
    min: 2,
    max: 10_000,
  }),
  dev_digits: integer(2_000, "test digits per dev (corruption, severity)", { min: 2, max: 10_000 }),
  batch: integer(128, "images per adaptation step (thesis: 128 for the ResNet-50)", { min: 2, max: 4_096 }),
  lrs: reals([1e-4, 1e-3, 1e-2], "SGD learning rates of the dev sweep (> 0)"),
  max_epochs: integer(5, "epochs of the dev sweep; each of 1..max_epochs is a candidate", { min: 1, max: 100 }),
  momentum: real(0.9, "SGD momentum (Tent's setting)", { min: 0, max: 0.999 }),
  q: real(0.8, "GCE exponent of RPL, in (0, 1] (Table B.7: 0.8)"),
  thresholds: reals([0, 0.9], "confidence thresholds of hard PL, each in [0, 1) (Table 3.8)"),
  tau_t: real(1, "teacher temperature τt of soft PL (> 0)"),
  tau_s: real(1, "student temperature τs of soft PL (> 0)"),
  ent_params: choices(["affine", "all", "last"], ADAPT_PARAMS, "parameters ENT adapts on the test sets (Table 3.10)"),
  ...WORKERS_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

// ---------------------------------------------------------------------------------------------
// Targets and claims (Tables 3.4, B.3, 3.10, 3.13, 3.14)

// Whether ENT or RPL is better flips between rows (Table 3.1 IG-3.5B: ENT 40.8 < RPL 40.9; Table 3.2: ENT lower in
// 10 of 11 small-scale rows; Table 3.7: RPL on ImageNet, ENT on CIFAR-10-C): no target or claim orders them.
const targets: Target<Cfg>[] = ([["ent", 0.170, 51.6, 0.085], ["rpl", 0.188, 50.5, 0.09]] as const).map((
  [method, paper, mce, tolerance],
) => ({
  metric: `sl/${method}_gain_over_bn`,
  paper,
  source: `Schneider2023 Table 3.4 (ResNet-50 IN-C mCE: BN adapt 62.2 → ${method.toUpperCase()} ` +
    `${mce}); here 1 − mCE_${method.toUpperCase()}/mCE_BN on the test corruptions of the digits`,
  tolerance,
  toleranceSource: `rule: under half the way to the null gain 0 (${paper / 2}); seeds: 0.04 mCE points (Table B.15)`,
  nulls: [
    { value: 0, model: `${method.toUpperCase()} = BN adaptation (its affine steps change nothing)` },
    {
      value: -0.356,
      model: "no adaptation (measured on the quick preset: 1 − 0.693/0.511; Table 3.4: 1 − 76.7/62.2 = −0.233)",
    },
  ],
  kind: "analogue" as const,
  standIn: "a two-conv BN CNN on corrupted MNIST digits for ResNet-50 on ImageNet-C; mCE relative to an MLP " +
    "784-256-10 for AlexNet",
  direction: "match" as const,
}));

/** Each claim's margin is at most half the gap of the rows it cites, so that a tie does not hold it. */
const claims: Claim<Cfg>[] = [
  {
    text: "ENT and RPL each ≥ 8 % below BN adaptation's mCE, BN adaptation ≥ 9 % below no adaptation",
    source: "Schneider2023 Table 3.4 row ResNet-50 (76.7 → BN 62.2 → ENT 51.6, RPL 50.5: 19 %, 17 %, " +
      "19 % lower); Table 3.3 ResNeXt101 vanilla, IG-3.5B (BN 56.8, 51.8 → RPL 43.2, 40.9; Table 3.1 ENT 44.3, 40.8)",
    holds: (m) =>
      whenMeasured(
        m,
        ["ent", "rpl", "bn", "none"].map(mceKey),
        (e, r, b, n) => Math.max(e, r) <= 0.92 * b && b <= 0.91 * n,
      ),
  },
  {
    text: "ENT at lr 1e-2 collapses: its dev mCE after 5 epochs is ≥ 10 % above that after 1 and above no adaptation's",
    source: "Schneider2023 Table B.3 row ENT 1e-2 (72.5 at epoch 1 → 131.2 at epoch 5; no adaptation " +
      "69.5, Table 3.8)",
    holds: (m) =>
      whenMeasured(
        m,
        [devKey("ent", 1e-2, 5), devKey("ent", 1e-2, 1), "dev/none/mce"],
        (f, o, n) => f >= 1.1 * o && f > n,
      ),
  },
  {
    text: "ENT on the BN affine parameters: mCE ≥ 2.5 % below ENT on all parameters and ≥ 9 % below the last layer",
    source: "Schneider2023 Table 3.10 rows affine, full, last layer (dev mCE 48.9, 51.5, 60.2: 5 % " +
      "and 19 % lower; 48.9 is RPL's dev mCE, Table B.15; here ENT)",
    holds: (m) =>
      whenMeasured(
        m,
        ["ent", "ent_all", "ent_last"].map(ablationKey),
        (a, all, l) => a <= 0.975 * all && a <= 0.91 * l,
      ),
  },
  {
    text: "self-learning raises the ECE: ENT's and RPL's each ≥ 0.04 above no adaptation's",
    source: "Schneider2023 Table 3.13 rows w/o and adapted (ECE 2.3 → 10.6 %, 8.3 points higher)",
    holds: (m) =>
      whenMeasured(m, ["test/ent/ece", "test/rpl/ece", "test/none/ece"], (e, r, none) => Math.min(e, r) >= none + 0.04),
  },
  {
    text: "forgetting is mild: the clean-digit error after adapting on severity-5 data rises by < 0.1 (ENT and RPL)",
    source: "Schneider2023 Table 3.14 severity 5 (clean accuracy 74.2 → RPL 69.8, ENT 68.0: 4.4 and " +
      "6.2 points lower)",
    holds: (m) => whenMeasured(m, ["forgetting/ent/rise", "forgetting/rpl/rise"], (e, r) => Math.max(e, r) < 0.1),
  },
];

export const experiment = defineExperiment({
  name: "self-learning",
  finding: "Entropy and robust pseudo-labelling beat BN adaptation",
  description: "Test-time self-learning (ENT, RPL, hard/soft PL) on BN affine parameters vs BN adaptation, " +
    "corrupted MNIST (Table 3.4)",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      ...SOURCE_SMOKE_DIGITS,
      digits: 64,
      dev_digits: 64,
      batch: 32,
      corruptions: ["gaussian_noise", "contrast"],
      dev_corruptions: ["speckle_noise"],
      severities: [5],
      ablation_severities: [5],
      lrs: [1e-2],
      max_epochs: 1,
    },
    quick: {
      // Source models on a stratified eighth of the training file (shared with bn-adapt and ccc-mini's quick).
      train_digits: 8_000,
      corruptions: QUICK_CORRUPTIONS,
      severities: [3, 5],
      ablation_severities: [3, 5],
      digits: 1_000,
      dev_digits: 1_000,
      workers: 2,
    },
    paper: {},
  },
  presetLimits: {
    smoke: "a source model of 512 digits, sets of 64 test digits in batches of 32, one dev corruption and lr, one " +
      "epoch, two test corruptions at severity 5: the orderings are not expected",
    quick: "10 of the 15 common corruptions (noise 3, blur 2, weather 1, digital 4; zoom blur, elastic transform, " +
      "defocus blur, snow and the procedural frost left out for time) × severities 3 and 5 × 1,000 digits; dev " +
      "sweep on 3 dev corruptions × severities 3, 5; a small BN CNN on 8,000 of the 60,000 official MNIST training " +
      "digits (test digits from the official 10,000) instead of a ResNet-50 on ImageNet-C; mCE relative to an MLP 784-256-10 instead of AlexNet; CIFAR-10-C constants for 28-px digits. " +
      "Measured 564 s on 2 cores (2 workers). After BN adaptation the CNN is confident (entropy ≈ 0.1 nat per " +
      "digit): at lr ≤ 1e-2 the steps move γ, β too little to change predictions, so ENT and RPL end within 0.001 " +
      "of BN on the same batches (control/*); their 0.011 gain over BN is the second epoch's reshuffle, which the " +
      "dev sweep picks. With --lrs 1e-2,5e-2,1e-1,1 (outside the issue's grid; 984 s) the sweep picks lr 1: RPL " +
      "gains 0.090 over BN, ENT -0.006 (it overshoots at severity 5), hard PL at threshold 0.9 beats 0",
    paper: "the thesis' protocol at digit scale: 15 corruptions × 5 severities × 2,000 digits, dev sweep on 3 dev " +
      "corruptions × 5 severities; not run. At the quick run's rate (≈ 0.29 s of one core per adaptation step of " +
      "128 digits) ≈ 24,000 steps: ≈ 2 h on one core, ≈ 1 h with --workers 2 if the sweep again picks 2 epochs " +
      "(≈ 2.5× more if it picks 5)",
  },
  targets,
  claims,
  validate(cfg) {
    checkMnistParts(cfg, ["digits", "dev_digits"]);
    if (!(cfg.q > 0 && cfg.q <= 1)) throw new UsageError(`q must lie in (0, 1], got ${cfg.q}`);
    const badLr = cfg.lrs.find((lr) => !(lr > 0) || !Number.isFinite(lr));
    if (badLr !== undefined) throw new UsageError(`lrs must be finite numbers > 0, got ${badLr}`);
    const badThreshold = cfg.thresholds.find((t) => !(t >= 0 && t < 1));
    if (badThreshold !== undefined) throw new UsageError(`thresholds must lie in [0, 1), got ${badThreshold}`);
    for (const key of ["tau_t", "tau_s"] as const) {
      if (!(cfg[key] > 0) || !Number.isFinite(cfg[key])) {
        throw new UsageError(`${key} must be a finite number > 0, got ${cfg[key]}`);
      }
    }
    const outside = cfg.ablation_severities.filter((s) => !cfg.severities.includes(s));
    if (outside.length) {
      throw new UsageError(
        `ablation_severities ${outside.join(", ")} are not among severities ${cfg.severities.join(", ")}`,
      );
    }
  },
  async run(ctx, cfg) {
    const severities = sorted(cfg.severities) as Severity[];
    // Loaded (and trained, if not cached) here first, so that workers only read the cache.
    const r = await loadResources(ctx, cfg);
    try {
      for (const loaded of [r.source, r.reference]) {
        const how = loaded.fromCache ? "from the cache" : `trained in ${loaded.trainSeconds.toFixed(1)} s`;
        console.error(`source model ${loaded.key}: ${how}`);
      }
      const runPart = partRunner(ctx, cfg, r);
      // Dev sweep, then the choice of lr and epochs per loss.
      const devPhases: Phase[] = cfg.dev_corruptions.flatMap((corruption) =>
        severities.map((severity) => ({ kind: "dev" as const, corruption, severity }))
      );
      const dev = await runPart("dev", 0, devPhases) as Record<string, DevResult>;
      const selection = devSelection(cfg, dev);
      logDevCurves(ctx, cfg, dev, selection.metrics);

      // Test: every method on every set, each from the source model.
      const testPhases: Phase[] = cfg.corruptions.flatMap((corruption) =>
        severities.map((severity) => ({ kind: "test" as const, corruption, severity, chosen: selection.chosen }))
      );
      const test = await runPart("test", devPhases.length, testPhases) as Record<string, TestResult>;
      logRunningTest(ctx, cfg, test);

      const metrics: Record<string, number> = { ...selection.metrics, ...testMetrics(cfg, test, cfg.corruptions) };
      await addSetAndForgettingMetrics(ctx, cfg, r, test, metrics);
      console.log(summaryTable(cfg, metrics, selection.chosen));
      return {
        metrics,
        details: {
          chosen: selection.chosen,
          methods: testMethods(cfg).map((m) => ({
            name: m.name,
            params: m.params,
            settings_from: m.settings,
            lr: selection.chosen[m.settings].lr,
            epochs: selection.chosen[m.settings].epochs,
            severities: m.ablation ? sorted(cfg.ablation_severities) : severities,
          })),
          dev_corruptions: cfg.dev_corruptions,
          test_corruptions: cfg.corruptions,
          severities,
          source_models: { bn: r.source.key, mlp: r.reference.key },
          protocol: [
            "episodic: each (corruption, severity) set starts from the source weights and a fresh SGD-momentum " +
            "optimizer (Tent's `episodic` reset)",
            "online: each batch's predictions come from the forward that adapts on it (before the step); with " +
            "several epochs the digits are reshuffled each epoch and the reported error is the last epoch's online " +
            "error (Tent's convention; the thesis' gce.py counts the online predictions of all epochs together)",
            "BN in batch mode (biased variance) under every method; the BN baseline is that forward without a " +
            "step, on the first epoch's shuffled batches (= ENT with lr 0), not BN adaptation on the whole set; " +
            "control/* repeats it on the batches of each loss's last epoch, since a reshuffle alone changes the " +
            "BN error (dev/bn/epoch*/mce)",
            "teacher: the same forward without gradient (instant update, as RPL in Table 3.9)",
            "hard PL and soft PL use RPL's dev-chosen lr and epochs; ENT on all parameters or the last layer uses " +
            "ENT's (the thesis tunes each)",
            "mCE relative to the reference MLP 784-256-10 (source weights, no adaptation) on the same digits: CE_c = " +
            "Σ_s E_{s,c} / Σ_s E^MLP_{s,c}; the thesis divides by AlexNet's",
            "ECE with 15 equal-width confidence bins (the thesis gives no binning)",
            "forgetting: the model adapted on each severity-5 set classifies the clean digits with BN on batch " +
            "statistics, against the source model's clean error (source statistics)",
            "saturate is left out of the dev corruptions: HSV saturation of grey digits is the identity",
          ],
        },
      };
    } finally {
      r.dispose();
    }
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
