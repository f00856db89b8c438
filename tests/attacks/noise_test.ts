import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { attack } from "../../lib/attacks/attack.ts";
import { noiseLineSearch } from "../../lib/attacks/noise.ts";
import type { AttackModel } from "../../lib/attacks/types.ts";
import {
  BOX_W as W,
  boxBatch as linearBatch,
  boxLinearModel as linearModel,
  boxMargin as f,
} from "./fixtures/linear_model.ts";

await selectBackend("wasm");

for (const [noise, distance] of [["gaussian", "l2"], ["uniform", "linf"], ["uniform", "l2"]] as const) {
  Deno.test(`noiseLineSearch ${noise}/${distance}: the scale where the drawn direction crosses the boundary (±1%)`, async () => {
    const model = linearModel();
    const batch = linearBatch(24, 7);
    const before = tf.memory().numTensors;
    const adv = await noiseLineSearch({ noise, distance }).perturb(model, batch, null, new Rng(11));
    assertEquals(tf.memory().numTensors, before);
    let checked = 0;
    for (let i = 0; i < batch.n; i++) {
      const delta = Array.from({ length: 4 }, (_, j) => adv[i * 4 + j] - batch.x[i * 4 + j]);
      const row = adv.subarray(i * 4, (i + 1) * 4);
      assert(row.every((v) => v >= 0 && v <= 1), `sample ${i} leaves the bounds`);
      const fooled = (f(adv, i) > 0 ? 1 : 0) !== batch.labels[i];
      const norm = distance === "l2" ? Math.hypot(...delta) : Math.max(...delta.map(Math.abs));
      if (!fooled) {
        assertEquals(norm, 0, `sample ${i}: a failure returns the clean input`);
        continue;
      }
      // Off the box's faces the result is x + t·δ̂ with δ̂ the unit draw: t* = −f/(w·δ̂) in closed form.
      if (row.some((v) => v === 0 || v === 1)) continue;
      const unit = delta.map((v) => v / norm);
      const tStar = -f(batch.x, i) / W.reduce((s, w, j) => s + w * unit[j], 0);
      assert(Math.abs(norm - tStar) <= 0.01 * tStar, `sample ${i}: t ${norm} vs closed form ${tStar}`);
      checked++;
    }
    assert(checked >= 6, `only ${checked} samples crossed inside the box`);
    model.dispose();
  });
}

Deno.test("noiseLineSearch salt_and_pepper: lowers a tiny model's accuracy; failures are success 0", async () => {
  const model = linearModel();
  const batch = linearBatch(16, 3);
  const rng = new Rng(5);
  const before = tf.memory().numTensors;
  const out = await attack(
    noiseLineSearch({ noise: "salt_and_pepper" }),
    model,
    {
      values: batch.x,
      n: batch.n,
      shape: batch.shape,
    },
    batch.labels,
    [null],
    rng,
  );
  assertEquals(tf.memory().numTensors, before);
  const rate = out.success[0].reduce((a, b) => a + b, 0) / batch.n;
  assert(rate > 0.5, `success rate ${rate}`);
  assert(out.raw[0].every((v) => v >= 0 && v <= 1));
  // Salt-and-pepper only moves values to the bounds.
  assert(out.raw[0].every((v, j) => v === batch.x[j] || v === 0 || v === 1));
  // A model that always answers 0 cannot be fooled on label 0.
  const constant: AttackModel = {
    bounds: [0, 1],
    gradient: false,
    logits: (x) => tf.tidy(() => tf.oneHot(tf.zeros([x.shape[0]], "int32"), 2).toFloat() as tf.Tensor2D),
  };
  for (const noise of ["gaussian", "uniform", "salt_and_pepper"] as const) {
    const failed = await attack(
      noiseLineSearch({ noise, gridSteps: 5 }),
      constant,
      {
        values: batch.x,
        n: batch.n,
        shape: batch.shape,
      },
      new Int32Array(batch.n),
      [null, 1],
      rng,
    );
    assertEquals(failed.success.map((s) => s.reduce((a, b) => a + b, 0)), [0, 0]);
  }
  model.dispose();
});

Deno.test("noiseLineSearch: bad options are usage errors", () => {
  assertThrows(
    () => noiseLineSearch({ noise: "pink" as "gaussian" }),
    UsageError,
    "gaussian, uniform, salt_and_pepper",
  );
  assertThrows(() => noiseLineSearch({ distance: "l0" as "l2" }), UsageError, "l2 or linf");
  assertThrows(() => noiseLineSearch({ maxScale: -1 }), UsageError, "maxScale");
  assertThrows(() => noiseLineSearch({ gridSteps: 0 }), UsageError, "gridSteps");
  assertThrows(() => noiseLineSearch({ bisectionSteps: -1 }), UsageError, "bisectionSteps");
});
