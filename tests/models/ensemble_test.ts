import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { EnsembleLinearVae, type EnsembleOptions, EnsembleVae } from "../../lib/models/ensemble.ts";
import { fullCovarianceKl, lowerTriangular, sampleFullCovariance } from "../../lib/models/full_covariance.ts";

await selectBackend("wasm");

const SEEDS = [3, 17, 42];
const BETAS = [0.01, 0.1, 1];

/** The settings the equivalence test covers: every kind, linear and one hidden layer (batched and member-wise products). */
const CASES: { name: string; options: Omit<EnsembleOptions, "seeds" | "betas"> }[] = [
  { name: "linear vae", options: { input: 3, latents: 2, hidden: [], kind: "vae" } },
  { name: "linear ae", options: { input: 3, latents: 2, hidden: [], kind: "ae" } },
  { name: "linear full", options: { input: 3, latents: 2, hidden: [], kind: "full" } },
  { name: "tanh vae", options: { input: 4, latents: 2, hidden: [24], kind: "vae" } },
  { name: "relu ae", options: { input: 4, latents: 2, hidden: [24], kind: "ae", activation: "relu" } },
  { name: "tanh full bernoulli", options: { input: 4, latents: 3, hidden: [24], kind: "full", loss: "bernoulli" } },
];

/** Member k's rows of a stacked `[K, ...]` parameter. */
function memberSlice(values: Float32Array, shape: number[], k: number): Float32Array {
  const size = shape.slice(1).reduce((a, b) => a * b, 1);
  return values.slice(k * size, (k + 1) * size);
}

/** Trains with Adam on per-member batches and noise drawn from `rng`; returns the member-stacked data it drew. */
function train(model: EnsembleVae, batches: Float32Array[], noises: Float32Array[], batch: number): void {
  const { input, latents } = model.options;
  const optimizer = tf.train.adam(1e-2);
  batches.forEach((x, step) => {
    optimizer.minimize(
      () =>
        model.loss(
          tf.tensor3d(x, [model.members, batch, input]),
          tf.tensor3d(noises[step], [model.members, batch, latents]),
        ).total,
      false,
      model.params.list(),
    );
  });
  optimizer.dispose();
}

Deno.test("an ensemble of 3 trained 50 Adam steps equals 3 ensembles of one trained alike (every kind)", async () => {
  const steps = 50, batch = 16;
  for (const { name, options } of CASES) {
    const rng = new Rng(7);
    const { input, latents } = options;
    // Per member and step its own batch and noise; bernoulli targets in [0, 1].
    const draw = (n: number) =>
      options.loss === "bernoulli" ? Float32Array.from({ length: n }, () => rng.uniform()) : rng.normalArray(n);
    const batches = Array.from({ length: steps }, () => draw(SEEDS.length * batch * input));
    const noises = Array.from({ length: steps }, () => rng.normalArray(SEEDS.length * batch * latents));
    const before = tf.memory().numTensors;
    const ensemble = new EnsembleVae({ ...options, seeds: SEEDS, betas: BETAS });
    train(ensemble, batches, noises, batch);
    for (let k = 0; k < SEEDS.length; k++) {
      const single = new EnsembleVae({ ...options, seeds: [SEEDS[k]], betas: [BETAS[k]] });
      const one = (arrays: Float32Array[], width: number) =>
        arrays.map((a) => a.slice(k * batch * width, (k + 1) * batch * width));
      train(single, one(batches, input), one(noises, latents), batch);
      for (const [key, variable] of Object.entries(ensemble.params.entries(""))) {
        const expected = await single.params.get(key).data() as Float32Array;
        const got = memberSlice(await variable.data() as Float32Array, variable.shape, k);
        let diff = 0;
        for (let i = 0; i < got.length; i++) diff = Math.max(diff, Math.abs(got[i] - expected[i]));
        assert(diff <= 1e-5, `${name}: member ${k} ${key} differs by ${diff}`);
      }
      single.dispose();
    }
    ensemble.dispose();
    assertEquals(tf.memory().numTensors, before, `${name}: tensors left behind`);
  }
});

