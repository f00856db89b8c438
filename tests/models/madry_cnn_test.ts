import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { madryCnn } from "../../lib/models/madry_cnn.ts";

await selectBackend("wasm");

Deno.test('madryCnn: parameter count in closed form; logits [b, 10] ("same" padding keeps 28 → 14 → 7)', () => {
  const net = madryCnn(new Rng(1));
  // conv 5·5·1·32 + 32, conv 5·5·32·64 + 64, dense 3136·1024 + 1024, dense 1024·10 + 10.
  assertEquals(net.params.count(), 832 + 51264 + 3136 * 1024 + 1024 + 10250);
  const before = tf.memory().numTensors;
  const shape = tf.tidy(() => net.logits(tf.zeros([3, 28, 28, 1])).shape);
  assertEquals(shape, [3, 10]);
  assertEquals(tf.memory().numTensors, before);
  net.params.dispose();
});

Deno.test("madryCnn: Madry's init (truncated normal s.d. 0.1 within 2 s.d., biases 0.1); deterministic per seed", () => {
  const net = madryCnn(new Rng(4));
  const w = net.params.get("fc0/w").dataSync();
  let sum = 0, sq = 0, max = 0;
  for (const v of w) {
    sum += v;
    sq += v * v;
    max = Math.max(max, Math.abs(v));
  }
  assert(max <= 0.2 + 1e-7, `largest weight ${max}`);
  // Variance of N(0, 1) truncated at ±2: 1 − 2·2φ(2)/(2Φ(2) − 1) = 0.77374 (scipy truncnorm); times 0.1²;
  // 3.2M draws give a relative s.e. of ≈ 7e-4.
  const variance = sq / w.length - (sum / w.length) ** 2;
  assertAlmostEquals(variance, 0.0077374, 0.0077374 * 0.005);
  assert(net.params.get("conv1/b").dataSync().every((v) => Math.abs(v - 0.1) < 1e-7));
  const again = madryCnn(new Rng(4));
  assertEquals(Array.from(again.params.get("conv0/w").dataSync()), Array.from(net.params.get("conv0/w").dataSync()));
  net.params.dispose();
  again.params.dispose();
});
