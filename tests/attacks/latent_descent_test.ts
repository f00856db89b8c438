import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { randomAffine } from "../models/fixtures/affine_decoder.ts";
import { predictions } from "../../lib/attacks/attack.ts";
import { latentDescent } from "../../lib/attacks/latent_descent.ts";
import { Abs, type ClassGenerator } from "../../lib/models/abs.ts";

await selectBackend("wasm");

/**
 * A two-class ABS over linear class models G_c(z) = a_c + B_c z (orthonormal B_c, 2 latents) with
 * the exact posterior mode as encoder mean, μ_c(x) = B_cᵀ(x − a_c)/1.5: fast, and its inference
 * converges, so the test is about the attack.
 */
function linearClass(rng: Rng): ClassGenerator & { offset: Float32Array; basis: Float32Array } {
  const affine = randomAffine(rng, 2);
  const offset = Float32Array.from(affine.offset), columns = affine.columns;
  const basis = Float32Array.from(columns.flatMap((c) => [...c]));
  const bt = tf.tensor2d(basis, [2, 784]), a = tf.tensor2d(offset, [1, 784]);
  const decode = (z: tf.Tensor2D) => tf.add(a, tf.matMul(z, bt)) as tf.Tensor2D;
  return {
    offset,
    basis,
    latents: 2,
    pixels: 784,
    decode,
    decodeVjp: (z) => ({ images: decode(z), vjp: (g) => tf.matMul(g, bt, false, true) as tf.Tensor2D }),
    encodeMean: (x) => tf.div(tf.matMul(tf.sub(tf.reshape(x, [x.shape[0], 784]), a), bt, false, true), 1.5),
    dispose: () => tf.dispose([bt, a]),
  };
}

const rng = new Rng(1);
const generators = [linearClass(rng), linearClass(rng)];
const abs = await Abs.fromGenerators(generators, { prototypes: 20, steps: 20, seed: 2 });
const labels = Int32Array.from([0, 1, 0, 1]);
const x = new Float32Array(4 * 784);
labels.forEach((y, i) => {
  const { offset, basis } = generators[y];
  const u = rng.normalArray(2, 0.5);
  for (let p = 0; p < 784; p++) {
    const v = offset[p] + u[0] * basis[p] + u[1] * basis[784 + p] + 0.01 * rng.normal();
    x[i * 784 + p] = Math.min(1, Math.max(0, v));
  }
});
const shape: [number, number, number] = [28, 28, 1];

function l2(a: Float32Array, b: Float32Array, i: number): number {
  let s = 0;
  for (let p = i * 784; p < (i + 1) * 784; p++) s += (a[p] - b[p]) ** 2;
  return Math.sqrt(s);
}

Deno.test("Latent Descent finds adversarials on a two-class ABS; the bisections shrink them; tensors flat", async () => {
  assertEquals([...await predictions(abs, x, 4, shape)], [...labels], "the clean strokes are classified right");
  const batch = { x, n: 4, shape, labels };
  const before = tf.memory().numTensors;
  const plain = await latentDescent(abs, { stepSize: 0.05, bisections: 0 }).perturb(abs, batch, null, rng);
  const refined = await latentDescent(abs, { stepSize: 0.05 }).perturb(abs, batch, null, rng);
  assertEquals(tf.memory().numTensors, before);
  for (const adversarial of [plain, refined]) {
    const predicted = await predictions(abs, adversarial, 4, shape);
    predicted.forEach((p, i) => assert(p !== labels[i], `digit ${i} still classified ${p}`));
    assert(adversarial.every((v) => v >= 0 && v <= 1));
  }
  for (let i = 0; i < 4; i++) {
    const [a, b] = [l2(plain, x, i), l2(refined, x, i)];
    assert(b < a && b > 0, `digit ${i}: ${b} after bisection vs ${a}`);
  }
  // The final bisection leaves the adversarial on the boundary along the segment from the original:
  // 0.5% closer to the original is classified right again.
  const inside = refined.map((v, p) => x[p] + 0.995 * (v - x[p]));
  assertEquals([...await predictions(abs, inside, 4, shape)], [...labels]);
  // Misclassified inputs come back unchanged; with one step the rest fail and stay non-adversarial.
  const wrong = { x, n: 4, shape, labels: Int32Array.from([1, 1, 1, 1]) };
  const one = await latentDescent(abs, { stepSize: 0.01, maxIterations: 1 }).perturb(abs, wrong, null, rng);
  assertEquals(l2(one, x, 0), 0);
  assertEquals(l2(one, x, 2), 0);
  assertEquals([...await predictions(abs, one, 4, shape)].filter((_, i) => i % 2 === 1), [1, 1]);
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("Latent Descent is an L2 minimization attack without gradients and checks its options", () => {
  const attack = latentDescent(abs);
  assertEquals([attack.name, attack.distance, attack.kind, attack.needsGradient], [
    "latent_descent",
    "l2",
    "minimization",
    false,
  ]);
  assertThrows(() => latentDescent(abs, { stepSize: 0 }), UsageError);
  assertThrows(() => latentDescent(abs, { maxIterations: 0 }), UsageError);
  assertThrows(() => latentDescent(abs, { bisections: -1 }), UsageError);
});

globalThis.addEventListener("unload", () => {
  abs.dispose();
  generators.forEach((g) => g.dispose?.());
});
