/**
 * The registry of experiments, in the order `deno task list` shows them.
 * Experiments are leaves: this is the one file that imports them.
 *
 * @module
 */
import type { AnyExperiment } from "../lib/core/experiment.ts";
import type { TrainedEncoder } from "../lib/metrics/score.ts";
import { experiment as icaToy } from "./ica_toy.ts";
import { experiment as vaeDsprites } from "./vae_dsprites.ts";
import { experiment as dislibStudy } from "./dislib_study.ts";
import { experiment as slowvaeDsprites } from "./slowvae_dsprites.ts";
import { experiment as slowvaeKitti } from "./slowvae_kitti.ts";
import { experiment as vaeCollapseToy } from "./vae_collapse_toy.ts";
import { experiment as genBenchmark } from "./gen_benchmark.ts";
import { experiment as absMnist } from "./abs_mnist.ts";
import { experiment as noiseTrainMnist } from "./noise_training.ts";
import { experiment as twoPoint } from "./two_point.ts";
import { experiment as collapseToy } from "./collapse_toy.ts";
import { experiment as bnAdapt } from "./bn_adapt.ts";
import { experiment as selfLearning } from "./self_learning.ts";
import { experiment as cccMini } from "./ccc_mini.ts";
import { experiment as clIca } from "./cl_ica.ts";
import { experiment as cebraSynthetic } from "./cebra_synthetic.ts";
import { experiment as cebraPlaceCells } from "./cebra_place_cells.ts";
import { experiment as regclAttribution } from "./regcl_attribution.ts";
import { experiment as vaePca } from "./vae_pca.ts";
import { experiment as vaeManipulation } from "./vae_manipulation.ts";
import { experiment as spheresInvariance } from "./spheres_invariance.ts";
import { experiment as mnistInvariance } from "./mnist_invariance.ts";
import { experiment as poseOod } from "./pose_ood.ts";

/** All registered experiments; `load` gives a trained encoder where an experiment keeps one. */
export const EXPERIMENTS: AnyExperiment<TrainedEncoder>[] = [
  icaToy,
  vaeDsprites,
  dislibStudy,
  slowvaeDsprites,
  slowvaeKitti,
  vaeCollapseToy,
  genBenchmark,
  absMnist,
  noiseTrainMnist,
  twoPoint,
  collapseToy,
  bnAdapt,
  selfLearning,
  cccMini,
  clIca,
  cebraSynthetic,
  cebraPlaceCells,
  regclAttribution,
  vaePca,
  vaeManipulation,
  spheresInvariance,
  mnistInvariance,
  poseOod,
];

/** The experiment called `name`, or undefined. */
export function findExperiment(name: string): AnyExperiment<TrainedEncoder> | undefined {
  return EXPERIMENTS.find((e) => e.name === name);
}
