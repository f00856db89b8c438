import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertRejects } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { randomAffine } from "./fixtures/affine_decoder.ts";
import { Abs, type ClassGenerator, classGenerator, gaussianPrototypes, projectToBall } from "../../lib/models/abs.ts";
import { type ClassVae, classVae, trainClassVae } from "../../lib/models/abs_vae.ts";

await selectBackend("wasm");

/** tests/models/fixtures/reference_abs.json, written by make_abs_reference.py. */
const reference: {
  prototypes: number[];
  inputs: number[];
  lr: number;
  decoded_class2_prototype5: number[];
  encoder_class0: { mean: number[]; log_var: number[] };
  encoder_class5_mean: number[];
  cases: { steps: number; radius: number; losses: number[]; latents: number[] }[];
  bound: { steps: number; radius: number; labels: number[]; values: number[] };
} = JSON.parse(await Deno.readTextFile(new URL("./fixtures/reference_abs.json", import.meta.url)));

/** The closed-form weights of make_abs_reference.py (TF.js layout, flat index i, class c). */
function fillReferenceWeights(vae: ClassVae, c: number): void {
  const entries = { ...vae.params.entries(""), ...vae.stats.entries("") };
  for (const [key, variable] of Object.entries(entries)) {
    const phase = ([...key].reduce((a, ch) => a + ch.charCodeAt(0), 0) % 97) / 13;
    const suffix = key.split("/")[1], shape = variable.shape as number[];
    const values = Float32Array.from({ length: variable.size }, (_, i) => {
      const s = Math.sin(0.61 * i + phase + 0.43 * c);
      if (suffix === "w") return ((key === "dec3/w" ? 6 : 1.7) * s) / Math.sqrt(shape[0] * shape[1] * shape[2]);
      if (suffix === "b" || suffix === "beta" || suffix === "mean") return 0.1 * s;
      if (suffix === "gamma") return 1 + 0.2 * s;
      return 1 + 0.5 * s * s;
    });
    tf.tidy(() => (variable as tf.Variable).assign(tf.tensor(values, shape)));
  }
}

function referenceVaes(): ClassVae[] {
  return Array.from({ length: 10 }, (_, c) => {
    const vae = classVae(new Rng(c));
    fillReferenceWeights(vae, c);
    return vae;
  });
}

