import { assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { ece, jeffrey, relativeMce, w2, w2Normalized } from "../../lib/metrics/robustness.ts";

/** tests/metrics/fixtures/reference_robustness.json, written by make_robustness_reference.py (numpy, scipy). */
const reference = JSON.parse(
  Deno.readTextFileSync(new URL("./fixtures/reference_robustness.json", import.meta.url)),
) as {
  ece: { classes: number; bins: number; probs: number[]; labels: number[]; ece: number; float64?: boolean }[];
  gaussians: {
    mu_s: number[];
    var_s: number[];
    mu_t: number[];
    var_t: number[];
    w2: number;
    w2_normalized: number;
    jeffrey: number;
  }[];
};

Deno.test("ece: a hand-computed case with three occupied bins", () => {
  // 5 bins: confidences 0.9, 0.9 (bin 4, one right: acc 0.5, conf 0.9), 0.7 (bin 3, right),
  // 0.6 (bin 2, exactly on the boundary 3/5 → bin (0.4, 0.6], wrong).
  const probs = Float64Array.from([0.9, 0.1, 0.1, 0.9, 0.7, 0.3, 0.4, 0.6]);
  const labels = Int32Array.from([0, 0, 0, 0]);
  const expected = (2 / 4) * Math.abs(0.5 - 0.9) + (1 / 4) * Math.abs(1 - 0.7) + (1 / 4) * Math.abs(0 - 0.6);
  assertAlmostEquals(ece(probs, labels, 2, 5), expected, 1e-15);
  // A perfectly calibrated one-hot model.
  assertEquals(ece(Float32Array.from([1, 0, 0, 1]), Int32Array.from([0, 1]), 2), 0);
  // One bin: |accuracy − mean confidence|.
  assertAlmostEquals(ece(probs, labels, 2, 1), Math.abs(0.5 - (0.9 + 0.9 + 0.7 + 0.6) / 4), 1e-15);
});

Deno.test("ece: equals numpy's _ECELoss on random predictions and on confidences at the boundaries", () => {
  for (const c of reference.ece) {
    const probs = c.float64 ? Float64Array.from(c.probs) : Float32Array.from(c.probs);
    assertAlmostEquals(ece(probs, Int32Array.from(c.labels), c.classes, c.bins), c.ece, 1e-12);
  }
});

Deno.test("ece: refuses bad input", () => {
  const probs = Float32Array.from([0.6, 0.4, 0.3, 0.7]), labels = Int32Array.from([0, 1]);
  assertThrows(() => ece(probs, labels, 3), UsageError);
  assertThrows(() => ece(probs, labels, 1), UsageError);
  assertThrows(() => ece(probs, labels, 2, 0), UsageError);
  assertThrows(() => ece(probs, Int32Array.from([0, 2]), 2), UsageError);
  assertThrows(() => ece(probs, new Int32Array(0), 2), UsageError);
  assertThrows(() => ece(Float32Array.from([0.6, NaN, 0.3, 0.7]), labels, 2), UsageError);
  assertThrows(() => ece(Float32Array.from([1.5, -0.5, 0.3, 0.7]), labels, 2), UsageError);
});

Deno.test("w2, w2Normalized, jeffrey: 1-D closed forms, identity and equal Gaussians give 0", () => {
  const [muS, sdS, muT, sdT] = [0.3, 1.7, -1.1, 0.6];
  const args = [[muS], [sdS ** 2], [muT], [sdT ** 2]] as const;
  assertAlmostEquals(w2(...args), (muT - muS) ** 2 + (sdT - sdS) ** 2, 1e-14);
  const ratio = sdT / sdS;
  assertAlmostEquals(w2Normalized(...args), 1 + ratio ** 2 - 2 * ratio + (muT - muS) ** 2 / sdS ** 2, 1e-14);
  assertAlmostEquals(w2Normalized(...args), w2(...args) / sdS ** 2, 1e-14);
  const kl = (ma: number, va: number, mb: number, vb: number) =>
    0.5 * (va / vb + (ma - mb) ** 2 / vb - 1 + Math.log(vb / va));
  assertAlmostEquals(
    jeffrey(...args),
    0.5 * (kl(muS, sdS ** 2, muT, sdT ** 2) + kl(muT, sdT ** 2, muS, sdS ** 2)),
    1e-14,
  );
  const mu = [0.5, -2, 3], variance = [0.1, 4, 2.5];
  assertEquals(w2(mu, variance, mu, variance), 0);
  assertEquals(w2Normalized(mu, variance, mu, variance), 0);
  assertEquals(jeffrey(mu, variance, mu, variance), 0);
  // Per-channel sums: two channels score the sum of their 1-D values.
  const two = w2([muS, 1], [sdS ** 2, 1], [muT, 2], [sdT ** 2, 9]);
  assertAlmostEquals(two, w2(...args) + 1 + 4, 1e-14);
});

Deno.test("w2, w2Normalized, jeffrey: equal scipy's matrix formulas on random diagonal Gaussians", () => {
  for (const g of reference.gaussians) {
    const args = [g.mu_s, g.var_s, g.mu_t, g.var_t] as const;
    const scale = (v: number) => 1e-12 * Math.max(1, Math.abs(v));
    assertAlmostEquals(w2(...args), g.w2, scale(g.w2));
    assertAlmostEquals(w2Normalized(...args), g.w2_normalized, scale(g.w2_normalized));
    assertAlmostEquals(jeffrey(...args), g.jeffrey, scale(g.jeffrey));
  }
});

Deno.test("w2, w2Normalized, jeffrey: refuse unequal lengths, non-finite values and bad variances", () => {
  assertThrows(() => w2([], [], [], []), UsageError);
  assertThrows(() => w2([0, 1], [1], [0], [1]), UsageError);
  assertThrows(() => w2([NaN], [1], [0], [1]), UsageError);
  assertThrows(() => w2([0], [-1], [0], [1]), UsageError);
  assertThrows(() => w2([0], [1], [0], [Infinity]), UsageError);
  assertEquals(w2([0], [0], [0], [0]), 0);
  assertThrows(() => w2Normalized([0], [0], [0], [1]), UsageError);
  assertEquals(w2Normalized([0], [4], [0], [0]), 1);
  assertThrows(() => jeffrey([0], [1], [0], [0]), UsageError);
  assertThrows(() => jeffrey([0], [0], [0], [1]), UsageError);
});

Deno.test("relativeMce: mean over corruptions of summed errors relative to the reference's", () => {
  const model = { a: [0.9, 0.7], b: [0.5, 0.5] };
  const reference = { a: [0.8, 0.6], b: [0.75, 0.75] };
  const expected = ((0.1 + 0.3) / (0.2 + 0.4) + (0.5 + 0.5) / (0.25 + 0.25)) / 2;
  assertAlmostEquals(relativeMce(model, reference), expected, 1e-15);
  assertEquals(relativeMce(reference, reference), 1);
  assertThrows(() => relativeMce(model, { a: [0.8, 0.6] }), UsageError);
  assertThrows(() => relativeMce({ a: [1.2] }, { a: [0.5] }), UsageError);
});
