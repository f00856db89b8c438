/**
 * Trained encoders kept by a run (models/<name>/ of the run store) and read
 * back for `eval --run` and `export-codes`: the encoder's weights and what
 * rebuilds it (disentanglement_lib's architecture, image size, latents), its
 * dataset, its seed and the scoring settings of the run.
 *
 * @module
 */
import { join } from "node:path";
import type { RunContext } from "../core/experiment.ts";
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import { isObject, readRunInfo } from "../core/run_files.ts";
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
  // Checked against its manifest: a file unlike its hash, truncated or non-finite is refused, naming it.
  const saved = loadSavedModel(dir, name);
  const folder = join(dir, "models", name);
  const spec = saved.info as SavedEncoderInfo;
  if (!isObject(spec) || !isObject(spec.scoring) || !Number.isSafeInteger(spec.seed)) {
    throw new UsageError(`saved model ${folder}: state.json does not describe an encoder`);
  }
  let networks;
  try {
    // The weights are loaded over the fresh ones; the rng only has to build the shapes.
    networks = vaeNetworks(new Rng(0), spec.architecture, {
      size: spec.size,
      channels: spec.channels,
      latents: spec.latents,
    });
  } catch (error) {
    throw new UsageError(
      `saved model ${folder}: state.json does not describe an encoder (${(error as Error).message})`,
    );
  }
  const { encoder, decoder } = networks;
  decoder.params.dispose();
  try {
    encoder.params.load(saved.arrays, "encoder/");
  } catch (error) {
    // A model saved before manifests, whose arrays do not fit the encoder its state.json describes.
    encoder.params.dispose();
    throw new UsageError(`saved model ${folder}: its arrays do not fit its encoder (${(error as Error).message})`);
  }
  return {
    encoder,
    dataset: loadDataset(spec.dataset, { size: spec.size }),
    scoring: spec.scoring,
    seed: spec.seed,
    dispose: () => encoder.params.dispose(),
  };
}