/** Reads a tensor back and disposes it. */
async function read(t: tf.Tensor): Promise<Float32Array> {
  const values = await t.data() as Float32Array;
  t.dispose();
  return values;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assertEquals(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

Deno.test("class VAE: encoder 28→24→11→5→1 and decoder 1→4→11→25→28 (App. A.7)", () => {
  const vae = classVae(new Rng(1));
  const before = tf.memory().numTensors;
  const sides = tf.tidy(() => {
    const encoderTrace: tf.Tensor4D[] = [], decoderTrace: tf.Tensor4D[] = [];
    const { mean, logVar } = vae.encode(tf.zeros([2, 28, 28, 1]), { trace: encoderTrace });
    const images = vae.decode(mean, { trace: decoderTrace });
    assertEquals(mean.shape, [2, 8]);
    assertEquals(logVar.shape, [2, 8]);
    assertEquals(images.shape, [2, 28, 28, 1]);
    return [encoderTrace.map((t) => [t.shape[1], t.shape[3]]), decoderTrace.map((t) => [t.shape[1], t.shape[3]])];
  });
  assertEquals(sides[0], [[24, 32], [11, 32], [5, 64], [1, 16]]);
  assertEquals(sides[1], [[4, 32], [11, 16], [25, 16], [28, 1]]);
  assertEquals(tf.memory().numTensors, before);
  vae.dispose();
});

Deno.test("ABS losses, latents, encoder and bound match PyTorch (fixtures/make_abs_reference.py)", async () => {
  const vaes = referenceVaes();
  const prototypes = Float32Array.from(reference.prototypes);
  const x = tf.tensor4d(Float32Array.from(reference.inputs), [3, 28, 28, 1]);

  // The decoder (folded BatchNorm) and the encoder on their own.
  const abs0 = await Abs.create(vaes, { prototypes, steps: 0 });
  const decoded = abs0.prototypeImages[2].subarray(5 * 784, 6 * 784);
  const decoderError = maxAbsDiff(decoded, reference.decoded_class2_prototype5);
  assert(decoderError < 2e-6, `decoder ${decoderError}`);
  const q0 = vaes[0].encode(x), q5 = vaes[5].encode(x);
  const encoderError = Math.max(
    maxAbsDiff(await q0.mean.data(), reference.encoder_class0.mean),
    maxAbsDiff(await q0.logVar.data(), reference.encoder_class0.log_var),
    maxAbsDiff(await q5.mean.data(), reference.encoder_class5_mean),
  );
  assert(encoderError < 2e-5, `encoder ${encoderError}`);
  tf.dispose([q0.mean, q0.logVar, q5.mean, q5.logVar]);
  abs0.dispose();

  for (const c of reference.cases) {
    const abs = await Abs.create(vaes, { prototypes, steps: c.steps, radius: c.radius, lr: reference.lr });
    const { losses, latents, reconstructions } = abs.infer(x);
    const lossError = maxAbsDiff(await losses.data(), c.losses);
    const latentError = maxAbsDiff(await latents.data(), c.latents);
    assert(lossError < 2e-6, `steps ${c.steps} radius ${c.radius}: losses off by ${lossError}`);
    assert(latentError < 2e-4, `steps ${c.steps} radius ${c.radius}: latents off by ${latentError}`);
    const norms = await read(tf.tidy(() => tf.max(tf.norm(latents, "euclidean", -1))));
    assert(norms[0] <= c.radius * (1 + 1e-6), `latent norm ${norms[0]} > ${c.radius}`);
    const logits = abs.logits(x);
    assertEquals(maxAbsDiff(await logits.data(), (await losses.data()).map((v) => -v)), 0);
    tf.dispose([losses, latents, reconstructions, logits]);
    abs.dispose();
  }

  const b = reference.bound;
  const abs = await Abs.create(vaes, { prototypes, steps: b.steps, radius: b.radius, lr: reference.lr });
  const bound = await abs.lowerBoundL2(x, Int32Array.from(b.labels));
  assert(maxAbsDiff(bound, b.values) < 1e-4, `bound ${bound} vs ${b.values}`);
  assert(b.values[2] > 0.05, "the fixture's third digit has a positive bound");
  abs.dispose();
  x.dispose();
  vaes.forEach((v) => v.dispose());
});

Deno.test("the folded decoder's hand-written vector–Jacobian product equals tf.grad of the VAE decoder", async () => {
  const vae = classVae(new Rng(2));
  fillReferenceWeights(vae, 4);
  const generator = classGenerator(vae);
  const rng = new Rng(3);
  const z = tf.tensor2d(rng.normalArray(3 * 8), [3, 8]), g = tf.tensor2d(rng.normalArray(3 * 784), [3, 784]);
  const before = tf.memory().numTensors;
  const [mine, images] = tf.tidy(() => {
    const { images, vjp } = generator.decodeVjp(z);
    return [vjp(g), images];
  });
  const expected = tf.grad((zz: tf.Tensor) => tf.sum(tf.mul(tf.reshape(vae.decode(zz as tf.Tensor2D), [3, 784]), g)))(
    z,
  );
  const direct = tf.tidy(() => tf.reshape(vae.decode(z), [3, 784]));
  const scale = Math.max(...(await expected.data()).map(Math.abs));
  const error = maxAbsDiff(await mine.data(), await expected.data());
  assert(error < 1e-5 * scale, `vjp off by ${error} at scale ${scale}`);
  assert(maxAbsDiff(await images.data(), await direct.data()) < 1e-6);
  tf.dispose([mine, images, expected, direct]);
  assertEquals(tf.memory().numTensors, before);
  generator.dispose!();
  vae.dispose();
  tf.dispose([z, g]);
});

/** G_c(z) = a_c + B_c z with orthonormal columns B_c `[784, L]`, for closed forms. */
function linearGenerators(classes: number, latents: number, rng: Rng): {
  generators: ClassGenerator[];
  offsets: Float64Array[];
  bases: Float64Array[][];
} {
  const offsets: Float64Array[] = [], bases: Float64Array[][] = [];
  const generators = Array.from({ length: classes }, () => {
    const { offset: a, columns } = randomAffine(rng, latents);
    offsets.push(a);
    bases.push(columns);
    const bt = tf.tensor2d(Float32Array.from(columns.flatMap((c) => [...c])), [latents, 784]);
    const at = tf.tensor2d(Float32Array.from(a), [1, 784]);
    const decode = (z: tf.Tensor2D) => tf.add(at, tf.matMul(z, bt)) as tf.Tensor2D;
    return {
      latents,
      pixels: 784,
      decode,
      decodeVjp: (z: tf.Tensor2D) => ({
        images: decode(z),
        vjp: (g: tf.Tensor2D) => tf.matMul(g, bt, false, true) as tf.Tensor2D,
      }),
      dispose: () => tf.dispose([bt, at]),
    };
  });
  return { generators, offsets, bases };
}

Deno.test("lowerBoundL2 on linear decoders equals the closed form", async () => {
  const rng = new Rng(5);
  const latents = 3, classes = 3;
  const { generators, offsets, bases } = linearGenerators(classes, latents, rng);
  // Digits near each class's plane: a + B u + noise.
  const n = 6, labels = Int32Array.from({ length: n }, (_, i) => i % classes);
  const x = new Float32Array(n * 784);
  for (let i = 0; i < n; i++) {
    const u = rng.normalArray(latents, 1.5);
    for (let p = 0; p < 784; p++) {
      let v = offsets[labels[i]][p] + 0.02 * rng.normal();
      for (let l = 0; l < latents; l++) v += bases[labels[i]][l][p] * u[l];
      x[i * 784 + p] = v;
    }
  }
  const project = (c: number, v: Float64Array) => bases[c].map((b) => b.reduce((s, w, p) => s + w * v[p], 0));
  const expected = Float64Array.from({ length: n }, (_, i) => {
    const xi = Float64Array.from(x.subarray(i * 784, (i + 1) * 784));
    const residual = (c: number) => xi.map((v, p) => v - offsets[c][p]);
    const y = labels[i];
    // z* = Bᵀ(x − a)/(1 + ½): the minimiser of ‖x − a − Bz‖² + ½‖z‖² for orthonormal B.
    const zStar = project(y, residual(y)).map((v) => v / 1.5);
    const ry = residual(y);
    const r = Math.hypot(...ry.map((v, p) => v - bases[y].reduce((s, b, l) => s + b[p] * zStar[l], 0)));
    const zsq = zStar.reduce((s, v) => s + v * v, 0);
    let best = Infinity;
    for (let c = 0; c < classes; c++) {
      if (c === y) continue;
      const rc = residual(c), pc = project(c, rc);
      const dc = Math.sqrt(rc.reduce((s, v) => s + v * v, 0) - pc.reduce((s, v) => s + v * v, 0));
      best = Math.min(best, Math.max(0, (dc * dc - r * r - 0.5 * zsq) / (2 * (dc + r))));
    }
    return best;
  });
  const abs = await Abs.fromGenerators(generators, { prototypes: 64, steps: 400, seed: 1, radius: 50 });
  const xs = tf.tensor4d(x, [n, 28, 28, 1]);
  const bound = await abs.lowerBoundL2(xs, labels);
  const error = maxAbsDiff(bound, expected);
  assert(expected.every((v) => v > 0.1), `closed form ${expected}`);
  assert(error < 2e-3 * Math.max(...expected), `bound ${bound} vs closed form ${expected}: ${error}`);
  await assertRejects(() => abs.lowerBoundL2(xs, new Int32Array(2)), RangeError);

  // The envelope gradient against central differences of the converged logits.
  const direction = tf.tensor4d(rng.normalArray(n * 784, 1 / 28), [n, 28, 28, 1]);
  const h = 0.05;
  const [plus, minus] = [h, -h].map((s) => tf.tidy(() => tf.sum(abs.logits(tf.add(xs, tf.mul(s, direction))), 1)));
  const grad = tf.grad((v: tf.Tensor) => tf.sum(abs.logits(v as tf.Tensor4D)))(xs);
  const analytic = await read(tf.tidy(() => tf.sum(tf.reshape(tf.mul(grad, direction), [n, 784]), 1)));
  const [p, m] = [await plus.data(), await minus.data()];
  for (let i = 0; i < n; i++) {
    const fd = (p[i] - m[i]) / (2 * h);
    assertAlmostEquals(analytic[i], fd, 2e-3 * Math.abs(fd) + 1e-6, `digit ${i}: ${analytic[i]} vs ${fd}`);
  }
  tf.dispose([xs, direction, plus, minus, grad]);
  abs.dispose();
  generators.forEach((g) => g.dispose!());
});

Deno.test("logits: tf.grad gives the envelope gradient exactly, matching finite differences with fixed prototypes", async () => {
  const vaes = referenceVaes();
  const x = tf.tensor4d(Float32Array.from(reference.inputs), [3, 28, 28, 1]);
  const weights = tf.tensor2d(new Rng(6).normalArray(30), [3, 10]);
  for (const steps of [0, 3]) {
    const abs = await Abs.create(vaes, { prototypes: Float32Array.from(reference.prototypes), steps });
    const before = tf.memory().numTensors;
    const grad = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(abs.logits(v as tf.Tensor4D), weights)))(x);
    const { losses, latents, reconstructions } = abs.infer(x);
    const expected = tf.tidy(() => {
      const diff = tf.sub(tf.expandDims(tf.reshape(x, [3, 784]), 1), reconstructions);
      return tf.reshape(tf.mul(-2 / 784, tf.sum(tf.mul(diff, tf.expandDims(weights, 2)), 1)), [3, 28, 28, 1]);
    });
    const error = maxAbsDiff(await grad.data(), await expected.data());
    assert(error < 1e-8, `steps ${steps}: custom gradient off by ${error}`);
    if (steps === 0) {
      // With the prototypes alone, while the chosen prototypes stay the same, ℓ is quadratic in x
      // and central differences are exact up to float32 rounding: a wide step keeps that small.
      const direction = tf.tensor4d(new Rng(7).normalArray(3 * 784, 1 / 28), [3, 28, 28, 1]);
      const h = 0.5;
      const [p, m] = await Promise.all(
        [h, -h].map((s) => read(tf.tidy(() => abs.logits(tf.add(x, tf.mul(s, direction)))))),
      );
      const w = await weights.data() as Float32Array;
      const fd = w.reduce((sum, wi, i) => sum + wi * (p[i] - m[i]), 0) / (2 * h);
      const analytic = (await read(tf.tidy(() => tf.sum(tf.mul(grad, direction)))))[0];
      assertAlmostEquals(analytic, fd, 1e-4 * Math.abs(fd), `${analytic} vs ${fd}`);
      for (const s of [h, -h]) {
        const shifted = tf.tidy(() => abs.infer(tf.add(x, tf.mul(s, direction))).latents);
        assertEquals(maxAbsDiff(await shifted.data(), await latents.data()), 0, "the prototypes changed");
        shifted.dispose();
      }
      direction.dispose();
    }
    tf.dispose([grad, losses, latents, reconstructions, expected]);
    assertEquals(tf.memory().numTensors, before);
    abs.dispose();
  }
  tf.dispose([x, weights]);
  vaes.forEach((v) => v.dispose());
});

