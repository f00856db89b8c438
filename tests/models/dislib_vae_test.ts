import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { sampleBatch } from "../../lib/data/ground_truth.ts";
import { DATASET_NAMES, loadDataset } from "../../lib/data/registry.ts";
import { convDecoder, convEncoder, mlpDecoder, mlpEncoder, vaeNetworks } from "../../lib/models/dislib_vae.ts";
import { type Decoder, type Encoder, posterior } from "../../lib/models/vae.ts";
import { vaeLoss } from "../../lib/train/vae_objectives.ts";

await selectBackend("wasm");

function batch(rng: Rng, n: number, size: number): Float32Array {
  return Float32Array.from({ length: n * size * size }, () => rng.uniform() < 0.3 ? 1 : 0);
}

/** The β-VAE loss exactly as training computes it. */
function trainingLoss(encoder: Encoder, decoder: Decoder, x: tf.Tensor4D, noise: tf.Tensor2D): tf.Scalar {
  return vaeLoss(decoder, x, posterior(encoder, x, noise), { method: "beta_vae", value: 1, step: 0 }).total;
}

Deno.test("conv VAE gradients of a whole step agree between wasm and cpu (64×64 and 32×32)", async () => {
  for (const size of [64, 32] as const) {
    const options = { size, channels: 1, latents: 10 };
    const rng = new Rng(31);
    const encoder = convEncoder(rng, options), decoder = convDecoder(rng, options);
    // One image runs the same kernels as a batch; the cpu backend's filter gradients (a TensorBuffer.get per product)
    // are what take time, in proportion to the images. Batches of the kernels are compared in conv2d_backprop_test.ts.
    const x = batch(rng, 1, size), noise = rng.normalArray(10);
    const variables = [...encoder.params.list(), ...decoder.params.list()];
    const gradients = async (backend: string) => {
      await tf.setBackend(backend);
      const { value, grads } = tf.variableGrads(
        () => trainingLoss(encoder, decoder, tf.tensor4d(x, [1, size, size, 1]), tf.tensor2d(noise, [1, 10])),
        variables,
      );
      const out = await Promise.all(variables.map((v) => grads[v.name].data()));
      tf.dispose([value, ...Object.values(grads)]);
      return out;
    };
    const cpu = await gradients("cpu"), wasm = await gradients("wasm");
    assertEquals(cpu.length, size === 64 ? 26 : 22);
    cpu.forEach((expected, k) => {
      let scale = 1, diff = 0;
      for (let i = 0; i < expected.length; i++) {
        scale = Math.max(scale, Math.abs(expected[i]));
        diff = Math.max(diff, Math.abs(expected[i] - wasm[k][i]));
      }
      assert(diff <= 1e-4 * scale, `${size}: ${variables[k].name} diff ${diff} at scale ${scale}`);
    });
    encoder.params.dispose();
    decoder.params.dispose();
  }
});

Deno.test("conv and MLP VAEs train on wasm: the loss falls and tensors stay flat", async () => {
  for (const kind of ["conv", "mlp"] as const) {
    const options = { size: 32 as const, channels: 1, latents: 10 };
    const rng = new Rng(32);
    const encoder = kind === "conv" ? convEncoder(rng, options) : mlpEncoder(rng, options);
    const decoder = kind === "conv" ? convDecoder(rng, options) : mlpDecoder(rng, options);
    const x = tf.tensor4d(batch(rng, 8, 32), [8, 32, 32, 1]);
    const optimizer = tf.train.adam(1e-3);
    const variables = [...encoder.params.list(), ...decoder.params.list()];
    const losses: number[] = [];
    let tensorsAfterWarmup = 0;
    // The conv VAE's loss passes 0.92 of its first value near step 16 and levels off at 0.9 by step 20; the MLP's
    // passes it by step 5 and is near 0.53 at step 10.
    const steps = kind === "conv" ? 30 : 10;
    for (let step = 0; step < steps; step++) {
      const noise = tf.tensor2d(rng.normalArray(80), [8, 10]);
      const loss = optimizer.minimize(() => trainingLoss(encoder, decoder, x, noise), true, variables)!;
      losses.push((await loss.data())[0]);
      tf.dispose([loss, noise]);
      if (step === 1) tensorsAfterWarmup = tf.memory().numTensors;
    }
    assertEquals(tf.memory().numTensors, tensorsAfterWarmup);
    assert(losses.at(-1)! < 0.92 * losses[0], `${kind}: ${losses[0]} → ${losses.at(-1)}`);
    encoder.params.dispose();
    decoder.params.dispose();
    optimizer.dispose();
    x.dispose();
  }
});

