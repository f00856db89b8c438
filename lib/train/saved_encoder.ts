/**
 * Trained encoders kept by a run (models/<name>/ of the run store) and read
 * back for `eval --run` and `export-codes`: the encoder's weights and what
 * rebuilds it (disentanglement_lib's architecture, image size, latents), its
 * dataset, its seed and the scoring settings of the run.
 *
 * @module
 */
import type { RunContext } from "../core/experiment.ts";
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import { readRunInfo } from "../core/run_files.ts";
import { loadSavedModel, savedModels } from "../core/run_checkpoints.ts";
import { type DatasetName, loadDataset } from "../data/registry.ts";
import type { ScoreConfig, TrainedEncoder } from "../metrics/score.ts";
import { type Architecture, type ImageSize, vaeNetworks } from "../models/dislib_vae.ts";
import type { Encoder } from "../models/vae.ts";

/** What rebuilds a saved encoder and scores it. */
export interface SavedEncoderInfo {
  /** Encoder architecture. */
  architecture: Architecture;
  /** Input side in pixels. */
  size: ImageSize;
  /** Input channels. */
  channels: number;
  /** Latent dimensions. */
  latents: number;
  /** The registered dataset it was trained on, whose observations it scores. */
  dataset: DatasetName;
  /** The seed its scores were drawn with. */
  seed: number;
  /** The scoring settings its scores were computed with. */
  scoring: ScoreConfig;
}

/** Keeps `encoder` as models/<name>/ of the run; returns the name used. */
export function saveEncoder(ctx: RunContext, name: string, encoder: Encoder, info: SavedEncoderInfo): Promise<string> {
  return ctx.saveModel(name, encoder.params.entries("encoder/"), info);
}

/**
 * A saved encoder of a completed run, with its dataset: `model` names one
 * when the run kept several. Throws UsageError naming what is wrong (the
 * run not completed, no models, an unknown name, several and none chosen).
 */
export function loadSavedEncoder(dir: string, model?: string): TrainedEncoder {
  const info = readRunInfo(dir);
  if (info.status !== "completed") throw new UsageError(`${dir}: the run is ${info.status}, not completed`);
  const names = savedModels(dir);
  if (names.length === 0) throw new UsageError(`${dir}: the run kept no trained model (models/ is empty)`);
  if (model === undefined && names.length > 1) {
    throw new UsageError(`${dir} kept ${names.length} models; choose one with --model: ${names.join(", ")}`);
  }
  const name = model ?? names[0];
  if (!names.includes(name)) throw new UsageError(`${dir}: no model "${name}"; the run kept ${names.join(", ")}`);
  const saved = loadSavedModel(dir, name);
  const spec = saved.info as SavedEncoderInfo;
  // The weights are loaded over the fresh ones; the rng only has to build the shapes.
  const { encoder, decoder } = vaeNetworks(new Rng(0), spec.architecture, {
    size: spec.size,
    channels: spec.channels,
    latents: spec.latents,
  });
  decoder.params.dispose();
  encoder.params.load(saved.arrays, "encoder/");
  return {
    encoder,
    dataset: loadDataset(spec.dataset, { size: spec.size }),
    scoring: spec.scoring,
    seed: spec.seed,
    dispose: () => encoder.params.dispose(),
  };
}
