import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { freezeGenerator, generatorInputSide, noiseGenerator } from "../../lib/models/noise_generator.ts";

await selectBackend("wasm");

Deno.test("noiseGenerator: parameter counts of App. A (1x1: 901 for C = 1, 983 for C = 3; 3x3 adds 8·20·20)", () => {
  // Per layer k·k·cin·cout + cout: 1x1 C=3: 80 + 420 + 420 + 63 = 983 (Rusak2020 Table 2); 3x3's second layer 3620.
  const expected = { "1x1": { 1: 901, 3: 983 }, "3x3": { 1: 4101, 3: 4183 } } as const;
  for (const kind of ["1x1", "3x3"] as const) {
    for (const channels of [1, 3] as const) {
      const g = noiseGenerator(new Rng(1), channels, kind);
      assertEquals(g.params.count(), expected[kind][channels], `${kind} C=${channels}`);
      g.params.dispose();
    }
  }
});

Deno.test("noiseGenerator: output shape and ≈ z at init (weights N(0, 0.01²), biases 0); 3x3 residual is the centre crop", () => {
  for (const kind of ["1x1", "3x3"] as const) {
    const g = noiseGenerator(new Rng(2), 3, kind);
    const side = generatorInputSide(kind, 8);
    assertEquals(side, kind === "3x3" ? 10 : 8);
    const before = tf.memory().numTensors;
    const [shape, relative] = tf.tidy(() => {
      const z = tf.randomNormal([4, side, side, 3], 0, 1, "float32", 5) as tf.Tensor4D;
      const out = g.noise(z);
      const centre = kind === "3x3" ? tf.slice(z, [0, 1, 1, 0], [-1, 8, 8, -1]) : z;
      // Three ReLU layers of 0.01-s.d. weights shrink the branch to ~1e-6 of z; bound it far below 0.05·|z|.
      return [out.shape, tf.div(tf.norm(tf.sub(out, centre)), tf.norm(centre)).dataSync()[0]] as const;
    });
    assertEquals(shape, [4, 8, 8, 3]);
    assert(relative < 1e-3, `${kind}: ‖g(z) − z‖/‖z‖ = ${relative}`);
    assert(relative > 0, `${kind}: the convolution branch contributes`);
    assertEquals(tf.memory().numTensors, before);
    g.params.dispose();
  }
});

Deno.test("freezeGenerator: a copy that keeps its values when the generator changes", () => {
  const g = noiseGenerator(new Rng(3), 1, "1x1");
  const frozen = freezeGenerator(g);
  const z = tf.randomNormal([2, 4, 4, 1], 0, 1, "float32", 1) as tf.Tensor4D;
  const before = tf.tidy(() => Array.from(frozen.noise(z).dataSync()));
  assertEquals(Array.from(tf.tidy(() => g.noise(z).dataSync())), before);
  tf.tidy(() => g.params.get("conv3/b").assign(tf.ones([1])));
  const after = tf.tidy(() => Array.from(frozen.noise(z).dataSync()));
  assertEquals(after, before);
  const moved = tf.tidy(() => Array.from(g.noise(z).dataSync()));
  assert(moved.every((v, i) => Math.abs(v - before[i] - 1) < 1e-5), "the live generator moved by its bias");
  frozen.dispose();
  g.params.dispose();
  z.dispose();
});

Deno.test("noiseGenerator: bad kind or channels are usage errors", () => {
  assertThrows(() => noiseGenerator(new Rng(1), 1, "5x5" as "1x1"), UsageError, "1x1, 3x3");
  assertThrows(() => noiseGenerator(new Rng(1), 0, "1x1"), UsageError, "channels");
  assertThrows(() => generatorInputSide("2x2" as "1x1", 28), UsageError, "1x1, 3x3");
});
