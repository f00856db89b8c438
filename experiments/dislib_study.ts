/**
 * The study of Locatello et al. 2019 (002_e32ada0b3d473046.md §5–6) at
 * small scale: methods × hyperparameter values × seeds on one dataset, every
 * model scored by every metric, then the study's analyses — reconstruction
 * per setting (§5.2), Gaussian TC of the sampled vs the mean representation
 * (§5.3, Figs. 2–4), the Spearman rank correlation between metrics (§5.4,
 * Fig. 6) and between unsupervised scores and metrics (§5.6, Fig. 9), the
 * share of variance due to method, value and seed (§5.5, Fig. 7), and the
 * Table 1 selection statistic (§5.6).
 */
import { choices, type ConfigOf, integer, integers } from "../lib/core/config.ts";
import { type Claim, defineExperiment, type RunContext, runFromCli, type Target } from "../lib/core/experiment.ts";
import { loadDataset } from "../lib/data/registry.ts";
import { scoreVae, type TrainedEncoder } from "../lib/metrics/score.ts";
import { analyseStudy, STUDY_METRICS } from "../lib/metrics/vae_study.ts";
import { planWorker, runModelPlan } from "../lib/train/model_plan.ts";
import { WORKERS_CONFIG } from "../lib/train/parallel_phases.ts";
import { loadSavedEncoder } from "../lib/train/saved_encoder.ts";
import { trainVae, VAE_CONFIG, VAE_SMOKE_PRESET, type VaeConfig, vaeStudyPlan } from "../lib/train/vae.ts";
import { VAE_METHODS, type VaeMethod } from "../lib/train/vae_objectives.ts";

const SOURCE = "002_e32ada0b3d473046.md §2 (methods, Table 3 grid), §5.2–5.6 (findings), Table 1";

const { method: _method, value: _value, ...training } = VAE_CONFIG;

const config = {
  methods: choices([...VAE_METHODS], VAE_METHODS, "objectives to train (Locatello et al. 2019 §2.3)"),
  grid: integers(
    [0, 1, 2, 3, 4, 5],
    "positions in each method's Table 3 grid (0–5): 0,4 = β 1 and 8, c_max 5 and 75, γ 10 and 50, λ_od 1 and 20",
    { min: 0, max: 5 },
  ),
  seeds: integer(50, "seeds per setting: --seed, --seed + 1, …", { min: 2, max: 1000 }),
  selection_draws: integer(10_000, "Monte-Carlo draws of the Table 1 statistic", { min: 1, max: 10_000_000 }),
  ...training,
  ...WORKERS_CONFIG,
};
type Cfg = ConfigOf<typeof config>;

const targets: Target<Cfg>[] = [
  {
    metric: "selection/same_metric",
    paper: 0.773,
    source: "002_e32ada0b3d473046.md Table 1, same data set, same metric",
    tolerance: 0.1,
    direction: "match",
  },
  {
    metric: "selection/different_metric",
    paper: 0.518,
    source: "002_e32ada0b3d473046.md Table 1, same data set, random different metric",
    tolerance: 0.1,
    direction: "match",
  },
];

const claims: Claim<Cfg>[] = [
  {
    text: "BetaVAE, FactorVAE and MIG are rank-correlated across models (mean pairwise Spearman > 0.5)",
    source: "002_e32ada0b3d473046.md §5.4 (Figs. 5, 6)",
    holds: (m) => {
      const pairs = [
        m["spearman/beta_vae_score~factor_vae_score"],
        m["spearman/beta_vae_score~mig"],
        m["spearman/factor_vae_score~mig"],
      ];
      return pairs.some((v) => v === undefined) ? undefined : pairs.reduce((a, b) => a + b, 0) / 3 > 0.5;
    },
  },
  {
    text: "for β-VAE, stronger regularization lowers TC of the sampled and raises TC of the mean representation",
    source: "002_e32ada0b3d473046.md §5.3 (Figs. 2, 3)",
    holds: (m) => {
      const sampled = m["tc_trend/beta_vae/sampled"], mean = m["tc_trend/beta_vae/mean"];
      return sampled === undefined || mean === undefined ? undefined : sampled < 0 && mean > 0;
    },
  },
  {
    text: "most models have TC(mean) > TC(sampled)",
    source: "002_e32ada0b3d473046.md §5.3 (Fig. 4)",
    holds: (m) => m["tc_mean_above_sampled"] === undefined ? undefined : m["tc_mean_above_sampled"] > 0.5,
  },
  {
    text: "the hyperparameter value explains more of each metric's variance than the objective does",
    source: "002_e32ada0b3d473046.md §5.5 (Fig. 7)",
    holds: (m) => {
      const gaps = STUDY_METRICS.map((k) => m[`value_share/${k}`] - m[`method_share/${k}`]);
      return gaps.some((g) => !Number.isFinite(g)) ? undefined : gaps.filter((g) => g > 0).length > gaps.length / 2;
    },
  },
  {
    text: "choosing a setting by a metric on one seed beats a random model more often by that metric than by another",
    source: "002_e32ada0b3d473046.md Table 1 (77.3% vs 51.8%)",
    holds: (m) => m["selection/same_metric"] > m["selection/different_metric"],
  },
];

