import * as tf from "@tensorflow/tfjs";
import { selectBackend } from "./lib/core/backend.ts";
import { Rng } from "./lib/core/rng.ts";
import { betaVaeLoss, convDecoder, convEncoder } from "./lib/models/dislib_vae.ts";
await selectBackend(Deno.args[0] as any ?? "wasm");
const size = Number(Deno.args[1] ?? 64) as 32 | 64;
const rng = new Rng(0);
const opts = { size, channels: 1, latents: 10 };
const enc = convEncoder(rng, opts), dec = convDecoder(rng, opts);
const vars = [...enc.params.list(), ...dec.params.list()];
const x = tf.tensor4d(Float32Array.from({ length: 64 * size * size }, () => rng.uniform() < 0.2 ? 1 : 0), [64, size, size, 1]);
const opt = tf.train.adam(1e-4);
const times: number[] = [];
for (let i = 0; i < 8; i++) {
  const t0 = performance.now();
  const noise = tf.randomNormal([64, 10], 0, 1, "float32", i) as tf.Tensor2D;
  const l = opt.minimize(() => betaVaeLoss(enc, dec, x, noise).total, true, vars)!;
  await l.data(); l.dispose(); noise.dispose();
  times.push(performance.now() - t0);
}
console.log(size, times.map((t) => t.toFixed(0)).join(" "), "rss MB", (Deno.memoryUsage().rss / 1e6).toFixed(0));
const noise = tf.randomNormal([64, 10], 0, 1, "float32", 1) as tf.Tensor2D;
const prof = await tf.profile(() => { const g = tf.variableGrads(() => betaVaeLoss(enc, dec, x, noise).total, vars); tf.dispose(g.grads); g.value.dispose(); });
const byKernel = new Map<string, number>();
for (const k of prof.kernels) byKernel.set(k.name, (byKernel.get(k.name) ?? 0) + (k.kernelTimeMs as number));
console.log([...byKernel].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", "));
