import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { adaptStep, entropy, gce, hardPseudoLabel, softPseudoLabel } from "../../lib/adapt/self_learning.ts";
import { bnCnn } from "../../lib/models/bn_cnn.ts";

await selectBackend("wasm");

// Float64 references, written from the equations (Schneider2023 eqs. 3.1–3.5).
type Rows = number[][];

function softmax64(row: number[], tau = 1): number[] {
  const max = Math.max(...row.map((v) => v / tau));
  const e = row.map((v) => Math.exp(v / tau - max));
  const total = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / total);
}

const argmax = (row: number[]) => row.indexOf(Math.max(...row));
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

function entropy64(z: Rows): number {
  return mean(z.map((row) => -softmax64(row).reduce((s, p) => s + p * Math.log(p), 0)));
}

/** GCE with the labels of `labels` (argmax of the teacher, held fixed). */
function gce64(z: Rows, q: number, labels = z.map(argmax)): number {
  return mean(z.map((row, b) => (1 - softmax64(row)[labels[b]] ** q) / q));
}

function hardPl64(z: Rows, threshold: number, teacher = z): number {
  const losses = z.flatMap((row, b) => {
    const pt = softmax64(teacher[b]);
    return Math.max(...pt) > threshold ? [-Math.log(softmax64(row)[argmax(teacher[b])])] : [];
  });
  return losses.length ? mean(losses) : 0;
}

function softPl64(teacher: Rows, student: Rows, tauT: number, tauS: number): number {
  return mean(student.map((row, b) => {
    const pt = softmax64(teacher[b], tauT), ps = softmax64(row, tauS);
    return -pt.reduce((s, p, j) => s + p * Math.log(ps[j]), 0);
  }));
}

/** Central differences of `f` at `z`, step h (float64). */
function numericGradient(f: (z: Rows) => number, z: Rows, h = 1e-5): Rows {
  return z.map((row, b) =>
    row.map((_, j) => {
      const plus = z.map((r) => [...r]), minus = z.map((r) => [...r]);
      plus[b][j] += h;
      minus[b][j] -= h;
      return (f(plus) - f(minus)) / (2 * h);
    })
  );
}

/** Logits [rows, classes] from a seeded normal, as float32-representable numbers. */
function randomLogits(seed: number, rows: number, classes: number, scale: number): Rows {
  const values = new Rng(seed).normalArray(rows * classes, scale);
  return Array.from({ length: rows }, (_, b) => Array.from(values.subarray(b * classes, (b + 1) * classes)));
}

function tfValue(f: (z: tf.Tensor2D) => tf.Scalar, z: Rows): number {
  return tf.tidy(() => f(tf.tensor2d(z)).dataSync()[0]);
}

function tfGradient(f: (z: tf.Tensor2D) => tf.Scalar, z: Rows): Rows {
  const flat = tf.tidy(() => tf.grad((x) => f(x as tf.Tensor2D))(tf.tensor2d(z)).dataSync());
  return z.map((row, b) => Array.from(flat.subarray(b * row.length, (b + 1) * row.length)));
}

function assertRowsClose(actual: Rows, expected: Rows, tolerance: number, what: string): void {
  actual.forEach((row, b) =>
    row.forEach((v, j) =>
      assertAlmostEquals(v, expected[b][j], tolerance, `${what}[${b}][${j}]: ${v} vs ${expected[b][j]}`)
    )
  );
}

Deno.test("entropy: equal logits give ln C for every C; matches the float64 formula on random logits", () => {
  for (const classes of [2, 5, 10, 1000]) {
    const z = [new Array(classes).fill(3), new Array(classes).fill(-7.5)];
    // A float32 sum of C terms: relative error grows with C (8e-6 seen at C = 1000).
    assertAlmostEquals(tfValue(entropy, z), Math.log(classes), (classes > 10 ? 1e-5 : 1e-6) * Math.log(classes));
  }
  const z = randomLogits(1, 6, 10, 3);
  assertAlmostEquals(tfValue(entropy, z), entropy64(z), 1e-6);
});