/** The study's plan and how each model is trained and scored (the same in every worker). */
function dislibStudy(runCtx: RunContext, cfg: Cfg) {
  const dataset = loadDataset(cfg.dataset, { size: cfg.resolution });
  return {
    dataset,
    plan: vaeStudyPlan(cfg, runCtx.seed),
    run: async (ctx: RunContext, { method, value, seed }: { method: VaeMethod; value: number; seed: number }) => {
      const modelCfg: VaeConfig = { ...cfg, method, value };
      const { encoder, last, dispose } = await trainVae(ctx, modelCfg, dataset, {
        label: `${method}@${value}/seed${seed}`,
        seed,
        resumed: null,
        checkpoints: false,
        mediaPrefix: `${method}@${value}-seed${seed}-`,
        saveAs: `${method}@${value}-seed${seed}`,
      });
      const { metrics } = await scoreVae(encoder, dataset, modelCfg, seed);
      dispose();
      return {
        metrics: {
          ...metrics,
          reconstruction: last.reconstruction,
          kl: last.kl,
          elbo: -(last.reconstruction + last.kl),
        },
      };
    },
  };
}

/** Model `index` of the study, as a worker trains it. */
export const workerModel = planWorker(dislibStudy);

/** Many VAE-family models on one dataset, and the study's analyses of them. */
export const experiment = defineExperiment<typeof config, TrainedEncoder>({
  name: "dislib-study",
  description: "Locatello et al. 2019 at small scale: methods × values × seeds, metric agreement, TC, selection",
  source: SOURCE,
  config,
  presets: {
    smoke: {
      methods: ["beta_vae", "dip_vae_i"],
      grid: [0, 4],
      seeds: 2,
      ...VAE_SMOKE_PRESET,
      selection_draws: 500,
    },
    quick: {
      grid: [0, 4],
      seeds: 3,
      resolution: 32,
      steps: 400,
      lr: 5e-4,
      anneal_steps: 133,
      // The 6 × 1,000 discriminator would cost 5× a VAE step on a CPU; 3 × 256 is the CPU tier's deviation.
      discriminator_hidden: 256,
      discriminator_layers: 3,
      eval_samples: 1_000,
      score_points: 100,
      log_every: 50,
      media_every: 400,
      workers: 2,
    },
    // Where quick stops: its 12 settings with 2 seeds (24 models) at 3.75× the steps, scored on 10× the points, so
    // that the interventional scores are not mostly sampling noise.
    long: {
      grid: [0, 4],
      seeds: 2,
      resolution: 32,
      steps: 1_500,
      lr: 5e-4,
      anneal_steps: 500,
      discriminator_hidden: 256,
      discriminator_layers: 3,
      eval_samples: 5_000,
      score_points: 1_000,
      log_every: 100,
      media_every: 1_500,
      workers: 2,
    },
    paper: {},
  },
  presetLimits: {
    quick: "400 steps per model: the scores barely separate from an untrained encoder's, so rank correlations " +
      "between metrics and the selection statistic are mostly noise at this budget",
    long: "1,500 steps per model, 2 seeds, BetaVAE/FactorVAE scores on 1,000 points. Measured (ended 16,444 s " +
      "after it started, pauses between attempts included, 2 workers on 2 cores shared with other runs): BetaVAE, FactorVAE and MIG are " +
      "rank-correlated (Spearman 0.608, 0.382, 0.563, mean 0.518 > 0.5), both TC claims hold, and a metric picks " +
      "its own best setting more often than another's (0.580 vs 0.575), but by far less than Table 1's 0.773 vs " +
      "0.518; the hyperparameter value explains more variance than the objective for MIG, DCI and SAP only (3 of 6)",
  },
  targets,
  claims,
  load: loadSavedEncoder,
  async run(ctx, cfg) {
    const study = dislibStudy(ctx, cfg);
    const { models } = await runModelPlan(ctx, study.plan, (entry) => study.run(ctx, entry), {
      module: import.meta.url,
      exportName: "workerModel",
      cfg,
      workers: cfg.workers,
    });
    const dataset = study.dataset;
    const { metrics, tables } = analyseStudy(models, cfg.selection_draws, ctx.seed);
    return { metrics, details: { dataset: dataset.description, models, ...tables } };
  },
});

if (import.meta.main) await runFromCli(experiment, Deno.args);
