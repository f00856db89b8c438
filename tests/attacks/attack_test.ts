import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { attack, minimize, predictions, repeat } from "../../lib/attacks/attack.ts";
import { l2, linf } from "../../lib/attacks/distances.ts";
import { ddn, fgm, fgsm, l2Bim, l2Pgd, linfBim, linfPgd } from "../../lib/attacks/gradient.ts";
import { l2DeepFool, linfDeepFool } from "../../lib/attacks/deepfool.ts";
import { cwL2 } from "../../lib/attacks/carlini_wagner.ts";
import type { Attack, AttackModel } from "../../lib/attacks/types.ts";
import { linearCase, tinyCase } from "./fixtures/linear_model.ts";

await selectBackend("wasm");

Deno.test("bad inputs are usage errors that say what was wrong, before any work", async () => {
  const { model, inputs, labels } = linearCase(4);
  let calls = 0;
  const counted: Attack = { ...fgsm(), perturb: (...args) => (calls++, fgsm().perturb(...args)) };
  const rng = new Rng(1);
  const outside = { ...inputs, values: inputs.values.map((v, i) => (i === 5 ? 12.5 : v)) };
  const e = await assertRejects(() => attack(counted, model, outside, labels, [0.1], rng), UsageError, "12.5");
  assert(e.message.includes("[-10, 10]"), e.message);
  await assertRejects(() => attack(counted, model, inputs, labels.slice(1), [0.1], rng), UsageError, "3 labels for 4");
  await assertRejects(() => attack(counted, model, inputs, labels, [0.1, -0.1], rng), UsageError, "≥ 0");
  await assertRejects(() => attack(counted, model, inputs, labels, [NaN], rng), UsageError, "≥ 0");
  await assertRejects(() => attack(counted, model, inputs, labels, [null], rng), UsageError, "fixed-ε attack");
  const l0Attack: Attack = { ...ddn(), name: "pointwise", distance: "l0", needsGradient: false };
  await assertRejects(
    () => attack(l0Attack, model, inputs, labels, [3], rng),
    UsageError,
    "reducing L0 norms is not supported",
  );
  const blackBox: AttackModel = { ...model, gradient: false };
  const g = await assertRejects(() => attack(counted, blackBox, inputs, labels, [0.1], rng), UsageError, "gradient");
  for (const name of ["boundary", "salt_and_pepper", "pointwise", "noise"]) assert(g.message.includes(name), g.message);
  await assertRejects(
    () => attack(counted, model, inputs, Int32Array.from(labels, () => 2), [0.1], rng),
    UsageError,
    "classes 0..1",
  );
  assertEquals(calls, 0);
});

Deno.test("fixed-ε attacks run once per ε; minimization attacks once, told the smallest ε", async () => {
  const { model, inputs, labels } = linearCase(4);
  const seen: (number | null)[] = [];
  const spy = (a: Attack): Attack => ({ ...a, perturb: (m, b, e, r) => (seen.push(e), a.perturb(m, b, e, r)) });
  await attack(spy(fgsm()), model, inputs, labels, [0.3, 0.1, 0.2], new Rng(1));
  assertEquals(seen, [0.3, 0.1, 0.2]);
  seen.length = 0;
  await attack(spy(l2DeepFool()), model, inputs, labels, [0.3, 0.1, 0.2], new Rng(1));
  assertEquals(seen, [0.1]);
  seen.length = 0;
  await attack(spy(l2DeepFool()), model, inputs, labels, [0.3, null], new Rng(1));
  assertEquals(seen, [null]);
});

Deno.test("a minimization attack's output is clipped per ε, and success is judged after clipping", async () => {
  const { model, inputs, labels, margins, w2 } = linearCase(6);
  const d = Array.from(margins, (f) => Math.abs(f) / w2);
  const epsilons = [0, Math.min(...d) / 2, 1.5 * Math.max(...d), null];
  const out = await attack(l2DeepFool(), model, inputs, labels, epsilons, new Rng(1));
  const { values: x, n } = inputs;
  for (let k = 0; k < epsilons.length; k++) {
    const dist = l2(x, out.clipped[k], n);
    for (let r = 0; r < n; r++) {
      assert(dist[r] <= (epsilons[k] ?? Infinity) + 1e-5, `ε ${epsilons[k]}: ${dist[r]}`);
      // The clipped input is adversarial exactly when the ball reaches past the boundary.
      assertEquals(out.success[k][r], (epsilons[k] ?? Infinity) >= d[r] ? 1 : 0, `ε ${epsilons[k]}, sample ${r}`);
    }
  }
  assertEquals(Array.from(out.raw[3]), Array.from(out.clipped[3]));
});

