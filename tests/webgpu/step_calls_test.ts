/**
 * What a conv VAE training step asks of WebGPU, counted on whatever adapter the machine has (the counts are the
 * same on a GPU and on a software adapter): launches within the goal of 120 per step (TF.js's own kernels: ~450),
 * no buffer created and no bind group made once the pool and the caches are warm, nothing read back between the
 * reads the caller asks for.
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { webgpuTest } from "./adapter.ts";
import { resolveConfig } from "../../lib/core/config.ts";
import { countsPerStep, installWebgpuCounters, webgpuCounts } from "../../lib/core/kernels/webgpu_counters.ts";
import { Rng } from "../../lib/core/rng.ts";
import { VAE_CONFIG, vaeReplica } from "../../lib/train/vae.ts";

/** A β-VAE Adam step of the 64×64 conv VAE at batch 4 (launches do not depend on the batch), fresh noise per step. */
const BATCH = 4;

function convVaeStep() {
  const cfg = resolveConfig(
    VAE_CONFIG,
    { method: "beta_vae", value: 1, architecture: "conv", resolution: 64, batch: BATCH, latents: 10 },
    new Map(),
  );
  const replica = vaeReplica({ cfg, channels: 1 });
  const rng = new Rng(0);
  const x = tf.tensor4d(Float32Array.from({ length: BATCH * 64 * 64 }, () => rng.uniform() < 0.3 ? 1 : 0), [
    BATCH,
    64,
    64,
    1,
  ]);
  const optimizer = tf.train.adam(cfg.lr, 0.9, 0.999, 1e-8);
  return {
    step: () =>
      optimizer.minimize(
        () => {
          const eps = tf.tensor2d(rng.normalArray(BATCH * cfg.latents), [BATCH, cfg.latents]);
          return replica.loss({ x, eps }, 0).total;
        },
        true,
        replica.variables,
      )!,
    dispose() {
      tf.dispose([x, ...replica.variables]);
      optimizer.dispose();
    },
  };
}

webgpuTest(
  "a conv VAE step launches at most 120 kernels and, once warm, creates no buffer and no bind group, its rate changing",
  async () => {
    await selectBackend("webgpu");
    installWebgpuCounters();
    const trainer = convVaeStep();
    const losses: number[] = [];
    // Warm-up: the pool grows while the submits fall at different points of the step; 24 steps settle it here.
    for (let i = 0; i < 24; i++) {
      const loss = trainer.step();
      if (i % 8 === 7) losses.push((await loss.data())[0]);
      loss.dispose();
    }
    const tensors = tf.memory().numTensors;
    const steps = 8;
    const before = webgpuCounts();
    let last: tf.Scalar | null = null;
    for (let i = 0; i < steps; i++) {
      last?.dispose();
      last = trainer.step();
    }
    const beforeRead = webgpuCounts();
    await last!.data();
    last!.dispose();
    const perStep = countsPerStep(before, beforeRead, steps);
    assert(perStep.dispatches <= 120, `${perStep.dispatches} launches per step`);
    assertEquals(perStep.bufferCreations, 0, "buffers created per step");
    assertEquals(perStep.bindGroups, 0, "bind groups made per step");
    assertEquals(perStep.readbacks, 0, "reads per step before the caller's read");
    assertEquals(countsPerStep(beforeRead, webgpuCounts(), 1).readbacks, 1, "the caller's read");
    assertEquals(tf.memory().numTensors, tensors, "tensors held after the steps");
    assert(losses.every(Number.isFinite), `losses ${losses}`);
    trainer.dispose();
  },
);
