/** The RegCL synthetic data: shapes, the reflected walk, the ground-truth mask and the generator's Jacobian. */
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { blockMlp, reflect, reflectedWalk, regclSynthetic } from "../../lib/data/regcl_synthetic.ts";

Deno.test("regclSynthetic returns z [T, k], x [T, 50], c₂ = the last two latents and a [50, k] mask", () => {
  const k = 5, T = 300;
  const data = regclSynthetic(new Rng(1), { latents: k, samples: T });
  assertEquals([data.z.rows, data.z.cols, data.x.rows, data.x.cols], [T, k, T, 50]);
  assertEquals([data.c2.rows, data.c2.cols, data.truth.length], [T, 2, 50 * k]);
  for (let t = 0; t < T; t++) {
    assertEquals(data.c2.data[2 * t], data.z.data[t * k + 3]);
    assertEquals(data.c2.data[2 * t + 1], data.z.data[t * k + 4]);
  }
  const again = regclSynthetic(new Rng(1), { latents: k, samples: T });
  assertEquals(Array.from(again.x.data), Array.from(data.x.data));
  // The observations are the generator applied to the latents.
  assertEquals(Array.from(data.generator(data.z).data), Array.from(data.x.data));
});

Deno.test("the truth mask is 0 exactly on the x₁ rows × z₂ columns", () => {
  const k = 6;
  const { truth } = regclSynthetic(new Rng(2), { latents: k, samples: 10 });
  for (let i = 0; i < 50; i++) {
    for (let j = 0; j < k; j++) assertEquals(truth[i * k + j], i < 25 && j >= k - 2 ? 0 : 1, `entry ${i}, ${j}`);
  }
});

Deno.test("reflect folds values back into [−1, 1] by mirroring at the faces", () => {
  assertAlmostEquals(reflect(1.3), 0.7, 1e-15);
  assertAlmostEquals(reflect(-1.2), -0.8, 1e-15);
  assertAlmostEquals(reflect(3.5), -0.5, 1e-15); // 2 − 3.5 = −1.5, then −2 + 1.5
  assertEquals(reflect(0.25), 0.25);
  assertEquals(reflect(1), 1);
});

Deno.test("the reflected walk stays in [−1, 1] and its interior increments have sd = step", () => {
  for (const step of [0.05, 0.7]) {
    const z = reflectedWalk(new Rng(3), 20_000, 3, step);
    let sq = 0, count = 0;
    for (let i = 0; i < z.data.length; i++) {
      assert(z.data[i] >= -1 && z.data[i] <= 1, `z = ${z.data[i]}`);
      // Increments between points far from the faces were not reflected.
      if (i >= 3 && Math.abs(z.data[i]) < 1 - 6 * step && Math.abs(z.data[i - 3]) < 1 - 6 * step) {
        sq += (z.data[i] - z.data[i - 3]) ** 2;
        count++;
      }
    }
    // A large step has no interior to speak of; only the range is checked there.
    if (count > 1000) assertAlmostEquals(Math.sqrt(sq / count), step, 0.03 * step);
  }
});

Deno.test("the generator's Jacobian (central differences) is zero exactly where the truth is 0", () => {
  const k = 5;
  const data = regclSynthetic(new Rng(4), { latents: k, samples: 50 });
  const eps = 1e-6;
  const maxAbs = new Float64Array(50 * k);
  for (const t of [0, 17, 33, 49]) {
    for (let j = 0; j < k; j++) {
      const plus = Float64Array.from({ length: k }, (_, j) => data.z.data[t * k + j]);
      const minus = plus.slice();
      plus[j] += eps;
      minus[j] -= eps;
      const xp = data.generator({ data: plus, rows: 1, cols: k }).data;
      const xm = data.generator({ data: minus, rows: 1, cols: k }).data;
      for (let i = 0; i < 50; i++) {
        const d = (xp[i] - xm[i]) / (2 * eps);
        if (data.truth[i * k + j] === 0) assertEquals(d, 0, `∂x${i}/∂z${j} at t = ${t}`);
        maxAbs[i * k + j] = Math.max(maxAbs[i * k + j], Math.abs(d));
      }
    }
  }
  // Where the truth is 1 the dependence shows at some sample.
  for (let e = 0; e < maxAbs.length; e++) {
    if (data.truth[e]) assert(maxAbs[e] > 1e-4, `entry ${Math.floor(e / k)}, ${e % k}: ${maxAbs[e]}`);
  }
});

Deno.test("blockMlp keeps the best-conditioned draw, its matrices have unit-norm input rows", () => {
  const one = blockMlp(new Rng(5), [4, 25, 25], 1);
  const many = blockMlp(new Rng(5), [4, 25, 25], 40);
  // The first draw of both streams is the same matrix, so the best of 40 is no worse.
  assert(many.condition[0] <= one.condition[0], `${many.condition[0]} vs ${one.condition[0]}`);
  assert(many.condition.every((c) => c >= 1 && Number.isFinite(c)));
  for (const [l, w] of many.weights.entries()) {
    const inW = many.widths[l], outW = many.widths[l + 1];
    for (let i = 0; i < inW; i++) {
      let s = 0;
      for (let o = 0; o < outW; o++) s += w[i * outW + o] ** 2;
      assertAlmostEquals(s, 1, 1e-12);
    }
  }
  // A one-input first layer is a single unit vector: condition number 1.
  assertAlmostEquals(blockMlp(new Rng(6), [1, 25], 3).condition[0], 1, 1e-12);
});

Deno.test("regclSynthetic refuses bad sizes with a UsageError", () => {
  assertThrows(() => regclSynthetic(new Rng(0), { latents: 2, samples: 10 }), UsageError, "latents");
  assertThrows(() => regclSynthetic(new Rng(0), { latents: 4, samples: 1 }), UsageError, "samples");
  assertThrows(() => regclSynthetic(new Rng(0), { latents: 4, samples: 10, step: 0 }), UsageError, "step");
  assertThrows(() => regclSynthetic(new Rng(0), { latents: 4.5, samples: 10 }), UsageError, "latents");
});
