import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { attack } from "../../lib/attacks/attack.ts";
import { l2, linf } from "../../lib/attacks/distances.ts";
import { fgm, fgsm } from "../../lib/attacks/gradient.ts";
import { transfer } from "../../lib/attacks/transfer.ts";
import type { AttackModel } from "../../lib/attacks/types.ts";
import { BOX_W as W, boxBatch, boxLinearModel, boxMargin as f } from "./fixtures/linear_model.ts";

await selectBackend("wasm");

const W1 = W.reduce((s, w) => s + Math.abs(w), 0);
const W2 = Math.hypot(...W);

Deno.test("transfer: along FGSM's δ = ε·sign(±w) the line search meets the closed form t (±1%)", async () => {
  // The source is the same hyperplane at another scale, without any role for the target's gradient.
  const source = boxLinearModel(true, 3);
  const target = boxLinearModel(false);
  const batch = boxBatch(16, 2);
  const before = tf.memory().numTensors;
  const linfAdv = await transfer(source, [fgsm()], { distance: "linf" }).perturb(target, batch, null, new Rng(1));
  const l2Adv = await transfer(source, [fgsm()], { distance: "l2" }).perturb(target, batch, null, new Rng(1));
  assertEquals(tf.memory().numTensors, before);
  const dInf = linf(batch.x, linfAdv, batch.n);
  const d2 = l2(batch.x, l2Adv, batch.n);
  for (let i = 0; i < batch.n; i++) {
    // Moving every pixel by t against the sign of f·w reaches f = 0 at t = |f|/‖w‖₁ (L∞); in L2 that is √4 times more.
    const t = Math.abs(f(batch.x, i)) / W1;
    assert(Math.abs(dInf[i] - t) <= 0.01 * t, `sample ${i}: L∞ ${dInf[i]} vs ${t}`);
    assert(Math.abs(d2[i] - 2 * t) <= 0.01 * 2 * t, `sample ${i}: L2 ${d2[i]} vs ${2 * t}`);
    assert((f(linfAdv, i) > 0 ? 1 : 0) !== batch.labels[i] && (f(l2Adv, i) > 0 ? 1 : 0) !== batch.labels[i]);
  }
  assert(linfAdv.every((v) => v >= 0 && v <= 1) && l2Adv.every((v) => v >= 0 && v <= 1));
  source.dispose();
  target.dispose();
});

Deno.test("transfer: the best of several directions; FGM's δ ∥ w gives the L2-minimal |f|/‖w‖₂", async () => {
  const source = boxLinearModel();
  const target = boxLinearModel(false);
  const batch = boxBatch(12, 4);
  // A source ε small enough that FGM's step is not clipped, so δ stays parallel to w.
  const adv = await transfer(source, [fgsm(), fgm()], { distance: "l2", sourceEpsilons: { l2: 0.1 } })
    .perturb(target, batch, null, new Rng(1));
  const d = l2(batch.x, adv, batch.n);
  for (let i = 0; i < batch.n; i++) {
    const best = Math.abs(f(batch.x, i)) / W2;
    assert(Math.abs(d[i] - best) <= 0.01 * best, `sample ${i}: ${d[i]} vs ${best}`);
  }
  source.dispose();
  target.dispose();
});

Deno.test("transfer: a target the directions cannot fool gives success 0; a gradient direction needs a gradient source", async () => {
  const source = boxLinearModel();
  const batch = boxBatch(6, 9);
  const constant: AttackModel = {
    bounds: [0, 1],
    gradient: false,
    logits: (x) => tf.tidy(() => tf.oneHot(tf.zeros([x.shape[0]], "int32"), 2).toFloat() as tf.Tensor2D),
  };
  const out = await attack(
    transfer(source, [fgsm()], { gridSteps: 5 }),
    constant,
    { values: batch.x, n: batch.n, shape: batch.shape },
    new Int32Array(batch.n),
    [null],
    new Rng(1),
  );
  assertEquals(Array.from(out.success[0]), [0, 0, 0, 0, 0, 0]);
  assertThrows(() => transfer(constant, [fgsm()]), UsageError, "needs gradients");
  assertThrows(() => transfer(source, []), UsageError, "at least one");
  assertThrows(() => transfer(source, [fgsm()], { sourceEpsilons: { linf: 0 } }), UsageError, "sourceEpsilons.linf");
  source.dispose();
});