Deno.test("members are initialised by the documented rule: N(0, gain²/fan_in) from Rng.derive(seed, 'model'), zero biases", async () => {
  for (const activation of ["tanh", "relu"] as const) {
    const model = new EnsembleVae({
      seeds: [5, 6],
      input: 3,
      latents: 2,
      hidden: [4],
      activation,
      kind: "vae",
      betas: [1, 1],
    });
    // Sizes in draw order: enc 3→4 (hidden), 4→2d; dec 2→4 (hidden), 4→3.
    const layers = [["enc/w0", 3, 4, true], ["enc/w1", 4, 4, false], ["dec/w0", 2, 4, true], [
      "dec/w1",
      4,
      3,
      false,
    ]] as const;
    for (const [k, seed] of [5, 6].entries()) {
      const rng = Rng.derive(seed, "model");
      for (const [key, fanIn, fanOut, hidden] of layers) {
        const gain = hidden && activation === "relu" ? Math.SQRT2 : 1;
        const expected = rng.normalArray(fanIn * fanOut, gain / Math.sqrt(fanIn));
        const variable = model.params.get(key);
        assertEquals(variable.shape, [2, fanIn, fanOut]);
        assertEquals(memberSlice(await variable.data() as Float32Array, variable.shape, k), expected, `${key} ${k}`);
      }
    }
    for (const key of ["enc/b0", "enc/b1", "dec/b0", "dec/b1"]) {
      assert((await model.params.get(key).data()).every((v) => v === 0), key);
    }
    assertEquals(model.params.get("enc/b1").shape, [2, 1, 4]);
    model.dispose();
  }
  const linear = new EnsembleLinearVae({ seeds: [1], input: 3, latents: 2, kind: "ae", betas: [] });
  assertEquals(linear.options.hidden, []);
  assertEquals(linear.params.list().map((v) => v.shape), [[1, 3, 2], [1, 1, 2], [1, 2, 3], [1, 1, 3]]);
  linear.dispose();
});

Deno.test("heads, decoder and member functions: shapes, agreement with the ensemble, no leaks", async () => {
  const rng = new Rng(8);
  const K = 3, batch = 5;
  for (const kind of ["vae", "ae", "full"] as const) {
    const model = new EnsembleVae({ seeds: SEEDS, input: 4, latents: 3, hidden: [24, 8], kind, betas: BETAS });
    const xValues = rng.normalArray(K * batch * 4), zValues = rng.normalArray(K * batch * 3);
    const before = tf.memory().numTensors;
    const { codes, decoded } = tf.tidy(() => {
      const codes = model.encode(tf.tensor3d(xValues, [K, batch, 4]));
      return { codes, decoded: model.decode(tf.tensor3d(zValues, [K, batch, 3])) };
    });
    assertEquals(codes.mean.shape, [K, batch, 3]);
    assertEquals(codes.logVar?.shape, kind === "vae" ? [K, batch, 3] : undefined);
    assertEquals(codes.triangle?.shape, kind === "full" ? [K, batch, 6] : undefined);
    assertEquals(decoded.shape, [K, batch, 4]);
    const [mean, logVar, out] = await Promise.all([codes.mean.data(), codes.logVar?.data(), decoded.data()]);
    for (let k = 0; k < K; k++) {
      const member = tf.tidy(() => {
        const q = model.memberEncoder(k)(tf.tensor2d(xValues.slice(k * batch * 4, (k + 1) * batch * 4), [batch, 4]));
        const y = model.memberDecoder(k)(tf.tensor2d(zValues.slice(k * batch * 3, (k + 1) * batch * 3), [batch, 3]));
        return [q.mean, q.logVar ?? tf.zeros([0]), y];
      });
      const [m, lv, y] = await Promise.all(member.map((t) => t.data()));
      tf.dispose(member);
      const close = (a: ArrayLike<number>, b: ArrayLike<number>, offset: number, what: string) => {
        for (let i = 0; i < a.length; i++) assertAlmostEquals(a[i], b[offset + i], 1e-5, `${kind} ${what} ${k}`);
      };
      close(m, mean, k * batch * 3, "mean");
      if (kind === "vae") close(lv, logVar!, k * batch * 3, "logVar");
      else assertEquals(lv.length, 0);
      close(y, out, k * batch * 4, "decoder");
    }
    tf.dispose([codes.mean, codes.logVar, codes.triangle, decoded].filter((t) => t !== undefined));
    assertEquals(tf.memory().numTensors, before, `${kind}: tensors left behind`);
    model.dispose();
  }
});

/** Softplus(l) − l·x = −x log σ(l) − (1 − x) log(1 − σ(l)), in float64. */
const bernoulli = (logit: number, x: number) =>
  -x * Math.log(1 / (1 + Math.exp(-logit))) - (1 - x) * Math.log(1 - 1 / (1 + Math.exp(-logit)));

