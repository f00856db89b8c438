/**
 * The models of one setting of a pair study (slowvae-dsprites,
 * slowvae-kitti), one per seed, as the driver in pair_study.ts plans them.
 *
 * @module
 */
import type { PairModelConfig, PairSource } from "./pair_model.ts";
import type { PlannedModel } from "./pair_study.ts";

/** `seeds` models of the setting `name`, seeds `first`, `first + 1`, …, each trained with `config` on `source`. */
export function settingSeeds(
  name: string,
  first: number,
  seeds: number,
  source: PairSource,
  config: PairModelConfig,
): PlannedModel[] {
  return Array.from({ length: seeds }, (_, i) => ({ method: name, value: 0, seed: first + i, source, config }));
}
