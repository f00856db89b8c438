import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { attack } from "../../lib/attacks/attack.ts";
import { boundary, linearSearchBlendedUniformNoise, pointwise, saltAndPepper } from "../../lib/attacks/decision.ts";
import { l0, l2 } from "../../lib/attacks/distances.ts";
import type { AttackBatch, AttackModel } from "../../lib/attacks/types.ts";
import { BOX_B as B, BOX_W as W, boxBatch as linearBatch, boxMargin as f } from "./fixtures/linear_model.ts";

await selectBackend("wasm");

/** logits = x·W + b from tf ops: `weights` `[d, classes]` row-major. */
function denseModel(weights: number[], bias: number[]): AttackModel & { dispose(): void } {
  const classes = bias.length;
  const w = tf.tensor2d(weights, [weights.length / classes, classes]);
  const b = tf.tensor1d(bias);
  return {
    bounds: [0, 1],
    gradient: false,
    logits: (x) => tf.tidy(() => tf.add(tf.matMul(tf.reshape(x, [x.shape[0], -1]), w), b) as tf.Tensor2D),
    dispose: () => tf.dispose([w, b]),
  };
}

/** Labels = the model's own predictions, so every clean input is classified correctly. */
async function selfLabelled(
  model: AttackModel,
  x: Float32Array,
  shape: [number, number, number],
): Promise<AttackBatch> {
  const n = x.length / (shape[0] * shape[1] * shape[2]);
  const p = tf.tidy(() => tf.argMax(model.logits(tf.tensor4d(x, [n, ...shape])), 1));
  const labels = Int32Array.from(await p.data());
  p.dispose();
  return { x, n, shape, labels };
}

async function fooled(model: AttackModel, batch: AttackBatch, adv: Float32Array): Promise<Uint8Array> {
  const p = tf.tidy(() => tf.argMax(model.logits(tf.tensor4d(adv, [batch.n, ...batch.shape])), 1));
  const predicted = await p.data();
  p.dispose();
  return Uint8Array.from(batch.labels, (l, i) => (predicted[i] !== l ? 1 : 0));
}

// Two classes split by the hyperplane w·x + b = 0: logits [0, w·x + b].

Deno.test("boundary: on a linear model its L2 approaches d = |f|/‖w‖₂ (within 1% after 3,000 steps)", async () => {
  const model = denseModel(W.flatMap((w) => [0, w]), [0, B]);
  const batch = linearBatch(8, 7);
  const before = tf.memory().numTensors;
  const adv = await boundary({ steps: 3000 }).perturb(model, batch, null, new Rng(3));
  assertEquals(tf.memory().numTensors, before);
  const d = l2(batch.x, adv, batch.n);
  const norm = Math.hypot(...W);
  for (let i = 0; i < batch.n; i++) {
    const closest = Math.abs(f(batch.x, i)) / norm;
    // Still adversarial, so never below d (up to float32 rounding of the inputs).
    assert(d[i] >= closest * (1 - 1e-4) && d[i] <= 1.01 * closest, `sample ${i}: ${d[i]} vs d ${closest}`);
  }
  assert((await fooled(model, batch, adv)).every((v) => v === 1));
  assert(adv.every((v) => v >= 0 && v <= 1));
  model.dispose();
});

/** A 3-class linear model on 5×5 images and 12 images it classifies (its own labels). */
async function tinyProblem() {
  const rng = new Rng(21);
  const model = denseModel(Array.from({ length: 25 * 3 }, () => rng.normal()), [0, 0, 0]);
  const x = Float32Array.from({ length: 12 * 25 }, () => rng.uniform());
  return { model, batch: await selfLabelled(model, x, [5, 5, 1]) };
}

Deno.test("decision attacks lower a tiny model's accuracy, stay in bounds, leave no tensors", async () => {
  const { model, batch } = await tinyProblem();
  for (
    const a of [
      boundary({ steps: 200 }),
      saltAndPepper({ steps: 100 }),
      pointwise({ restarts: 2, saltAndPepperSteps: 100 }),
    ]
  ) {
    const before = tf.memory().numTensors;
    const out = await attack(
      a,
      model,
      { values: batch.x, n: batch.n, shape: batch.shape },
      batch.labels,
      [null],
      new Rng(4),
    );
    assertEquals(tf.memory().numTensors, before, a.name);
    const accuracy = 1 - out.success[0].reduce((s, v) => s + v, 0) / batch.n;
    assert(accuracy < 0.5, `${a.name}: accuracy ${accuracy} from 1`);
    assert(out.raw[0].every((v) => v >= 0 && v <= 1), `${a.name} leaves the bounds`);
    assertEquals([a.needsGradient, a.kind], [false, "minimization"]);
  }
  model.dispose();
});