Deno.test("the loss is Σ_k batch-mean(rec + β_k KL): diagonal (2.6), full (3.30) and AE terms recomputed", async () => {
  const rng = new Rng(9);
  const K = 3, batch = 6, input = 4, d = 2;
  for (const [kind, loss] of [["vae", "squared"], ["ae", "squared"], ["full", "bernoulli"]] as const) {
    const model = new EnsembleVae({ seeds: SEEDS, input, latents: d, hidden: [24], kind, betas: BETAS, loss });
    const xValues = loss === "bernoulli"
      ? Float32Array.from({ length: K * batch * input }, () => rng.uniform())
      : rng.normalArray(K * batch * input);
    const noiseValues = rng.normalArray(K * batch * d);
    const before = tf.memory().numTensors;
    const { terms, reference } = tf.tidy(() => {
      const x = tf.tensor3d(xValues, [K, batch, input]), noise = tf.tensor3d(noiseValues, [K, batch, d]);
      const terms = model.loss(x, noise);
      // The same quantities from the public pieces: encode, the full-covariance helpers, decode.
      const codes = model.encode(x);
      let z: tf.Tensor3D = codes.mean, kl: tf.Tensor = tf.zeros([K, batch]);
      if (kind === "vae") {
        z = tf.add(codes.mean, tf.mul(tf.exp(tf.mul(codes.logVar!, 0.5)), noise));
        kl = tf.mul(
          tf.sum(tf.sub(tf.add(tf.square(codes.mean), tf.exp(codes.logVar!)), tf.add(codes.logVar!, 1)), 2),
          0.5,
        );
      } else if (kind === "full") {
        const l = lowerTriangular(codes.triangle!, d);
        z = sampleFullCovariance(codes.mean, l, noise) as tf.Tensor3D;
        kl = fullCovarianceKl(codes.mean, l);
      }
      return { terms, reference: { decoded: model.decode(z), kl: tf.mean(kl, 1) } };
    });
    const [total, rec, kl, decoded, klRef] = await Promise.all(
      [terms.total, terms.rec, terms.kl, reference.decoded, reference.kl].map((t) => t.data()),
    );
    tf.dispose([terms.total, terms.rec, terms.kl, reference.decoded, reference.kl]);
    assertEquals(tf.memory().numTensors, before, `${kind}: tensors left behind`);
    let expectedTotal = 0;
    for (let k = 0; k < K; k++) {
      let r = 0;
      for (let i = k * batch * input; i < (k + 1) * batch * input; i++) {
        r += loss === "bernoulli" ? bernoulli(decoded[i], xValues[i]) : (decoded[i] - xValues[i]) ** 2;
      }
      r /= batch;
      assertAlmostEquals(rec[k], r, 1e-4 * Math.max(1, r), `${kind} rec ${k}`);
      assertAlmostEquals(kl[k], klRef[k], 1e-4 * Math.max(1, klRef[k]), `${kind} kl ${k}`);
      if (kind === "ae") assertEquals(kl[k], 0);
      expectedTotal += r + (kind === "ae" ? 0 : BETAS[k] * klRef[k]);
    }
    assertAlmostEquals(total[0], expectedTotal, 1e-4 * Math.max(1, expectedTotal), `${kind} total`);
    model.dispose();
  }
});

/** The model's loss from plain TF.js ops (batched matMul, tanh, autodiff everywhere) on the same parameters. */
function plainLoss(model: EnsembleVae, x: tf.Tensor3D, noise: tf.Tensor3D): tf.Scalar {
  const { kind, latents: d, hidden } = model.options;
  const layers = hidden.length + 1;
  const forward = (prefix: string, h: tf.Tensor3D) => {
    for (let i = 0; i < layers; i++) {
      h = tf.add(tf.matMul(h, model.params.get(`${prefix}w${i}`) as tf.Tensor3D), model.params.get(`${prefix}b${i}`));
      if (i + 1 < layers) h = model.options.activation === "relu" ? tf.relu(h) : tf.tanh(h);
    }
    return h;
  };
  const head = forward("enc/", x);
  const mean = tf.slice(head, [0, 0, 0], [-1, -1, d]);
  let z = mean, kl: tf.Tensor = tf.zeros([model.members]);
  if (kind === "vae") {
    const logVar = tf.slice(head, [0, 0, d], [-1, -1, d]);
    z = tf.add(mean, tf.mul(tf.exp(tf.mul(logVar, 0.5)), noise));
    kl = tf.mean(tf.mul(tf.sum(tf.sub(tf.add(tf.square(mean), tf.exp(logVar)), tf.add(logVar, 1)), 2), 0.5), 1);
  } else if (kind === "full") {
    const l = lowerTriangular(tf.slice(head, [0, 0, d], [-1, -1, -1]), d);
    z = sampleFullCovariance(mean, l, noise) as tf.Tensor3D;
    kl = tf.mean(fullCovarianceKl(mean, l), 1);
  }
  const out = forward("dec/", z);
  const perEntry = model.options.loss === "bernoulli"
    ? tf.sub(tf.softplus(out), tf.mul(out, x))
    : tf.square(tf.sub(out, x));
  const rec = tf.mean(tf.sum(perEntry, 2), 1);
  return tf.sum(tf.add(rec, tf.mul(kind === "ae" ? 0 : tf.tensor1d(BETAS), kl)));
}

