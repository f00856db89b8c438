import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { betaVaeLoss, convDecoder, convEncoder, mlpDecoder, mlpEncoder } from "../../lib/models/dislib_vae.ts";

await selectBackend("wasm");

function batch(rng: Rng, n: number, size: number): Float32Array {
  return Float32Array.from({ length: n * size * size }, () => rng.uniform() < 0.3 ? 1 : 0);
}

Deno.test("conv VAE gradients of a whole step agree between wasm and cpu (64×64 and 32×32)", async () => {
  for (const size of [64, 32] as const) {
    const options = { size, channels: 1, latents: 10 };
    const rng = new Rng(31);
    const encoder = convEncoder(rng, options), decoder = convDecoder(rng, options);
    const x = batch(rng, 4, size), noise = rng.normalArray(40);
    const variables = [...encoder.params.list(), ...decoder.params.list()];
    const gradients = async (backend: string) => {
      await tf.setBackend(backend);
      const { value, grads } = tf.variableGrads(
        () => betaVaeLoss(encoder, decoder, tf.tensor4d(x, [4, size, size, 1]), tf.tensor2d(noise, [4, 10])).total,
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
    const x = tf.tensor4d(batch(rng, 16, 32), [16, 32, 32, 1]);
    const optimizer = tf.train.adam(1e-3);
    const variables = [...encoder.params.list(), ...decoder.params.list()];
    const losses: number[] = [];
    let tensorsAfterWarmup = 0;
    for (let step = 0; step < 30; step++) {
      const noise = tf.tensor2d(rng.normalArray(160), [16, 10]);
      const loss = optimizer.minimize(() => betaVaeLoss(encoder, decoder, x, noise).total, true, variables)!;
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
