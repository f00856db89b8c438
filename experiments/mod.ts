/**
 * Every experiment of latentlab, in the order `deno task list` shows them.
 *
 * @module
 */
import type { AnyExperiment } from "../lib/core/experiment.ts";
import { experiment as icaToy } from "./ica_toy.ts";
import { experiment as vaeDsprites } from "./vae_dsprites.ts";
import { experiment as dislibStudy } from "./dislib_study.ts";
import { experiment as slowvaeDsprites } from "./slowvae_dsprites.ts";
import { experiment as slowvaeKitti } from "./slowvae_kitti.ts";
import { experiment as vaeCollapseToy } from "./vae_collapse_toy.ts";

/** All registered experiments. */
export const EXPERIMENTS: AnyExperiment[] = [
  icaToy,
  vaeDsprites,
  dislibStudy,
  slowvaeDsprites,
  slowvaeKitti,
  vaeCollapseToy,
];

/** The experiment called `name`, or undefined. */
export function findExperiment(name: string): AnyExperiment | undefined {
  return EXPERIMENTS.find((e) => e.name === name);
}