Deno.test("jacobian: the logits and every class's envelope gradient, row c equal to tf.grad of logit c", async () => {
  const vaes = referenceVaes();
  const x = tf.tensor4d(Float32Array.from(reference.inputs), [3, 28, 28, 1]);
  const abs = await Abs.create(vaes, { prototypes: Float32Array.from(reference.prototypes), steps: 3 });
  abs.classScales = Float64Array.from({ length: 10 }, (_, c) => 1 + 0.01 * c);
  const before = tf.memory().numTensors;
  const { logits, jacobian } = abs.jacobian(x);
  assertEquals(tf.memory().numTensors, before + 2);
  const plain = abs.logits(x);
  assert(maxAbsDiff(await logits.data(), await plain.data()) < 1e-6);
  const rows = await jacobian.data();
  for (const c of [0, 4, 9]) {
    const grad = tf.grad((v: tf.Tensor) => tf.sum(tf.gather(abs.logits(v as tf.Tensor4D), [c], 1)))(x);
    const g = await grad.data();
    let error = 0;
    for (let r = 0; r < 3; r++) {
      for (let i = 0; i < 784; i++) error = Math.max(error, Math.abs(rows[(r * 10 + c) * 784 + i] - g[r * 784 + i]));
    }
    assert(error < 1e-8, `class ${c}: off by ${error}`);
    grad.dispose();
  }
  tf.dispose([logits, jacobian, plain, x]);
  abs.dispose();
  vaes.forEach((v) => v.dispose());
});