/** Channels of each dataset's images. */
const CHANNELS: Record<typeof DATASET_NAMES[number], number> = {
  "dsprites": 1,
  "dsprites-rot": 1,
  "color-dsprites": 3,
  "noisy-dsprites": 3,
  "scream-dsprites": 3,
  "shapes3d": 3,
};

Deno.test("every dataset × resolution × architecture builds and runs a forward pass on its images", async () => {
  const before = tf.memory().numTensors;
  // Datasets that share an image shape share networks: building the MLPs dominates this test's time.
  const networks = new Map<string, { encoder: Encoder; decoder: Decoder }>();
  for (const name of DATASET_NAMES) {
    for (const size of [64, 32] as const) {
      const dataset = loadDataset(name, { size });
      assertEquals(dataset.imageShape, [size, size, CHANNELS[name]], `${name} at ${size}`);
      const { observations } = sampleBatch(dataset, 2, new Rng(3));
      for (const architecture of ["conv", "mlp"] as const) {
        const label = `${name} ${size} ${architecture}`;
        const key = `${architecture} ${size} ${CHANNELS[name]}`;
        if (!networks.has(key)) {
          networks.set(key, vaeNetworks(new Rng(4), architecture, { size, channels: CHANNELS[name], latents: 10 }));
        }
        const { encoder, decoder } = networks.get(key)!;
        const [mean, logVar, logits, loss] = tf.tidy(() => {
          const x = tf.tensor4d(observations.values, [2, ...observations.shape]);
          const q = posterior(encoder, x, tf.zeros([2, 10]));
          const logits = decoder.decode(q.z);
          const loss = vaeLoss(decoder, x, q, { method: "beta_vae", value: 1, step: 0 }).total;
          return [q.mean, q.logVar, logits, loss];
        });
        assertEquals(mean.shape, [2, 10], label);
        assertEquals(logVar.shape, [2, 10], label);
        assertEquals(logits.shape, [2, size, size, CHANNELS[name]], label);
        const value = (await loss.data())[0];
        assert(Number.isFinite(value) && value > 0, `${label}: loss ${value}`);
        tf.dispose([mean, logVar, logits, loss]);
      }
    }
  }
  assertEquals(networks.size, 8);
  for (const { encoder, decoder } of networks.values()) {
    encoder.params.dispose();
    decoder.params.dispose();
  }
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("shapes3d at 32×32 is its 64×64 rendering area-averaged over 2×2 blocks", () => {
  const factors = { values: Int32Array.from([1, 4, 7, 3, 2, 9]), n: 1 };
  const full = loadDataset("shapes3d", { size: 64 }).observations(factors, new Rng(0)).values;
  const small = loadDataset("shapes3d", { size: 32 }).observations(factors, new Rng(0)).values;
  assertEquals(small.length, 32 * 32 * 3);
  for (let y = 0; y < 32; y++) {
    for (let x = 0; x < 32; x++) {
      for (let c = 0; c < 3; c++) {
        const at = (row: number, col: number) => full[(row * 64 + col) * 3 + c];
        const block = at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) + at(2 * y + 1, 2 * x + 1);
        assertAlmostEquals(small[(y * 32 + x) * 3 + c], block / 4, 1e-6);
      }
    }
  }
});

Deno.test("an encoder given images of another size or channel count names both shapes", () => {
  for (const architecture of ["conv", "mlp"] as const) {
    const { encoder, decoder } = vaeNetworks(new Rng(5), architecture, { size: 32, channels: 3, latents: 10 });
    const x = tf.zeros([8, 64, 64, 3]) as tf.Tensor4D;
    assertThrows(() => encoder.encode(x), RangeError, "[batch, 32, 32, 3] images, got [8,64,64,3]");
    x.dispose();
    encoder.params.dispose();
    decoder.params.dispose();
  }
});
