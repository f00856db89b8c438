import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { type Distance, goodnessOfFitBits, infoNce, lpInfoNce, simclrLoss } from "../../lib/contrastive/infonce.ts";

await selectBackend("wasm");

interface FixedCase {
  distance: Distance;
  temperature: number;
  total: number;
  align: number;
  uniform: number;
  alignStable: number;
  uniformStable: number;
  gradRef: number[];
  gradPos: number[];
  gradNeg: number[];
}
interface LearnableCase {
  distance: Distance;
  alpha: number;
  minTemperature: number;
  total: number;
  align: number;
  uniform: number;
  gradAlpha: number;
  gradRef: number[];
}
interface LpCase {
  p: number;
  tau: number;
  pow: boolean;
  simclrCompatibility: boolean;
  loss: number;
  gradH1: number[];
  gradH2: number[];
}
interface Reference {
  infonce: {
    rows: number;
    negRows: number;
    dims: number;
    inputs: Record<Distance, { ref: number[]; pos: number[]; neg: number[] }>;
    fixed: FixedCase[];
    learnable: LearnableCase[];
  };
  clica: {
    rows: number;
    dims: number;
    h1: number[];
    h2: number[];
    sphere1: number[];
    sphere2: number[];
    lp: LpCase[];
    simclr: { tau: number; loss: number; gradH1: number[]; gradH2: number[] }[];
  };
}

const reference: Reference = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/reference_infonce.json", import.meta.url)),
);

/** |actual − expected| ≤ tol · max(1, |expected|): float32 against float64 torch. */
function close(actual: number, expected: number, tol: number, what: string): void {
  assertAlmostEquals(actual, expected, tol * Math.max(1, Math.abs(expected)), `${what}: ${actual} vs ${expected}`);
}

