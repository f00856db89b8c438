import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  factorialGaussianNll,
  FactorialGaussianPrior,
  iceLosses,
  type IceOptions,
  type IceVariant,
  NuisanceClassifier,
} from "../../lib/train/ice.ts";

await selectBackend("wasm");

/** −Σ scipy.stats.norm.logpdf per sample (tests/train/fixtures/make_ice_reference.py). */
const REFERENCE: { z: number[][]; beta: number[]; log_gamma: number[]; nll: number[] } = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/reference_ice.json", import.meta.url)),
);

const value = async (t: tf.Tensor) => (await t.data())[0];

/** Mean softmax cross-entropy in float64. */
function crossEntropy(logits: ArrayLike<number>, classes: number, labels: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < labels.length; i++) {
    const row = Array.from({ length: classes }, (_, c) => logits[i * classes + c]);
    const max = Math.max(...row);
    const logZ = max + Math.log(row.reduce((a, v) => a + Math.exp(v - max), 0));
    sum += logZ - row[labels[i]];
  }
  return sum / labels.length;
}

Deno.test("the factorial Gaussian NLL matches scipy.stats.norm.logpdf per sample (γ a std)", async () => {
  const before = tf.memory().numTensors;
  const z = tf.tensor2d(REFERENCE.z), beta = tf.tensor1d(REFERENCE.beta), logGamma = tf.tensor1d(REFERENCE.log_gamma);
  const nll = factorialGaussianNll(z, beta, logGamma);
  assertEquals(nll.shape, [REFERENCE.z.length]);
  const got = await nll.data();
  REFERENCE.nll.forEach((expected, i) => assertAlmostEquals(got[i] / expected, 1, 2e-6));
  // The prior object computes the same with its parameters.
  const prior = new FactorialGaussianPrior(5);
  prior.params.get("beta").assign(beta);
  prior.params.get("log_gamma").assign(logGamma);
  const fromPrior = prior.nll(z);
  (await fromPrior.data()).forEach((v, i) => assertAlmostEquals(v, got[i], 1e-5));
  tf.dispose([z, beta, logGamma, nll, fromPrior]);
  prior.dispose();
  assertEquals(tf.memory().numTensors, before);
  assertThrows(() => factorialGaussianNll(tf.zeros([2, 3]), tf.zeros([3]), tf.zeros([2])), UsageError, "logGamma 2");
});

/** A tiny batch: 4 samples, C 3, z_n of width 2; a dropout-free D_nc so that training-mode logits are deterministic. */
function tinyCase() {
  const zs = tf.tensor2d([[1, 0, -1], [0.5, 2, 0], [-1, 0.3, 0.2], [0, 0, 3]]);
  const zn = tf.tensor2d([[0.4, -1.2], [2, 0.1], [-0.7, 0.5], [1.5, 1.5]]);
  const logDet = tf.tensor1d([0.1, -0.2, 0.3, 0]);
  const labels = Int32Array.from([0, 2, 1, 2]);
  const nuisance = new NuisanceClassifier(new Rng(5), { inputs: 2, classes: 3, hidden: [4], dropout: 0 });
  const prior = new FactorialGaussianPrior(2);
  tf.tidy(() => {
    prior.params.get("beta").assign(tf.tensor1d([0.3, -0.5]));
    prior.params.get("log_gamma").assign(tf.tensor1d([0.2, -0.4]));
  });
  const dispose = () => (tf.dispose([zs, zn, logDet]), nuisance.dispose(), prior.dispose());
  return { batch: { zs, zn, logDet, labels }, nuisance, prior, dispose };
}

