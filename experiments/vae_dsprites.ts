/**
 * One VAE-family model on a ground-truth dataset, as in Locatello2019
 * (§2.3: objectives, Table 2 architecture, Table 4a optimizer): trains one
 * method at one hyperparameter value, logs the reconstruction, KL and the
 * method's own terms, saves reconstructions and latent traversals, and
 * scores the mean representation with the disentanglement metrics.
 */
import { type Claim, defineExperiment, runFromCli, type Target } from "../lib/core/experiment.ts";
import { loadDataset } from "../lib/data/registry.ts";
import { scoreVae, type TrainedEncoder } from "../lib/metrics/score.ts";
import { checkDataParallelWorkers, DATA_PARALLEL_CONFIG } from "../lib/train/data_parallel.ts";
import { loadSavedEncoder } from "../lib/train/saved_encoder.ts";
import { trainVae, VAE_CONFIG, VAE_SMOKE_PRESET, type VaeConfig } from "../lib/train/vae.ts";

const SOURCE = "Locatello2019 §2.3, §4; targets: Klindt2021 Table 16";

/**
 * Median scores of the β-VAE on dSprites (Locatello et al. 2020) as Klindt2021's
 * Table 16 copies them, as fractions. The document gives no row for
 * FactorVAE, DIP-VAE, β-TCVAE or AnnealedVAE, so runs of those methods (and
 * on other datasets) have no targets. Its modularity median (0.822) is not
 * one either: an untrained encoder scores 0.654–0.858 on it.
 */
const TABLE_16: Record<string, number> = {
  beta_vae_score: 0.823,
  factor_vae_score: 0.66,
  mig: 0.102,
  dci_disentanglement: 0.186,
  sap: 0.049,
};

/**
 * What trivial encoders score: the untrained conv encoder at step 0, scored by the same code on dSprites at 32×32
 * (seeds 0–2 with the quick preset's scoring, seeds 0–1 with long's; the highest), and chance for the BetaVAE and
 * FactorVAE scores' classifiers over 5 factors. Its FactorVAE score is 0: no latent's s.d. reaches the 0.05 below
 * which the score drops it.
 */
const UNTRAINED = "untrained encoder, step 0 (measured: seeds 0–2 with quick's scoring, 0–1 with long's; highest)";
const NULLS: Record<string, { value: number; model: string }[]> = {
  beta_vae_score: [{ value: 0.2, model: "chance: 1/5 factors" }, { value: 0.367, model: UNTRAINED }],
  factor_vae_score: [{ value: 0.2, model: "chance: 1/5 factors" }, {
    value: 0,
    model: "untrained encoder, step 0 (measured: no active latent)",
  }],
  mig: [{ value: 0.019, model: UNTRAINED }],
  dci_disentanglement: [{ value: 0.021, model: UNTRAINED }],
  sap: [{ value: 0.01, model: UNTRAINED }],
};
// Table 16's medians come without a spread: 0.05 on a [0, 1] score, or half the way to the untrained encoder.
const TOLERANCE: Record<string, [number, string]> = {
  beta_vae_score: [0.05, "rule: 0.05 on a [0, 1] score (Table 16 gives no spread)"],
  factor_vae_score: [0.05, "rule: 0.05 on a [0, 1] score (Table 16 gives no spread)"],
  mig: [0.04, "rule: half the way (0.041) to the untrained encoder (Table 16 gives no spread)"],
  dci_disentanglement: [0.05, "rule: 0.05 on a [0, 1] score (Table 16 gives no spread)"],
  sap: [0.019, "rule: half the way (0.0195) to the untrained encoder (Table 16 gives no spread)"],
};
const targets: Target<VaeConfig>[] = Object.entries(TABLE_16).map(([metric, paper]) => ({
  metric,
  paper,
  source: "Klindt2021 Table 16, β-VAE (i.i.d.) median",
  tolerance: TOLERANCE[metric][0],
  toleranceSource: TOLERANCE[metric][1],
  nulls: NULLS[metric],
  kind: "analogue",
  standIn: "one seed of a β-VAE on a procedural dSprites-like renderer (DeepMind's file where present) at 32×32, " +
    "5,000–10,000 steps, for the median over Locatello et al.'s β-VAE models at 64×64, 300,000 steps",
  direction: "higher",
  appliesTo: (cfg) => cfg.method === "beta_vae" && cfg.dataset === "dsprites",
  // Logged under the method's label every curve_every steps (the interventional scores only at the end).
  curve: (cfg) => `${cfg.method}/${metric}`,
}));