function closeAll(actual: ArrayLike<number>, expected: number[], tol: number, what: string): void {
  assertEquals(actual.length, expected.length, what);
  let scale = 1;
  for (const v of expected) scale = Math.max(scale, Math.abs(v));
  for (let i = 0; i < expected.length; i++) {
    assertAlmostEquals(actual[i], expected[i], tol * scale, `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
  }
}

const { rows, negRows, dims } = reference.infonce;
function inputs(distance: Distance): [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D] {
  const x = reference.infonce.inputs[distance];
  return [tf.tensor2d(x.ref, [rows, dims]), tf.tensor2d(x.pos, [rows, dims]), tf.tensor2d(x.neg, [negRows, dims])];
}

Deno.test("infoNce matches CEBRA's stabilised and naive torch forms: loss, align, uniform, gradients, τ ∈ {0.1, 1, 5}", () => {
  for (const c of reference.infonce.fixed) {
    const what = `${c.distance} τ ${c.temperature}`;
    const [ref, pos, neg] = inputs(c.distance);
    const before = tf.memory().numTensors;
    const terms = infoNce(ref, pos, neg, { distance: c.distance, temperature: c.temperature });
    close(terms.total.dataSync()[0], c.total, 1e-5, `${what} total`);
    close(terms.align.dataSync()[0], c.align, 1e-5, `${what} align`);
    close(terms.uniform.dataSync()[0], c.uniform, 1e-5, `${what} uniform`);
    tf.dispose([terms.total, terms.align, terms.uniform]);
    assertEquals(tf.memory().numTensors, before, `${what}: tensors left`);
    const grads = tf.grads((r: tf.Tensor, p: tf.Tensor, n: tf.Tensor) =>
      infoNce(r as tf.Tensor2D, p as tf.Tensor2D, n as tf.Tensor2D, {
        distance: c.distance,
        temperature: c.temperature,
      }).total
    )([ref, pos, neg]);
    closeAll(grads[0].dataSync(), c.gradRef, 1e-5, `${what} ∂ref`);
    closeAll(grads[1].dataSync(), c.gradPos, 1e-5, `${what} ∂pos`);
    closeAll(grads[2].dataSync(), c.gradNeg, 1e-5, `${what} ∂neg`);
    tf.dispose([...grads, ref, pos, neg]);
  }
});

Deno.test("infoNce with a learnable temperature: loss and ∂α as torch, e^α clamped at 1/minTemperature with ∂α = 0 beyond", () => {
  for (const c of reference.infonce.learnable) {
    const what = `${c.distance} α ${c.alpha.toFixed(3)}`;
    const [ref, pos, neg] = inputs(c.distance);
    const alpha = tf.variable(tf.scalar(c.alpha));
    const options = { distance: c.distance, logInverseTemperature: alpha, minTemperature: c.minTemperature };
    const before = tf.memory().numTensors;
    const { value, grads } = tf.variableGrads(() => {
      const terms = infoNce(ref, pos, neg, options);
      tf.dispose([terms.align, terms.uniform]);
      return terms.total;
    }, [alpha]);
    close(value.dataSync()[0], c.total, 1e-5, `${what} total`);
    close(grads[alpha.name].dataSync()[0], c.gradAlpha, 1e-5, `${what} ∂α`);
    tf.dispose([value, grads[alpha.name]]);
    assertEquals(tf.memory().numTensors, before, `${what}: tensors left`);
    const gradRef = tf.grad((r: tf.Tensor) => infoNce(r as tf.Tensor2D, pos, neg, options).total)(ref);
    closeAll(gradRef.dataSync(), c.gradRef, 1e-5, `${what} ∂ref`);
    if (c.alpha > -Math.log(c.minTemperature)) assertEquals(c.gradAlpha, 0, "the clamped case has no α gradient");
    tf.dispose([gradRef, ref, pos, neg, alpha]);
  }
});

Deno.test("infoNce: a perfectly aligned positive lowers the loss; the same positive scores chance for every negative", () => {
  const [ref, pos, neg] = inputs("cosine");
  const aligned = infoNce(ref, ref, neg, { distance: "cosine" });
  const random = infoNce(ref, pos, neg, { distance: "cosine" });
  assert(aligned.total.dataSync()[0] < random.total.dataSync()[0]);
  // Identical rows everywhere: φ constant, loss = log m (GoF 0 bits).
  const same = tf.ones([8, 3]) as tf.Tensor2D;
  const flat = infoNce(same, same, same, { distance: "euclidean", temperature: 0.3 });
  assertAlmostEquals(flat.total.dataSync()[0], Math.log(8), 1e-6);
  assertAlmostEquals(goodnessOfFitBits(flat.total.dataSync()[0], 8), 0, 1e-6);
  tf.dispose([aligned.total, aligned.align, aligned.uniform, random.total, random.align, random.uniform]);
  tf.dispose([flat.total, flat.align, flat.uniform, same, ref, pos, neg]);
});

Deno.test("lpInfoNce matches cl-ica's LpSimCLRLoss (p ∈ {0.5, 1, 2, 3}, pow, compatibility mode): loss and gradients", () => {
  const { rows: n, dims: d } = reference.clica;
  const h1 = tf.tensor2d(reference.clica.h1, [n, d]), h2 = tf.tensor2d(reference.clica.h2, [n, d]);
  for (const c of reference.clica.lp) {
    const what = `p ${c.p} τ ${c.tau} pow ${c.pow} compat ${c.simclrCompatibility}`;
    const options = { p: c.p, tau: c.tau, pow: c.pow, simclrCompatibility: c.simclrCompatibility };
    const before = tf.memory().numTensors;
    const loss = lpInfoNce(h1, h2, options);
    close(loss.dataSync()[0], c.loss, 1e-5, `${what} loss`);
    loss.dispose();
    assertEquals(tf.memory().numTensors, before, `${what}: tensors left`);
    const grads = tf.grads((a: tf.Tensor, b: tf.Tensor) => lpInfoNce(a as tf.Tensor2D, b as tf.Tensor2D, options))([
      h1,
      h2,
    ]);
    closeAll(grads[0].dataSync(), c.gradH1, 1e-5, `${what} ∂h1`);
    closeAll(grads[1].dataSync(), c.gradH2, 1e-5, `${what} ∂h2`);
    tf.dispose(grads);
    assertEquals(tf.memory().numTensors, before, `${what}: tensors left by the gradient`);
  }
  tf.dispose([h1, h2]);
});

Deno.test("simclrLoss matches cl-ica's SimCLRLoss on the sphere, τ ∈ {0.1, 1, 5}", () => {
  const { rows: n, dims: d } = reference.clica;
  const h1 = tf.tensor2d(reference.clica.sphere1, [n, d]), h2 = tf.tensor2d(reference.clica.sphere2, [n, d]);
  for (const c of reference.clica.simclr) {
    const loss = simclrLoss(h1, h2, c.tau);
    close(loss.dataSync()[0], c.loss, 1e-5, `τ ${c.tau} loss`);
    loss.dispose();
    const grads = tf.grads((a: tf.Tensor, b: tf.Tensor) => simclrLoss(a as tf.Tensor2D, b as tf.Tensor2D, c.tau))([
      h1,
      h2,
    ]);
    closeAll(grads[0].dataSync(), c.gradH1, 1e-5, `τ ${c.tau} ∂h1`);
    closeAll(grads[1].dataSync(), c.gradH2, 1e-5, `τ ${c.tau} ∂h2`);
    tf.dispose(grads);
  }
  tf.dispose([h1, h2]);
});

Deno.test("goodnessOfFitBits is (ln(batch·sessions) − loss)·log₂e", () => {
  assertAlmostEquals(goodnessOfFitBits(Math.log(512), 512), 0, 1e-12);
  assertAlmostEquals(goodnessOfFitBits(Math.log(512) - 1, 512), Math.LOG2E, 1e-12);
  assertAlmostEquals(goodnessOfFitBits(5, 512, 4), (Math.log(2048) - 5) / Math.LN2, 1e-12);
  assertThrows(() => goodnessOfFitBits(1, 0), UsageError, "batchSize");
  assertThrows(() => goodnessOfFitBits(NaN, 10), UsageError, "finite");
  assertThrows(() => goodnessOfFitBits(1, 10, 1.5), UsageError, "sessions");
});

Deno.test("infoNce, lpInfoNce, simclrLoss reject bad input before any work", () => {
  const a = tf.zeros([4, 3]) as tf.Tensor2D, b = tf.zeros([4, 2]) as tf.Tensor2D, c = tf.zeros([5, 3]) as tf.Tensor2D;
  const before = tf.memory().numTensors;
  assertThrows(() => infoNce(a, b, a, { distance: "cosine" }), UsageError, "same shape");
  assertThrows(() => infoNce(a, c, a, { distance: "cosine" }), UsageError, "same shape");
  assertThrows(() => infoNce(a, a, b, { distance: "cosine" }), UsageError, "equal widths");
  assertThrows(() => infoNce(a, a, a, { distance: "l1" as Distance }), UsageError, "cosine, euclidean");
  assertThrows(() => infoNce(a, a, a, { distance: "cosine", temperature: 0 }), UsageError, "temperature");
  assertThrows(() => lpInfoNce(a, a, { p: -1, tau: 1 }), UsageError, "p must");
  assertThrows(() => simclrLoss(a, c, 1), UsageError, "same shape");
  assertEquals(tf.memory().numTensors, before);
  tf.dispose([a, b, c]);
});