Deno.test("iCE terms equal a hand computation on a tiny batch, both variants and the CE objective", async () => {
  const before = tf.memory().numTensors;
  const { batch, nuisance, prior, dispose } = tinyCase();
  const zs = await batch.zs.data(), zn = await batch.zn.data(), logDet = await batch.logDet.data();
  const ncLogits = nuisance.logits(batch.zn);
  const nc = await ncLogits.data();
  ncLogits.dispose();
  const ce = crossEntropy(zs, 3, batch.labels);
  const order = new Rng(7).permutation(4);
  const permuted = Array.from(order, (i) => batch.labels[i]);
  const [beta, logGamma] = [[0.3, -0.5], [0.2, -0.4]];
  let nats = 0;
  for (let i = 0; i < 4; i++) {
    for (let k = 0; k < 2; k++) {
      const g = Math.exp(logGamma[k]);
      nats += 0.5 * ((zn[i * 2 + k] - beta[k]) / g) ** 2 + logGamma[k] + 0.5 * Math.log(2 * Math.PI);
    }
    nats -= logDet[i];
  }
  const mle = nats / 4 / (5 * Math.LN2);
  const expected: Record<string, { nce: number; options: IceOptions; total: number }> = {
    permuted: {
      nce: crossEntropy(nc, 3, permuted),
      options: { variant: "permuted" },
      total: ce + 0.05 * crossEntropy(nc, 3, permuted) + mle,
    },
    literal: {
      nce: -crossEntropy(nc, 3, batch.labels) / 2,
      options: { variant: "literal", lambdaN: 0.3, lambdaM: 2 },
      total: ce + 0.3 * (-crossEntropy(nc, 3, batch.labels) / 2) + 2 * mle,
    },
    ce: {
      nce: crossEntropy(nc, 3, permuted),
      options: { objective: "ce" },
      total: ce,
    },
  };
  for (const [name, want] of Object.entries(expected)) {
    const terms = iceLosses(batch, { ...want.options, nuisance, prior, rng: new Rng(7) });
    assertAlmostEquals(await value(terms.ce), ce, 1e-5, name);
    assertAlmostEquals(await value(terms.nce), want.nce, 1e-5, name);
    assertAlmostEquals(await value(terms.mle), mle, 1e-5, name);
    assertAlmostEquals(await value(terms.total), want.total, 1e-5, name);
    tf.dispose(Object.values(terms));
  }
  // The CE objective needs neither part and then reports CE alone.
  const plain = iceLosses(batch, { objective: "ce" });
  assertEquals(Object.keys(plain).sort(), ["ce", "total"]);
  assertAlmostEquals(await value(plain.total), ce, 1e-5);
  tf.dispose(Object.values(plain));
  // d of bits/dim given explicitly (e.g. an input larger than z_s ++ z_n).
  const wide = iceLosses(batch, { nuisance, prior, rng: new Rng(7), dim: 10 });
  assertAlmostEquals(await value(wide.mle), mle / 2, 1e-5);
  tf.dispose(Object.values(wide));
  dispose();
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("iCE gradients are finite and exact where closed-form; the encoder step moves z_n the right way", async () => {
  const before = tf.memory().numTensors;
  const { batch, nuisance, prior, dispose } = tinyCase();
  const lambdaM = 1.5;
  for (const variant of ["permuted", "literal"] as IceVariant[]) {
    const options = { variant, lambdaM, nuisance, prior, rng: new Rng(3) };
    const f = (zs: tf.Tensor, zn: tf.Tensor, logDet: tf.Tensor) =>
      iceLosses({
        zs: zs as tf.Tensor2D,
        zn: zn as tf.Tensor2D,
        logDet: logDet as tf.Tensor1D,
        labels: batch.labels,
      }, { ...options, rng: new Rng(3) }).total;
    const [gZs, gZn, gLogDet] = tf.grads(f)([batch.zs, batch.zn, batch.logDet]);
    for (const g of [gZs, gZn, gLogDet]) assert((await g.data()).every(Number.isFinite));
    // ∂total/∂log|det J| = −λ_m/(b·d·ln 2); ∂total/∂z_s = (softmax − onehot)/b.
    (await gLogDet.data()).forEach((v) => assertAlmostEquals(v, -lambdaM / (4 * 5 * Math.LN2), 1e-7));
    const softmax = tf.softmax(batch.zs);
    const probs = await softmax.data(), gs = await gZs.data();
    for (let i = 0; i < 4; i++) {
      for (let c = 0; c < 3; c++) {
        assertAlmostEquals(gs[i * 3 + c], (probs[i * 3 + c] - (batch.labels[i] === c ? 1 : 0)) / 4, 1e-6);
      }
    }
    const { value: cost, grads } = tf.variableGrads(() => f(batch.zs, batch.zn, batch.logDet), prior.params.list());
    for (const g of Object.values(grads)) assert((await g.data()).every(Number.isFinite));
    // A step on z_n's L_nCE part alone: the literal variant raises D_nc's CE on the true labels, the permuted one
    // lowers it on y_perm.
    const nceOnly = { ...options, lambdaM: 0, lambdaN: 1 };
    const g = tf.grad((zn: tf.Tensor) =>
      iceLosses({ ...batch, zn: zn as tf.Tensor2D }, { ...nceOnly, rng: new Rng(3) }).total
    )(batch.zn);
    const stepped = tf.tidy(() => tf.sub(batch.zn, tf.mul(0.5, g)) as tf.Tensor2D);
    const targets = variant === "literal"
      ? batch.labels
      : Int32Array.from(new Rng(3).permutation(4), (i) => batch.labels[i]);
    const [l0, l1] = [nuisance.logits(batch.zn), nuisance.logits(stepped)];
    const [ce0, ce1] = [crossEntropy(await l0.data(), 3, targets), crossEntropy(await l1.data(), 3, targets)];
    assert(variant === "literal" ? ce1 > ce0 : ce1 < ce0, `${variant}: D_nc CE ${ce0} → ${ce1}`);
    tf.dispose([gZs, gZn, gLogDet, softmax, cost, ...Object.values(grads), g, stepped, l0, l1]);
  }
  dispose();
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("update: k Adamax steps teach D_nc to read y off z_n; z_n is untouched and memory flat", async () => {
  const rng = new Rng(11);
  const n = 240, width = 6;
  const labels = Int32Array.from({ length: n }, (_, i) => i % 3);
  const values = new Float32Array(n * width);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < width; k++) values[i * width + k] = rng.normal() + (k === 2 * labels[i] ? 2.5 : 0);
  }
  const zn = tf.tensor2d(values, [n, width]);
  const nuisance = new NuisanceClassifier(new Rng(12), {
    inputs: width,
    classes: 3,
    hidden: [32, 32],
    updates: 40,
    learningRate: 1e-2,
  });
  const accuracy = async () => (await nuisance.predict(zn)).filter((c, i) => c === labels[i]).length / n;
  const start = await accuracy();
  const first = nuisance.update(zn, labels);
  const firstLoss = await value(first);
  first.dispose();
  const afterState = tf.memory().numTensors; // the optimizer's slots exist from the first call on
  const second = nuisance.update(zn, labels);
  const secondLoss = await value(second);
  second.dispose();
  assertEquals(tf.memory().numTensors, afterState);
  const end = await accuracy();
  assert(
    end >= 0.95 && end > start && secondLoss < firstLoss,
    `accuracy ${start} → ${end}, CE ${firstLoss} → ${secondLoss}`,
  );
  assertEquals([...await zn.data()], [...values]);
  tf.dispose(zn);
  nuisance.dispose();
});

Deno.test("update inside the encoder's minimize (the reference's order) equals running it before; no leak", async () => {
  const n = 32, inputs = 6;
  const x = tf.tensor2d(new Rng(1).normalArray(n * inputs), [n, inputs]);
  const labels = Int32Array.from({ length: n }, (_, i) => i % 3);
  const runs: Record<"w" | "d" | "beta", ArrayLike<number>>[] = [];
  for (const nested of [true, false]) {
    const w = tf.variable(tf.tensor2d(new Rng(2).normalArray(inputs * inputs, 0.5), [inputs, inputs]));
    const nuisance = new NuisanceClassifier(new Rng(3), { inputs: 3, classes: 3, hidden: [8], updates: 2 });
    const prior = new FactorialGaussianPrior(3);
    const optimizer = tf.train.adamax(1e-2);
    const permutations = new Rng(4);
    const counts = [];
    for (let step = 0; step < 3; step++) {
      if (!nested) {
        tf.tidy(() => {
          nuisance.update(tf.slice(tf.matMul(x, w), [0, 3], [-1, 3]) as tf.Tensor2D, labels);
        });
      }
      const cost = optimizer.minimize(
        () => {
          const z = tf.matMul(x, w);
          const zn = tf.slice(z, [0, 3], [-1, 3]) as tf.Tensor2D;
          if (nested) nuisance.update(zn, labels);
          const batch = {
            zs: tf.slice(z, [0, 0], [-1, 3]) as tf.Tensor2D,
            zn,
            logDet: tf.zeros([n]) as tf.Tensor1D,
            labels,
          };
          return iceLosses(batch, { nuisance, prior, rng: permutations }).total;
        },
        true,
        [w, ...prior.params.list()],
      );
      cost!.dispose();
      counts.push(tf.memory().numTensors);
    }
    assertEquals(counts[2], counts[1]);
    runs.push({
      w: await w.data(),
      d: await nuisance.params.get("w0").data(),
      beta: await prior.params.get("beta").data(),
    });
    tf.dispose([w]);
    nuisance.dispose();
    prior.dispose();
    optimizer.dispose();
  }
  for (const key of ["w", "d", "beta"] as const) {
    Array.from(runs[0][key]).forEach((v, i) => assertAlmostEquals(v, runs[1][key][i], 1e-6, key));
  }
  x.dispose();
});

Deno.test("bad settings are usage errors naming what is allowed, leaving no tensor behind", () => {
  const before = tf.memory().numTensors;
  const { batch, nuisance, prior, dispose } = tinyCase();
  const rng = new Rng(0);
  const run = (options: IceOptions) => iceLosses(batch, { nuisance, prior, rng, ...options });
  assertThrows(() => run({ lambdaN: -0.1 }), UsageError, "lambda_n = -0.1");
  assertThrows(() => run({ lambdaM: -1 }), UsageError, "≥ 0");
  assertThrows(() => run({ variant: "adversarial" as IceVariant }), UsageError, "permuted, literal");
  assertThrows(() => run({ objective: "nll" as "ce" }), UsageError, "ice, ce");
  assertThrows(() => iceLosses(batch, { prior, rng }), UsageError, "nuisance classifier");
  assertThrows(() => iceLosses(batch, { nuisance, rng }), UsageError, "prior");
  assertThrows(() => iceLosses(batch, { nuisance, prior }), UsageError, "rng");
  assertThrows(
    () => iceLosses({ ...batch, labels: Int32Array.from([0, 3, 1, 2]) }, { objective: "ce" }),
    UsageError,
    "0..2",
  );
  const wrong = tf.zeros([4, 5]) as tf.Tensor2D;
  assertThrows(() => nuisance.logits(wrong), UsageError, "[batch, 2]");
  assertThrows(() => nuisance.update(wrong, batch.labels), UsageError, "[batch, 2]");
  assertThrows(() => iceLosses({ ...batch, zn: wrong }, { nuisance, prior, rng }), UsageError, "[batch, 2]");
  assertThrows(() => nuisance.update(batch.zn, Int32Array.from([0, 1])), UsageError, "2 labels for a batch of 4");
  wrong.dispose();
  assertThrows(() => new NuisanceClassifier(rng, { inputs: 4, hidden: [0] }), UsageError, "≥ 1");
  assertThrows(() => new NuisanceClassifier(rng, { inputs: 4, dropout: 1 }), UsageError, "0 ≤ p < 1");
  dispose();
  assertEquals(tf.memory().numTensors, before);
});