// "TC(sampled) < TC(mean) for β > 1" (Locatello2019 §5.2, Figs. 2–4) is not a claim of one model: an untrained
// encoder has it too (seeds 0–2 on 2,000 samples: TC(mean) 0.74–1.77 nats, TC(sampled) 0.006–0.011).
const claims: Claim<VaeConfig>[] = [];

const CONFIG = { ...VAE_CONFIG, ...DATA_PARALLEL_CONFIG };

/** One VAE-family model on a ground-truth dataset, trained and scored. */
export const experiment = defineExperiment<typeof CONFIG, TrainedEncoder>({
  name: "vae-dsprites",
  finding: "Six VAE objectives on dSprites, scored by the disentanglement metrics",
  description: "One VAE-family model (β-VAE, FactorVAE, DIP-VAE-I/II, β-TCVAE, AnnealedVAE) on dSprites, scored",
  source: SOURCE,
  config: CONFIG,
  presets: {
    smoke: {
      ...VAE_SMOKE_PRESET,
      workers: 1,
      checkpoint_every: 2,
      curve_every: 2,
      curve_samples: 50,
    },
    quick: {
      resolution: 32,
      steps: 5_000,
      lr: 5e-4,
      discriminator_hidden: 256,
      discriminator_layers: 3,
      eval_samples: 2_000,
      score_points: 300,
      log_every: 50,
      media_every: 1_000,
      checkpoint_every: 1_000,
      curve_every: 500,
    },
    // Where quick stops: the same β-VAE at 2× the steps, scored with disentanglement_lib's sample sizes.
    long: {
      resolution: 32,
      steps: 10_000,
      lr: 5e-4,
      // The array metrics train on disentanglement_lib's 10,000 points (the 0.8 split of 12,500), the
      // BetaVAE/FactorVAE scores on 1,000 points; the curves on 5,000 observations (4,000 training points).
      eval_samples: 12_500,
      score_points: 1_000,
      log_every: 100,
      media_every: 2_000,
      checkpoint_every: 1_000,
      curve_every: 1_000,
      curve_samples: 5_000,
    },
    paper: {},
  },
  presetLimits: {
    quick: "5,000 steps at 32×32 against Table 16's 300,000 at 64×64: the β-VAE's scores stay below the published " +
      "medians (their curves say whether they were still rising); the TC claim shows. The array metrics train on " +
      "1,600 points where disentanglement_lib uses 10,000, which lowers DCI (one SlowVAE: 0.056 at 1,600, 0.129 " +
      "at 8,000)",
    long: "10,000 steps at 32×32, one seed, scored on disentanglement_lib's 10,000 points. Measured (5,588 s): " +
      "SAP 0.033 reaches Table 16's median; MIG 0.049 and DCI 0.071 (still rising) and the BetaVAE 0.692 and " +
      "FactorVAE 0.330 scores do not: this seed keeps x and y in a rotated basis (correlations 0.71 and 0.70) from " +
      "the first 1,000 steps on (its modularity 0.835 is no evidence: an untrained encoder scores 0.858 there). " +
      "The β-VAE of slowvae-dsprites long (same β and learning rate, 8,000 steps, another seed) reached 4 of the 5 " +
      "medians (MIG 0.195, DCI 0.203, BetaVAE 0.814, SAP 0.034; FactorVAE 0.556 not). Table 16 gives medians over " +
      "many models, which one seed cannot test; a sweep over seeds can",
  },
  targets,
  claims,
  validate: (cfg) => checkDataParallelWorkers(cfg.workers),
  async run(ctx, cfg) {
    const dataset = loadDataset(cfg.dataset, { size: cfg.resolution });
    const training = {
      label: cfg.method,
      seed: ctx.seed,
      resumed: ctx.resumed,
      checkpoints: true,
      mediaPrefix: "",
      saveAs: "model",
      workers: cfg.workers,
    };
    const { encoder, dispose } = await trainVae(ctx, cfg, dataset, training);
    const { metrics, seconds } = await scoreVae(encoder, dataset, cfg as VaeConfig, ctx.seed);
    dispose();
    return { metrics, details: { metric_seconds: seconds, dataset: dataset.description } };
  },
  load: loadSavedEncoder,
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