Deno.test("attacks leave no tensors behind", async () => {
  const { model, inputs, labels } = tinyCase(6);
  const attacks = [
    fgsm(),
    linfPgd({ steps: 3 }),
    l2Pgd({ steps: 3 }),
    ddn({ steps: 3 }),
    l2DeepFool({ steps: 3 }),
    linfDeepFool({ steps: 3 }),
    cwL2({ binarySearchSteps: 2, steps: 5 }),
    repeat(fgm(), 2),
    minimize(fgsm(), 3),
  ];
  await predictions(model, inputs.values, inputs.n, inputs.shape);
  for (const a of attacks) {
    const before = tf.memory().numTensors;
    await attack(a, model, inputs, labels, a.kind === "fixed" ? [0.1, 0.3] : [0.1, null], new Rng(2));
    assertEquals(tf.memory().numTensors, before, a.name);
  }
});

Deno.test("every attack lowers a tiny model's accuracy; failures have success 0", async () => {
  const { model, inputs, labels } = tinyCase(12);
  const clean = await predictions(model, inputs.values, inputs.n, inputs.shape);
  assertEquals(Array.from(clean), Array.from(labels));
  const cases: [Attack, number][] = [
    [fgsm(), 0.3],
    [fgm(), 1],
    [linfBim(), 0.3],
    [l2Bim(), 1],
    [linfPgd(), 0.3],
    [l2Pgd(), 1],
    [ddn({ steps: 30 }), 1],
    [l2DeepFool(), 1],
    [linfDeepFool(), 0.3],
    [cwL2({ binarySearchSteps: 4, steps: 100, initialConst: 1 }), 1],
    [repeat(linfPgd({ steps: 10 }), 2), 0.3],
    [minimize(fgsm(), 6), 0.3],
  ];
  for (const [a, epsilon] of cases) {
    const out = await attack(a, model, inputs, labels, [0, epsilon], new Rng(5));
    const fooled = out.success[1].reduce((s, v) => s + v, 0);
    assertEquals(out.success[0].reduce((s, v) => s + v, 0), 0, `${a.name}: ε = 0 cannot fool a correct model`);
    assert(fooled >= inputs.n / 3, `${a.name} fooled ${fooled} of ${inputs.n} at ε ${epsilon}`);
  }
});

Deno.test("minimize: ε bisection of FGSM finds the L∞ distance |f|/‖w‖₁ of a linear model", async () => {
  const { model, inputs, labels, margins, w1 } = linearCase(6);
  const out = await attack(minimize(fgsm(), 14), model, inputs, labels, [null], new Rng(1));
  const dist = linf(inputs.values, out.raw[0], inputs.n);
  for (let r = 0; r < inputs.n; r++) {
    const d = Math.abs(margins[r]) / w1;
    assertEquals(out.success[0][r], 1);
    // 14 rounds over [0, 20]: the upper end is within 20/2¹⁴ ≈ 1.2e-3 of d.
    assert(dist[r] >= d * (1 - 1e-4) && dist[r] <= d + 2.5e-3, `sample ${r}: ${dist[r]} vs ${d}`);
  }
});

Deno.test("repeat keeps the smallest successful perturbation over the runs, else the last run", async () => {
  const { model, inputs, labels, margins, w, w2 } = linearCase(4);
  const size = 12;
  // Run k moves sample r by factors[k]·d_r across (or short of) the boundary along ∓w, d_r = |f_r|/‖w‖₂.
  const runs = (factors: number[]): Attack => {
    let run = 0;
    return {
      name: "fake",
      distance: "l2",
      kind: "minimization",
      needsGradient: false,
      perturb(_m, batch) {
        const t = factors[run++];
        return Promise.resolve(batch.x.map((v, i) => {
          const r = Math.floor(i / size);
          return v - (Math.sign(margins[r]) * t * Math.abs(margins[r]) * w[i % size]) / (w2 * w2);
        }));
      },
    };
  };
  const moved = (t: number) =>
    inputs.values.map((v, i) => {
      const r = Math.floor(i / size);
      return v - (Math.sign(margins[r]) * t * Math.abs(margins[r]) * w[i % size]) / (w2 * w2);
    });
  const best = await attack(repeat(runs([3, 0.5, 1.5]), 3), model, inputs, labels, [null], new Rng(1));
  assertEquals(Array.from(best.raw[0]), Array.from(moved(1.5)));
  assertEquals(Array.from(best.success[0]), [1, 1, 1, 1]);
  const none = await attack(repeat(runs([0.2, 0.5, 0.3]), 3), model, inputs, labels, [null], new Rng(1));
  assertEquals(Array.from(none.raw[0]), Array.from(moved(0.3)));
  assertEquals(Array.from(none.success[0]), [0, 0, 0, 0]);
});