Deno.test("pointwise: L0 ≤ that of its salt-and-pepper start; no changed pixel can be reset alone; restarts only help", async () => {
  const { model, batch } = await tinyProblem();
  // Same seed: Pointwise's first draws are the salt-and-pepper attack's.
  const snp = await saltAndPepper({ steps: 100 }).perturb(model, batch, null, new Rng(8));
  const once = await pointwise({ restarts: 1, saltAndPepperSteps: 100, l2BinarySearch: false })
    .perturb(model, batch, null, new Rng(8));
  const thrice = await pointwise({ restarts: 3, saltAndPepperSteps: 100, l2BinarySearch: false })
    .perturb(model, batch, null, new Rng(8));
  const snpFooled = await fooled(model, batch, snp);
  assert(snpFooled.reduce((s, v) => s + v, 0) >= 6);
  assertEquals(await fooled(model, batch, once), snpFooled);
  const [l0Snp, l0Once, l0Thrice] = [snp, once, thrice].map((a) => l0(batch.x, a, batch.n));
  let smaller = 0;
  for (let i = 0; i < batch.n; i++) {
    if (!snpFooled[i]) continue;
    assert(
      l0Once[i] <= l0Snp[i] && l0Thrice[i] <= l0Once[i],
      `sample ${i}: ${l0Snp[i]} → ${l0Once[i]} → ${l0Thrice[i]}`,
    );
    if (l0Once[i] < l0Snp[i]) smaller++;
    // The reset passes stop when no single reset keeps the adversarial.
    for (let j = i * 25; j < (i + 1) * 25; j++) {
      if (once[j] === batch.x[j]) continue;
      const trial = once.slice();
      trial[j] = batch.x[j];
      assertEquals((await fooled(model, batch, trial))[i], 0, `sample ${i}: pixel ${j - i * 25} is not needed`);
    }
  }
  assert(smaller > 0, "the reset passes changed nothing");
  // Bisection keeps the changed set and the adversarial, and lowers L2.
  const bisected = await pointwise({ restarts: 1, saltAndPepperSteps: 100 }).perturb(model, batch, null, new Rng(8));
  assertEquals(await fooled(model, batch, bisected), snpFooled);
  const [l2Once, l2Bisected] = [once, bisected].map((a) => l2(batch.x, a, batch.n));
  for (let i = 0; i < batch.n; i++) if (snpFooled[i]) assert(l2Bisected[i] <= l2Once[i] + 1e-6, `sample ${i}`);
  model.dispose();
});

Deno.test("decision attacks: an unfoolable model gives success 0 (clean input back); bad options are usage errors", async () => {
  const constant: AttackModel = {
    bounds: [0, 1],
    gradient: false,
    logits: (x) => tf.tidy(() => tf.oneHot(tf.zeros([x.shape[0]], "int32"), 2).toFloat() as tf.Tensor2D),
  };
  const batch = linearBatch(4, 1);
  for (
    const a of [
      boundary({ steps: 20 }),
      saltAndPepper({ steps: 20 }),
      pointwise({ restarts: 1, saltAndPepperSteps: 20 }),
      linearSearchBlendedUniformNoise({ directions: 5, steps: 5 }),
    ]
  ) {
    const out = await attack(
      a,
      constant,
      { values: batch.x, n: 4, shape: batch.shape },
      new Int32Array(4),
      [null],
      new Rng(2),
    );
    assertEquals(Array.from(out.success[0]), [0, 0, 0, 0], a.name);
    assertEquals(out.raw[0], batch.x, a.name);
  }
  assertThrows(() => boundary({ steps: 0 }), UsageError, "steps");
  assertThrows(() => saltAndPepper({ distance: "linf" as "l2" }), UsageError, "l2 or l0");
  assertThrows(() => pointwise({ restarts: 1.5 }), UsageError, "restarts");
});