Deno.test("tf.memory().numTensors stays flat across repeated inference, logits and bounds", async () => {
  const vaes = referenceVaes();
  const abs = await Abs.create(vaes, { prototypes: 30, steps: 2, seed: 3 });
  const x = tf.tensor4d(Float32Array.from(reference.inputs), [3, 28, 28, 1]);
  const counts: number[] = [];
  for (let k = 0; k < 3; k++) {
    const logits = abs.logits(x);
    await logits.data();
    logits.dispose();
    const out = abs.infer(x);
    tf.dispose([out.losses, out.latents, out.reconstructions]);
    await abs.lowerBoundL2(x, Int32Array.from([1, 2, 3]));
    tf.dispose(abs.reconstructWith(x, Int32Array.from([4, 0, 4])));
    counts.push(tf.memory().numTensors);
  }
  assertEquals(new Set(counts).size, 1, `${counts}`);
  // The prototype cache: one Float32Array [P, 784] per class.
  assertEquals(abs.prototypeImages.length, 10);
  assertEquals(abs.prototypeImages[0].length, 30 * 784);
  abs.dispose();
  x.dispose();
  vaes.forEach((v) => v.dispose());
});

Deno.test("reconstructWith applies each row's class encoder mean and decoder", async () => {
  const vaes = referenceVaes();
  const abs = await Abs.create(vaes, { prototypes: 4, steps: 0 });
  const x = tf.tensor4d(Float32Array.from(reference.inputs), [3, 28, 28, 1]);
  const got = await read(abs.reconstructWith(x, Int32Array.from([7, 2, 7])));
  for (const [row, c] of [[0, 7], [1, 2], [2, 7]]) {
    const expected = await read(tf.tidy(() => {
      const xi = tf.slice(x, [row, 0, 0, 0], [1, 28, 28, 1]);
      return vaes[c].decode(vaes[c].encode(xi).mean);
    }));
    assert(maxAbsDiff(got.subarray(row * 784, (row + 1) * 784), expected) < 1e-6);
  }
  abs.dispose();
  x.dispose();
  vaes.forEach((v) => v.dispose());
});

