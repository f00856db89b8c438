/**
 * The disentanglement_lib VAEs: `conv-vae-64`, `conv-vae-32` and `mlp-vae-64` are one Adam step of the β-VAE (β 1,
 * batch 64, binary images, 10 latents) as lib/train/vae.ts trains it, its replica's loss (`vaeReplica`, the same
 * the data-parallel workers run); `conv-encoder-infer` is the conv encoder's inference on 256 images. Each beside
 * the same network in PyTorch (bench/torch_reference.py), which reports its parameter count: a mismatch is printed,
 * since it means the two networks differ.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { resolveConfig } from "../../lib/core/config.ts";
import type { Rng } from "../../lib/core/rng.ts";
import { convEncoder } from "../../lib/models/dislib_vae.ts";
import { VAE_CONFIG, type VaeConfig, vaeReplica } from "../../lib/train/vae.ts";
import { binaryImages } from "../harness/checks.ts";
import type { ModelName } from "../harness/names.ts";
import type { Workload } from "../harness/rounds.ts";

/** Images per VAE step. */
export const VAE_BATCH = 64;

/** The training config of a bench VAE: β-VAE with β 1, batch {@linkcode VAE_BATCH}, 10 latents. */
export function vaeBenchConfig(size: 32 | 64, kind: "conv" | "mlp"): VaeConfig {
  return resolveConfig(
    VAE_CONFIG,
    { method: "beta_vae", value: 1, architecture: kind, resolution: size, batch: VAE_BATCH, latents: 10 },
    new Map(),
  );
}

/**
 * A β-VAE training step on {@linkcode VAE_BATCH} fixed binary images with fresh posterior noise per step: the loss of
 * lib/train/vae.ts's replica and an Adam step at the config's rate, as training takes it.
 */
export function vaeStep(rng: Rng, size: 32 | 64, kind: "conv" | "mlp") {
  const cfg = vaeBenchConfig(size, kind);
  const replica = vaeReplica({ cfg, channels: 1 });
  const x = binaryImages(rng, VAE_BATCH, size);
  const optimizer = tf.train.adam(cfg.lr, 0.9, 0.999, 1e-8);
  return {
    parameters: replica.variables.reduce((n, v) => n + v.size, 0),
    /** One Adam step; returns the loss (the caller disposes it). */
    minimize(): tf.Scalar {
      return optimizer.minimize(
        () => {
          const eps = tf.tensor2d(rng.normalArray(VAE_BATCH * cfg.latents), [VAE_BATCH, cfg.latents]);
          return replica.loss({ x, eps }, 0).total;
        },
        true,
        replica.variables,
      )!;
    },
    dispose() {
      replica.variables.forEach((v) => v.dispose());
      optimizer.dispose();
      x.dispose();
    },
  };
}

function vaeWorkload(name: ModelName, size: 32 | 64, kind: "conv" | "mlp"): Workload {
  return {
    name,
    batch: VAE_BATCH,
    build(rng) {
      const trainer = vaeStep(rng, size, kind);
      return {
        parameters: trainer.parameters,
        async step() {
          const loss = trainer.minimize();
          await loss.data();
          loss.dispose();
        },
        record: () => trainer.minimize(),
        dispose: trainer.dispose,
      };
    },
  };
}

/** The three VAE training steps, in the order they are timed. */
export const VAE_WORKLOADS: Workload[] = [
  vaeWorkload("conv-vae-64", 64, "conv"),
  vaeWorkload("conv-vae-32", 32, "conv"),
  vaeWorkload("mlp-vae-64", 64, "mlp"),
];

/** `conv-encoder-infer`: the 64×64 conv encoder's means and log-variances of 256 binary images, read back. */
export const ENCODER_INFERENCE_WORKLOAD: Workload = {
  name: "conv-encoder-infer",
  batch: 256,
  build(rng) {
    const encoder = convEncoder(rng, { size: 64, channels: 1, latents: 10 });
    const x = binaryImages(rng, 256, 64);
    return {
      parameters: encoder.params.count(),
      async step() {
        const { mean, logVar } = tf.tidy(() => encoder.encode(x));
        await mean.data();
        tf.dispose([mean, logVar]);
      },
      dispose() {
        encoder.params.dispose();
        x.dispose();
      },
    };
  },
};
