import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import { calibratedSoftmax, fitCalibration, fitClassScales } from "../../lib/models/abs_calibration.ts";

Deno.test("calibratedSoftmax equals the float64 formula and keeps η exact for extreme logits", () => {
  const logits = [-0.02, -0.05, -0.11, -0.3, 0.4, 0.1];
  for (const [alpha, eta] of [[440, 3.9e-5], [1, 143_900], [5, 4e-12], [2, 0]]) {
    const p = calibratedSoftmax(logits, 3, alpha, eta);
    for (let i = 0; i < 2; i++) {
      const e = logits.slice(3 * i, 3 * i + 3).map((l) => Math.exp(alpha * l));
      const total = e.reduce((a, b) => a + b, 0) + 3 * eta;
      e.forEach((v, c) => assertAlmostEquals(p[3 * i + c], (v + eta) / total, 1e-15));
    }
  }
  // e^{α·logit} far below η: the posterior is uniform, not NaN; far above: one-hot plus η.
  const far = calibratedSoftmax([-10, -10.5, -11], 3, 440, 3.9e-5);
  far.forEach((v) => assertAlmostEquals(v, 1 / 3, 1e-12));
  const near = calibratedSoftmax([10, 0, -1], 3, 440, 3.9e-5);
  assertAlmostEquals(near[1], 3.9e-5 * Math.exp(-4400), 1e-300);
  assertAlmostEquals(near[0], 1, 1e-12);
});

Deno.test("fitCalibration recovers α from labels drawn by a softmax and sets the median confidence to 0.9", () => {
  const rng = new Rng(12);
  const n = 4000, classes = 4, alpha = 30;
  const logits = new Float64Array(n * classes), labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < classes; c++) logits[i * classes + c] = 0.2 * rng.normal();
    const p = calibratedSoftmax(logits.subarray(i * classes, (i + 1) * classes), classes, alpha, 0);
    let u = rng.uniform(), c = 0;
    while (c < classes - 1 && (u -= p[c]) > 0) c++;
    labels[i] = c;
  }
  const fit = fitCalibration({ logits, labels, classes });
  assert(Math.abs(fit.alpha / alpha - 1) < 0.1, `α ${fit.alpha}`);
  const p = calibratedSoftmax(logits, classes, fit.alpha, fit.eta);
  const top = Array.from({ length: n }, (_, i) => Math.max(...p.subarray(i * classes, (i + 1) * classes))).sort();
  assertAlmostEquals((top[n / 2 - 1] + top[n / 2]) / 2, 0.9, 1e-9);
  assert(fit.eta > 0);
  // Already below the target: no η.
  assertEquals(fitCalibration({ logits, labels, classes, targetConfidence: 0.999 }).eta, 0);
});

Deno.test("fitClassScales finds the scale that undoes a class's inflated losses", () => {
  const rng = new Rng(13);
  const n = 600, classes = 3;
  const losses = new Float64Array(n * classes), labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    labels[i] = i % classes;
    for (let c = 0; c < classes; c++) losses[i * classes + c] = 1 + 0.1 * rng.uniform() - (c === labels[i] ? 0.05 : 0);
    losses[i * classes + 2] *= 1.06; // class 2's losses inflated
  }
  const scales = fitClassScales(losses, labels, classes);
  assertEquals(scales[0], 1);
  assert(Math.abs(scales[1] - 1) < 0.02, `${scales}`);
  assert(Math.abs(scales[2] - 1 / 1.06) < 0.02, `${scales}`);
});