Deno.test("Binary ABS: logits are −γ_c ℓ*_c of the binarized input", async () => {
  const vaes = referenceVaes();
  const prototypes = Float32Array.from(reference.prototypes);
  const scales = [1, 0.96, 1.001, 1.06, 0.98, 0.96, 1.03, 1, 1, 1];
  const binary = await Abs.create(vaes, { prototypes, steps: 2, binary: true, classScales: scales });
  const plain = await Abs.create(vaes, { prototypes, steps: 2 });
  const values = Float32Array.from(reference.inputs);
  const x = tf.tensor4d(values, [3, 28, 28, 1]);
  const thresholded = tf.tensor4d(values.map((v) => v >= 0.5 ? 1 : 0), [3, 28, 28, 1]);
  const got = await read(binary.logits(x)), base = await read(plain.logits(thresholded));
  assert(maxAbsDiff(got, base.map((v, i) => v * scales[i % 10])) < 1e-7);
  await assertRejects(() => binary.lowerBoundL2(x, Int32Array.from([0, 1, 2])), RangeError);
  tf.dispose([x, thresholded]);
  binary.dispose();
  plain.dispose();
  vaes.forEach((v) => v.dispose());
});

Deno.test("projectToBall scales rows into the ball and keeps their signs", async () => {
  const z = tf.tensor2d([[3, -4, 0], [-0.1, 0.2, -0.3], [-6, 0, 8]]);
  const out = await read(projectToBall(z, 2));
  const expected = [1.2, -1.6, 0, -0.1, 0.2, -0.3, -1.2, 0, 1.6];
  assert(maxAbsDiff(out, expected) < 1e-6, `${out}`);
  z.dispose();
});

