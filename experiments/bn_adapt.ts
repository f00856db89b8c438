/**
 * Batch-norm adaptation on corrupted MNIST digits (Schneider2023 Ch. 2, App. A; Schneider et
 * al. 2020): a BatchNorm CNN trained on clean digits is evaluated on the 15 common corruptions with its source
 * statistics ("none"), with the source prior mixed into the statistics of each shuffled group of n test images
 * (eq. 2.3 / A.8: partial n 8 N 0, ad hoc n 1 N 16), and with "full" statistics of all images of a (corruption,
 * severity), estimated stage by stage. Errors are relative mCE against a reference MLP 784-256-10 trained alongside
 * (the stand-in for AlexNet, Schneider2023 eq. 2.1). Also: the n × N grid of Table A.7 on the dev corruptions, a
 * mixed-corruption control (Table 2.4), a clean control, the GroupNorm twin (Table 2.3) and the W₂ distance between
 * source and full target statistics against the unadapted error (App. A).
 */
import { choices, type ConfigOf, flag, integer, integers, real, reals } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { type Claim, defineExperiment, runFromCli, type Target } from "../lib/core/experiment.ts";
import { gridKey } from "../lib/adapt/bn_adapt_study.ts";
import { SOURCE_EPOCHS_CONFIG } from "../lib/adapt/source_model.ts";
import { COMMON_CORRUPTIONS, CORRUPTION_NAMES } from "../lib/data/corruptions.ts";
import { checkMnistParts, MNIST_PARTS_CONFIG } from "../lib/data/mnist.ts";
import { runBnAdapt } from "../lib/studies/bn_adapt.ts";
import { WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";

const SOURCE = "Schneider2023 Ch. 2 (Tables 2.1, 2.3, 2.4, A.7; App. A)";

/**
 * The dev corruptions of Schneider2023 Ch. 3 (speckle, Gaussian blur, spatter); saturate leaves grey pixels as they
 * are.
 */
const DEV_CORRUPTIONS = ["speckle_noise", "gaussian_blur", "spatter"] as const;

const config = {
  corruptions: choices([...COMMON_CORRUPTIONS], CORRUPTION_NAMES, "test corruptions (mCE, targets, claims)"),
  dev_corruptions: choices(
    [...DEV_CORRUPTIONS],
    CORRUPTION_NAMES,
    "dev corruptions of the n × N grid (saturate is the identity on grey digits)",
  ),
  severities: integers([1, 3, 5], "severities of every corruption", { min: 1, max: 5 }),
  ...MNIST_PARTS_CONFIG,
  digits: integer(1_000, "test digits per (corruption, severity): the first of the test part", {
    min: 1,
    max: 10_000,
  }),
  epochs: SOURCE_EPOCHS_CONFIG,
  lr: real(1e-3, "source training Adam learning rate", { min: 0, max: 10 }),
  batch: integer(128, "source training minibatch", { min: 2, max: 4_096 }),
  partial_n: integer(8, "partial adaptation: images per statistics group (Table 2.1: 8)", { min: 1, max: 10_000 }),
  partial_N: real(0, "partial adaptation: source prior pseudo-count N (Table 2.1: 0)", { min: 0, max: 1e9 }),
  adhoc_n: integer(1, "ad hoc adaptation: images per group (Table A.7 row n = 1)", { min: 1, max: 10_000 }),
  adhoc_N: real(16, "ad hoc adaptation: source prior N (Table A.7: best N 16 at n = 1)", { min: 0, max: 1e9 }),
  grid_n: integers([1, 4, 16, 64, 256], "grid on the dev corruptions: images per group", { min: 1, max: 10_000 }),
  grid_N: reals([0, 1, 4, 16, 64, 256], "grid on the dev corruptions: finite source prior N", { min: 0, max: 1e9 }),
  grid_source: flag(true, "add N = ∞ (source statistics, the unadapted model) to the grid"),
  mixed_digits: integer(3_000, "mixed control: images drawn from all (test corruption, severity, digit) (0: none)", {
    min: 0,
    max: 10_000_000,
  }),
  clean: flag(true, "clean control: the clean test digits under each mode"),
  ...WORKERS_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

// ---------------------------------------------------------------------------------------------
// Targets and claims

/** What stands in for Table 2.1's models and data. */
const STAND_IN = "a two-conv BN CNN on 28-px MNIST digits under the 15 common corruptions for ResNet-50 on " +
  "ImageNet-C; mCE relative to an MLP 784-256-10 for AlexNet";
/** A gain 1 − mCE_x/mCE_none of no effect: the adapted statistics are the source's. */
const NO_GAIN = [{ value: 0, model: "no adaptation (source statistics): gain 0" }];

const targets: Target<Cfg>[] = [
  {
    metric: "bn/rel_gain_full",
    paper: 0.189,
    source: "Schneider2023 Table 2.1 (vanilla ResNet-50 mCE 76.7 → 62.2 with full adaptation); here " +
      "1 − mCE_full/mCE_none over the test corruptions, mCE relative to this run's MLP",
    tolerance: 0.09,
    toleranceSource: "rule: under half the way to the null gain 0 (0.0945); Table 2.1's BN models gain 0.115 " +
      "(ANT+SIN) to 0.219 (AugMix)",
    nulls: NO_GAIN,
    kind: "analogue",
    standIn: STAND_IN,
    direction: "match",
  },
  {
    metric: "bn/rel_gain_partial8",
    paper: 0.153,
    source: "Schneider2023 Table 2.1 (vanilla ResNet-50 mCE 76.7 → 65.0 with n = 8, N = 0); here " +
      "1 − mCE_partial/mCE_none over the test corruptions, mCE relative to this run's MLP",
    tolerance: 0.075,
    toleranceSource: "rule: under half the way to the null gain 0 (0.0765); Table 2.1's BN models gain 0.085 " +
      "(DAug+AM+ResNeXt) to 0.153 (vanilla) at n = 8",
    nulls: NO_GAIN,
    kind: "analogue",
    standIn: STAND_IN,
    direction: "match",
    appliesTo: (cfg) => cfg.partial_n === 8 && cfg.partial_N === 0,
  },
];

const has = (m: Record<string, number>, ...keys: string[]) => keys.every((k) => m[k] !== undefined);

/**
 * Claims compare relative mCEs of one run on the same images, each with a relative margin of at most half the gap
 * in the thesis row it cites, so that a tie or a hair's difference does not hold a claim.
 */
const claims: Claim<Cfg>[] = [
  {
    text: "relative mCE: full adaptation ≥ 2 % below partial (n 8, N 0), partial ≥ 7 % below no adaptation",
    source: "Schneider2023 Table 2.1 row vanilla ResNet-50 (62.2 < 65.0 < 76.7: 4 % and 15 % lower)",
    holds: (m) =>
      has(m, "bn/mce_full", "bn/mce_partial", "bn/mce_none")
        ? m["bn/mce_full"] <= 0.98 * m["bn/mce_partial"] && m["bn/mce_partial"] <= 0.93 * m["bn/mce_none"]
        : undefined,
  },
  {
    text: "n = 1 on the dev corruptions: N 0 is ≥ 5 % worse than no adaptation, some N ∈ [4, 64] ≥ 3 % better",
    source: "Schneider2023 Table A.7 row n = 1 (N 1 117.76, 54 % above the unadapted 76.7; N 16 " +
      "71.39, 7 % below) and App. A (N 0 needs n ≈ 8 to beat the baseline)",
    holds: (m, cfg) => {
      const middle = cfg.grid_N.filter((N) => N >= 4 && N <= 64);
      const keys = [gridKey(1, 0), ...middle.map((N) => gridKey(1, N))];
      if (middle.length === 0 || !has(m, "bn/dev_mce_none", ...keys)) return undefined;
      const none = m["bn/dev_mce_none"];
      return m[gridKey(1, 0)] >= 1.05 * none && middle.some((N) => m[gridKey(1, N)] <= 0.97 * none);
    },
  },
  {
    // The argmax over a ×4 grid only places the optimum within a grid step: the finding is the U shape.
    text: "n = 1 on the dev corruptions: over the grid's finite N ≥ 1 the relative mCE is lowest at an N ∈ [4, 64], " +
      "≥ 3 % below both the smallest and the largest of those N (an optimum inside the grid)",
    source: "Schneider2023 Table A.7 row n = 1 (lowest 71.39 at N 16: 39 % below N 1's 117.76, " +
      "6 % below N 256's 75.99)",
    holds: (m, cfg) => {
      const finite = cfg.grid_N.filter((N) => N >= 1 && Number.isFinite(N)).sort((a, b) => a - b);
      const best = m["bn/best_N_n1"];
      const [lo, hi] = [finite[0], finite[finite.length - 1]];
      if (finite.length < 3 || best === undefined || !has(m, gridKey(1, lo), gridKey(1, hi))) return undefined;
      const at = m[gridKey(1, best)];
      return best >= 4 && best <= 64 && at <= 0.97 * m[gridKey(1, lo)] && at <= 0.97 * m[gridKey(1, hi)];
    },
  },
  {
    text: "on all test corruptions shuffled together, full adaptation gains less than ¼ of its per-corruption " +
      "gain, which is > 0.01",
    source: "Schneider2023 Table 2.4 rows BN w/o and w/ adapt, column Mixed IN-C top-1 (61.1 → 60.9, " +
      "a gain of 0.2 against 11.5 per corruption, Table 2.1 top-1 60.8 → 49.3)",
    holds: (m) =>
      has(m, "bn/mixed/gain", "bn/per_corruption_gain")
        ? m["bn/per_corruption_gain"] > 0.01 && m["bn/mixed/gain"] < m["bn/per_corruption_gain"] / 4
        : undefined,
  },
  {
    text: "the GroupNorm twin's relative mCE lies between BN adapted (full) and BN unadapted: ≥ 8 % above the " +
      "first and ≥ 2.5 % below the second",
    source: "Schneider2023 Table 2.3 row ResNet-50 (BN+adapt 62.2 < GN 72.4 < BN 76.7: 16 % above, " +
      "5.6 % below)",
    holds: (m) =>
      has(m, "bn/mce_full", "gn/mce", "bn/mce_none")
        ? m["gn/mce"] >= 1.08 * m["bn/mce_full"] && m["gn/mce"] <= 0.975 * m["bn/mce_none"]
        : undefined,
  },
  {
    text: "W₂ between source and target BN statistics correlates with the unadapted error over the test cells, " +
      "Pearson r > 0.3 (2 s.e. of r at the quick preset's 45 cells)",
    source: "Schneider2023 Ch. 2 (App. A, Table A.6: error predicted from W₂ within 1–2 % per " +
      "corruption)",
    holds: (m) => has(m, "bn/r_w2_error") ? m["bn/r_w2_error"] > 0.3 : undefined,
  },
];

export const experiment = defineExperiment({
  name: "bn-adapt",
  finding: "Test-time batch-norm statistics cut the corruption error",
  description: "BN adaptation on corrupted MNIST: source prior n × N, full statistics, mixed/clean controls, GN, W₂",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      corruptions: ["gaussian_noise", "contrast"],
      dev_corruptions: ["speckle_noise"],
      severities: [3],
      train_digits: 128,
      test_digits: 64,
      digits: 64,
      epochs: 1,
      batch: 64,
      grid_n: [1, 16],
      grid_N: [0, 4, 16],
      mixed_digits: 64,
    },
    // Source models on a stratified eighth of the training file (shared with self-learning and ccc-mini's quick).
    quick: { train_digits: 8_000, workers: 2 },
    paper: {
      severities: [1, 2, 3, 4, 5],
      digits: 2_000,
      grid_n: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
      grid_N: [0, 1, 2, 4, 8, 16, 32, 64, 128, 256],
      mixed_digits: 150_000,
    },
  },
  presetLimits: {
    smoke: "plumbing only: 128 training digits, one epoch, 64 test digits, two corruptions at severity 3, one dev " +
      "corruption and a 2 × 4 grid; its numbers say nothing about the findings",
    quick: "8,000 of the 60,000 official training digits, test digits from the official 10,000; a two-conv BN " +
      "CNN, its GN twin and an MLP (3 epochs, Adam 1e-3) instead of ResNet-50, Fixup/GN ResNets and AlexNet; 15 corruptions at severities 1, 3, 5 (the " +
      "CIFAR-10-C constants, frost procedural) on the same 1,000 digits; the n × N grid on the 3 dev corruptions " +
      "(saturate is the identity on grey digits); mixed control on 3,000 drawn images; one seed. Table 2.3's " +
      "ordering (GN between BN and BN adapted) does not appear on digits: the GN twin (seed 0: relative mCE 0.393) " +
      "beats BN with full statistics (0.403), better on the noises, defocus and zoom blur, elastic, pixelate and " +
      "JPEG, worse on glass blur, snow, frost, fog and brightness, and more accurate on clean digits (error 0.022 " +
      "vs 0.028)",
    paper: "not run: severities 1–5 on 2,000 digits, n 1…512 × N 0…256 and ∞ on the dev corruptions, the mixed " +
      "control on all 150,000 images; the thesis' 5 seeds are 5 runs (--seed 0 … 4, e.g. deno task sweep). " +
      "Estimated from the quick run (≈ 0.58 s of one wasm core per forward pass of 1,000 digits, ≈ 1.5 s per 1,000 " +
      "corrupted digits): ≈ 4,800 forward passes of 1,000 digits and 300,000 corrupted digits, ≈ 54 core-minutes, so " +
      "≈ 30 min per seed with 2 workers plus ≈ 5 min of source training, ≈ 3 h for 5 seeds on 2 cores; with WebGPU " +
      "on an NVIDIA H100 (bench: 22.4 ms per source-mode forward of 256 digits) the forward passes take ≈ 7 min " +
      "and the corruptions (CPU) dominate, ≈ 20 min per seed, ≈ 1.7 h for 5 seeds",
  },
  targets,
  claims,
  validate(cfg) {
    checkMnistParts(cfg, ["digits"]);
    if (!(cfg.lr > 0)) throw new UsageError(`lr must be > 0, got ${cfg.lr}`);
    for (const key of ["partial_n", "adhoc_n"] as const) {
      if (cfg[key] > cfg.digits) {
        throw new UsageError(`${key} = ${cfg[key]}: a group of n images cannot exceed digits = ${cfg.digits}`);
      }
    }
    const tooLarge = cfg.grid_n.find((n) => n > cfg.digits);
    if (tooLarge !== undefined) {
      throw new UsageError(`grid_n ${tooLarge}: a group of n images cannot exceed digits = ${cfg.digits}`);
    }
    const triples = cfg.corruptions.length * cfg.severities.length * cfg.digits;
    if (cfg.mixed_digits > triples) {
      throw new UsageError(
        `mixed_digits = ${cfg.mixed_digits}: allowed ≤ corruptions × severities × digits = ${triples}`,
      );
    }
  },
  run: (ctx, cfg) => runBnAdapt(ctx, cfg),
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