Deno.test("the written-out backward pass gives autodiff's gradients of the same loss (every kind)", async () => {
  const rng = new Rng(10);
  const batch = 8;
  for (const { name, options } of CASES) {
    const model = new EnsembleVae({
      ...options,
      seeds: SEEDS,
      betas: BETAS,
      hidden: options.hidden.length ? [24, 12] : [],
    });
    const { input, latents } = options;
    const xValues = options.loss === "bernoulli"
      ? Float32Array.from({ length: 3 * batch * input }, () => rng.uniform())
      : rng.normalArray(3 * batch * input);
    const noiseValues = rng.normalArray(3 * batch * latents);
    const before = tf.memory().numTensors;
    const gradients = (f: (x: tf.Tensor3D, noise: tf.Tensor3D) => tf.Scalar) =>
      tf.tidy(() => {
        const x = tf.tensor3d(xValues, [3, batch, input]), noise = tf.tensor3d(noiseValues, [3, batch, latents]);
        const { value, grads } = tf.variableGrads(() => f(x, noise), model.params.list());
        return [value, ...model.params.list().map((v) => grads[v.name])];
      });
    const ours = gradients((x, noise) => model.loss(x, noise).total);
    const plain = gradients((x, noise) => plainLoss(model, x, noise));
    const [a, b] = await Promise.all([ours, plain].map((list) => Promise.all(list.map((t) => t.data()))));
    tf.dispose([...ours, ...plain]);
    assertEquals(tf.memory().numTensors, before, `${name}: tensors left behind`);
    assertAlmostEquals(a[0][0], b[0][0], 1e-5 * Math.max(1, Math.abs(b[0][0])), `${name}: loss`);
    for (let i = 1; i < a.length; i++) {
      const scale = Math.max(1e-3, ...b[i].map(Math.abs));
      let diff = 0;
      for (let j = 0; j < b[i].length; j++) diff = Math.max(diff, Math.abs(a[i][j] - b[i][j]));
      assert(
        diff <= 1e-4 * scale,
        `${name}: ${model.params.list()[i - 1].name} gradient off by ${diff} at scale ${scale}`,
      );
    }
    model.dispose();
  }
});

Deno.test("bad options are UsageErrors naming the option; bad tensors are errors naming the shape", () => {
  const base: EnsembleOptions = { seeds: [1, 2], input: 3, latents: 2, hidden: [], kind: "vae", betas: [1, 1] };
  const cases: [Partial<EnsembleOptions>, string][] = [
    [{ seeds: [] }, "seeds"],
    [{ seeds: [1.5, 2] }, "seeds"],
    [{ input: 0 }, "input"],
    [{ latents: 2.5 }, "latents"],
    [{ hidden: [10, 0] }, "hidden"],
    [{ activation: "gelu" as "tanh" }, "activation"],
    [{ kind: "flow" as "vae" }, "kind"],
    [{ betas: [1] }, "betas"],
    [{ betas: [1, -1] }, "β"],
    [{ loss: "l1" as "squared" }, "loss"],
  ];
  for (const [change, word] of cases) assertThrows(() => new EnsembleVae({ ...base, ...change }), UsageError, word);
  // "ae" ignores β.
  new EnsembleVae({ ...base, kind: "ae", betas: [] }).dispose();
  const model = new EnsembleVae(base);
  const before = tf.memory().numTensors;
  assertThrows(() => tf.tidy(() => model.encode(tf.zeros([3, 4, 3]))), Error, "[2, batch, 3]");
  assertThrows(() => tf.tidy(() => model.loss(tf.zeros([2, 4, 3]), tf.zeros([2, 5, 2]))), Error, "noise");
  assertThrows(() => tf.tidy(() => model.memberDecoder(2)(tf.zeros([1, 2]))), Error, "member 2");
  assertEquals(tf.memory().numTensors, before);
  model.dispose();
});
