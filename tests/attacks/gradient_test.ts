import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { attack, crossEntropy, lossGradient } from "../../lib/attacks/attack.ts";
import { ddn, fgm, fgsm, l2Bim, l2Pgd, linfBim, linfPgd } from "../../lib/attacks/gradient.ts";
import type { Attack } from "../../lib/attacks/types.ts";
import { assertNearHyperplane, linearCase } from "./fixtures/linear_model.ts";

await selectBackend("wasm");

/**
 * On logits [0, f(x)] with f = w·x + b, the cross-entropy gradient is ∝ ∓w, so a
 * step of ε along sign(∇) (L∞) changes f by ε‖w‖₁ and one along ∇/‖∇‖₂ (L2) by
 * ε‖w‖₂: the sample flips iff ε ≥ |f|/‖w‖₁ (resp. ‖w‖₂). Each sample is tried
 * at 0.98 and 1.02 times its threshold (and at a few shared ε).
 */
async function checkThreshold(a: Attack, norm: "w1" | "w2"): Promise<void> {
  const c = linearCase(6);
  const thresholds = Array.from(c.margins, (f) => Math.abs(f) / c[norm]);
  const epsilons = [...thresholds.flatMap((t) => [0.98 * t, 1.02 * t]), 0.05, 0.5, 2];
  const out = await attack(a, c.model, c.inputs, c.labels, epsilons, new Rng(3));
  for (let k = 0; k < epsilons.length; k++) {
    for (let r = 0; r < c.inputs.n; r++) {
      const ratio = epsilons[k] / thresholds[r];
      if (Math.abs(ratio - 1) < 0.019) continue;
      assertEquals(out.success[k][r], ratio > 1 ? 1 : 0, `${a.name} sample ${r} at ε = ${ratio.toFixed(3)}·threshold`);
    }
  }
}

Deno.test("FGSM succeeds iff ε ≥ |f|/‖w‖₁ on a linear model (±2%)", () => checkThreshold(fgsm(), "w1"));
Deno.test("L∞ BIM succeeds iff ε ≥ |f|/‖w‖₁ (±2%)", () => checkThreshold(linfBim(), "w1"));
Deno.test("L∞ PGD without random start succeeds iff ε ≥ |f|/‖w‖₁ (±2%)", () =>
  checkThreshold(linfPgd({ randomStart: false }), "w1"));
Deno.test("FGM succeeds iff ε ≥ |f|/‖w‖₂ (±2%)", () => checkThreshold(fgm(), "w2"));
Deno.test("L2 BIM succeeds iff ε ≥ |f|/‖w‖₂ (±2%)", () => checkThreshold(l2Bim(), "w2"));
Deno.test("L2 PGD without random start succeeds iff ε ≥ |f|/‖w‖₂ (±2%)", () =>
  checkThreshold(l2Pgd({ randomStart: false }), "w2"));

Deno.test("PGD with random start stays in the ε-ball and the bounds, and is seeded", async () => {
  const c = linearCase(6);
  for (const [a, norm] of [[linfPgd(), "linf"], [l2Pgd(), "l2"]] as const) {
    const first = await attack(a, c.model, c.inputs, c.labels, [0.2], new Rng(4));
    const again = await attack(a, c.model, c.inputs, c.labels, [0.2], new Rng(4));
    assertEquals(Array.from(first.raw[0]), Array.from(again.raw[0]));
    const size = 12;
    for (let r = 0; r < c.inputs.n; r++) {
      let sq = 0, max = 0;
      for (let i = r * size; i < (r + 1) * size; i++) {
        const d = first.raw[0][i] - c.inputs.values[i];
        sq += d * d;
        max = Math.max(max, Math.abs(d));
      }
      assert((norm === "linf" ? max : Math.sqrt(sq)) <= 0.2 + 1e-5, `${a.name} sample ${r}`);
    }
  }
});

Deno.test("DDN finds an L2 adversarial within 2% above |f|/‖w‖₂", async () => {
  const c = linearCase(6);
  const before = tf.memory().numTensors;
  const out = await attack(ddn(), c.model, c.inputs, c.labels, [null], new Rng(5));
  assertEquals(tf.memory().numTensors, before);
  assertNearHyperplane(c, out.raw[0], out.success[0], 0.02);
});

Deno.test("DDN without steps returns the clean input: success 0", async () => {
  const c = linearCase(4);
  const out = await attack(ddn({ steps: 0 }), c.model, c.inputs, c.labels, [null, 1], new Rng(5));
  assertEquals(Array.from(out.raw[0]), Array.from(c.inputs.values));
  assertEquals(Array.from(out.success[0]), [0, 0, 0, 0]);
  assertEquals(Array.from(out.success[1]), [0, 0, 0, 0]);
});

Deno.test("lossGradient matches the closed-form cross-entropy gradient (p₁ − y)·w", async () => {
  const c = linearCase(3);
  const [g, logits, loss] = tf.tidy(() => {
    const x = tf.tensor4d(c.inputs.values, [3, ...c.inputs.shape]);
    const labels = tf.tensor1d(c.labels, "int32");
    const out = lossGradient(c.model, x, (l) => crossEntropy(l, labels));
    return [out.gradient, out.logits, out.loss];
  });
  const [gv, lv, lossv] = [await g.data(), await logits.data(), await loss.data()];
  tf.dispose([g, logits, loss]);
  for (let r = 0; r < 3; r++) {
    const f = c.margins[r];
    const p1 = 1 / (1 + Math.exp(-f));
    assert(Math.abs(lv[2 * r + 1] - f) < 1e-5);
    const ce = c.labels[r] === 1 ? -Math.log(p1) : -Math.log(1 - p1);
    assert(Math.abs(lossv[r] - ce) < 1e-5, `loss ${lossv[r]} vs ${ce}`);
    for (let i = 0; i < 12; i++) {
      const expected = (p1 - c.labels[r]) * c.w[i];
      assert(Math.abs(gv[r * 12 + i] - expected) < 1e-5, `grad ${gv[r * 12 + i]} vs ${expected}`);
    }
  }
});