Deno.test("gce: q = 1 is 1 − p_argmax (MAE); q = 0.8 matches (1 − p^q)/q; q → 0 tends to the cross-entropy", () => {
  const z = randomLogits(2, 8, 10, 2);
  const pMax = z.map((row) => Math.max(...softmax64(row)));
  assertAlmostEquals(tfValue((l) => gce(l, 1), z), mean(pMax.map((p) => 1 - p)), 1e-6);
  assertAlmostEquals(tfValue((l) => gce(l, 0.8), z), gce64(z, 0.8), 1e-6);
  const crossEntropy = mean(pMax.map((p) => -Math.log(p)));
  // (1 − p^q)/q = −log p − q log²p/2 + …: at q = 1e-4 within 1e-3 of CE (here ≈ 1e-4 away).
  const small = tfValue((l) => gce(l, 1e-4), z);
  assertAlmostEquals(small, crossEntropy, 1e-3);
  // expm1 keeps the float32 result on the float64 curve even at q = 1e-4 (1 − p^q would cancel).
  assertAlmostEquals(small, gce64(z, 1e-4), 1e-6);
});

Deno.test("hardPseudoLabel: CE to the argmax over samples with max p > threshold (strict), 0 when none", () => {
  // max p: 0.5 exactly (two equal logits, the rest at −∞ in float32), ≈ 0.9526, ≈ 0.3672.
  const z = [[0, 0, -200], [3, 0, 0], [0.5, 0, 0]];
  const pMax = z.map((row) => Math.max(...softmax64(row)));
  const ce = z.map((row) => -Math.log(Math.max(...softmax64(row))));
  assertAlmostEquals(tfValue((l) => hardPseudoLabel(l, 0), z), mean(ce), 1e-6);
  assertAlmostEquals(tfValue((l) => hardPseudoLabel(l, 0.36), z), mean(ce), 1e-6);
  // 0.5 is not > 0.5: only row 1 is kept.
  assertAlmostEquals(tfValue((l) => hardPseudoLabel(l, 0.5), z), ce[1], 1e-6);
  assertAlmostEquals(tfValue((l) => hardPseudoLabel(l, 0.49), z), (ce[0] + ce[1]) / 2, 1e-6);
  assertAlmostEquals(tfValue((l) => hardPseudoLabel(l, pMax[1] + 1e-3), z), 0, 0);
  // None kept: zero gradient too.
  assert(tfGradient((l) => hardPseudoLabel(l, 0.99), z).flat().every((g) => g === 0));
});

Deno.test("softPseudoLabel: matches the float64 formula; equal teacher and student at τ = 1 give the entropy", () => {
  const teacher = randomLogits(3, 5, 7, 2), student = randomLogits(4, 5, 7, 2);
  assertAlmostEquals(
    tf.tidy(() => softPseudoLabel(tf.tensor2d(teacher), tf.tensor2d(student), 0.5, 2).dataSync()[0]),
    softPl64(teacher, student, 0.5, 2),
    1e-6,
  );
  assertAlmostEquals(tfValue((l) => softPseudoLabel(l, l, 1, 1), teacher), entropy64(teacher), 1e-6);
});

Deno.test("gradients of entropy, gce, hard and soft PL match float64 central differences (teacher held fixed)", () => {
  const z = randomLogits(5, 6, 10, 2);
  const labels = z.map(argmax);
  const cases: [string, (l: tf.Tensor2D) => tf.Scalar, (x: Rows) => number][] = [
    ["entropy", entropy, entropy64],
    ["gce q 0.8", (l) => gce(l, 0.8), (x) => gce64(x, 0.8, labels)],
    ["gce q 0.3", (l) => gce(l, 0.3), (x) => gce64(x, 0.3, labels)],
    ["hard PL 0.4", (l) => hardPseudoLabel(l, 0.4), (x) => hardPl64(x, 0.4, z)],
    // The same tensor as teacher and student: the stop-gradient leaves only the student path.
    ["soft PL 0.5/2", (l) => softPseudoLabel(l, l, 0.5, 2), (x) => softPl64(z, x, 0.5, 2)],
    ["soft PL 1/1", (l) => softPseudoLabel(l, l, 1, 1), (x) => softPl64(z, x, 1, 1)],
  ];
  for (const [name, f, f64] of cases) {
    const numeric = numericGradient(f64, z);
    assertRowsClose(tfGradient(f, z), numeric, 1e-7, name);
  }
  // Without the stop-gradient soft PL at τ = 1 would be the entropy, whose gradient differs.
  assertNotEquals(tfGradient((l) => softPseudoLabel(l, l, 1, 1), z), tfGradient(entropy, z));
});