Deno.test("gaussianPrototypes keeps the P densest of ⌊P/0.9⌋ draws, in draw order", () => {
  const P = 100;
  const out = gaussianPrototypes(P, new Rng(11));
  const drawn = new Rng(11).normalArray(111 * 8);
  const norms = Array.from({ length: 111 }, (_, k) => drawn.subarray(k * 8, k * 8 + 8).reduce((s, v) => s + v * v, 0));
  const kept = norms.map((v, k) => [v, k]).sort((a, b) => a[0] - b[0]).slice(0, P).map(([, k]) => k).sort((a, b) =>
    a - b
  );
  assertEquals(out.length, P * 8);
  kept.forEach((k, i) => assertEquals([...out.subarray(i * 8, i * 8 + 8)], [...drawn.subarray(k * 8, k * 8 + 8)]));
  assertEquals([...gaussianPrototypes(P, new Rng(11))], [...out]);
});

Deno.test("trainClassVae lowers ‖x − x̂‖² + β·KL with β annealed, tensors flat across steps", async () => {
  const rng = new Rng(14);
  // Sixteen blurred strokes of one "class".
  const images = new Float32Array(16 * 784);
  for (let i = 0; i < 16; i++) {
    const col = 10 + (i % 8);
    for (let r = 4; r < 24; r++) {
      for (let c = 0; c < 28; c++) images[i * 784 + r * 28 + c] = Math.exp(-((c - col) ** 2) / 4);
    }
  }
  const steps: { loss: number; beta: number; tensors: number }[] = [];
  const vae = await trainClassVae(images, {
    epochs: 8,
    batch: 8,
    lr: 3e-3,
    betaEpochs: 4,
    rng,
    onStep: (s) => void steps.push({ loss: s.reconstruction, beta: s.beta, tensors: tf.memory().numTensors }),
  });
  assertEquals(steps.length, 16);
  assertEquals(steps[0].beta, 10);
  assertAlmostEquals(steps[4].beta, 10 - 9 * 0.5, 1e-12);
  assertEquals(steps.at(-1)!.beta, 1);
  assertEquals(new Set(steps.slice(1).map((s) => s.tensors)).size, 1);
  assert(steps.at(-1)!.loss < 0.8 * steps[0].loss, `${steps[0].loss} → ${steps.at(-1)!.loss}`);
  // Running statistics moved off their initial values.
  const mean = await vae.stats.get("enc0/mean").data();
  assert(mean.some((v) => v !== 0));
  vae.dispose();
});