Deno.test("losses reject q ∉ (0, 1], τ ≤ 0, threshold ∉ [0, 1) with UsageError", () => {
  const z = tf.tensor2d([[1, 2], [0, 1]]);
  for (const q of [0, -0.5, 1.5, NaN]) assertThrows(() => gce(z, q), UsageError, "q must lie in (0, 1]");
  for (const threshold of [1, -0.1, NaN]) {
    assertThrows(() => hardPseudoLabel(z, threshold), UsageError, "threshold must lie in [0, 1)");
  }
  for (const tau of [0, -1, NaN, Infinity]) {
    assertThrows(() => softPseudoLabel(z, z, tau, 1), UsageError, "tauT");
    assertThrows(() => softPseudoLabel(z, z, 1, tau), UsageError, "tauS");
  }
  assertThrows(() => softPseudoLabel(z, tf.zeros([2, 3]) as tf.Tensor2D, 1, 1), UsageError, "[batch, classes]");
  z.dispose();
});

function images(seed: number, batch: number): tf.Tensor4D {
  return tf.tensor4d(Float32Array.from(new Rng(seed).normalArray(batch * 784, 1), (v) => Math.abs(v) / 3), [
    batch,
    28,
    28,
    1,
  ]);
}

async function values(variables: tf.Variable[]): Promise<Float32Array[]> {
  return await Promise.all(variables.map(async (v) => await v.data() as Float32Array));
}

Deno.test("adaptStep: returns the pre-update batch-mode logits; trains exactly the chosen parameters; memory flat", async () => {
  const x = images(7, 12);
  for (const params of ["affine", "all", "last"] as const) {
    const model = bnCnn(Rng.derive(7, "model"), { norm: "batch" });
    const chosen = new Set(
      (params === "affine" ? model.affineParams() : params === "all" ? model.allParams() : model.lastLayerParams())
        .map((v) => v.name),
    );
    const tracked = [...model.params.list(), ...model.stats.list()];
    const before = await values(tracked);
    const expectedLogits = tf.tidy(() => model.logits(x, { kind: "batch" }).dataSync());
    // Plain SGD: the update must be θ − lr·∇θ with ∇θ of the same loss (checked on one chosen tensor).
    const optimizer = tf.train.sgd(0.1);
    const probe = tracked.find((v) => chosen.has(v.name))!;
    const gradient = tf.tidy(() =>
      tf.variableGrads(() => entropy(model.logits(x, { kind: "batch" })), [probe]).grads[probe.name].dataSync()
    );
    const logits = await adaptStep(model, x, entropy, optimizer, params);
    assertEquals(logits, expectedLogits);
    const after = await values(tracked);
    tracked.forEach((v, i) => {
      if (chosen.has(v.name)) assertNotEquals(after[i], before[i], `${params}: ${v.name} should move`);
      else assertEquals(after[i], before[i], `${params}: ${v.name} must stay bit-identical`);
    });
    const i = tracked.indexOf(probe);
    after[i].forEach((v, k) => assertAlmostEquals(v, before[i][k] - 0.1 * gradient[k], 1e-6));
    // A second and third step allocate nothing that stays.
    const momentum = tf.train.momentum(1e-3, 0.9);
    await adaptStep(model, x, (l) => gce(l, 0.8), momentum, params);
    const count = tf.memory().numTensors;
    await adaptStep(model, x, (l) => gce(l, 0.8), momentum, params);
    assertEquals(tf.memory().numTensors, count);
    optimizer.dispose();
    momentum.dispose();
    model.dispose();
  }
  x.dispose();
});

Deno.test("adaptStep rejects an unknown parameter choice", async () => {
  const model = bnCnn(new Rng(1), { norm: "batch" });
  const x = images(1, 2), optimizer = tf.train.sgd(0.1);
  let error: unknown;
  try {
    await adaptStep(model, x, entropy, optimizer, "bn" as "affine");
  } catch (e) {
    error = e;
  }
  assert(error instanceof UsageError && error.message.includes("affine, all, last"), `${error}`);
  tf.dispose([x]);
  optimizer.dispose();
  model.dispose();
});
