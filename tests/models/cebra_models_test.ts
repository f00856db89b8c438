import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { CEBRA_ARCHITECTURES, type CebraArchitecture, cebraModel, gelu } from "../../lib/models/cebra_models.ts";

await selectBackend("wasm");

interface Flat {
  shape: number[];
  data: number[];
}
interface Reference {
  inputs: number;
  hidden: number;
  output: number;
  T: number;
  x: number[];
  cases: Record<CebraArchitecture, { state: Record<string, Flat>; unpadded: Flat; padded: Flat }>;
}
const reference: Reference = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/reference_cebra_models.json", import.meta.url)),
);

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assertEquals(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

Deno.test("gelu is the erf form: x·Φ(x) at closed-form points", async () => {
  // Φ(1) = 0.8413447460685429, Φ(−2) = 0.022750131948179195, Φ(0.5) = 0.6914624612740131.
  const out = await tf.tidy(() => gelu(tf.tensor1d([1, -2, 0.5, 0]))).data();
  const expected = [0.8413447460685429, -2 * 0.022750131948179195, 0.5 * 0.6914624612740131, 0];
  assert(maxAbsDiff(out, expected) < 1e-6, `gelu ${out}`);
});

for (const architecture of CEBRA_ARCHITECTURES) {
  Deno.test(`${architecture} matches PyTorch's forward pass with and without padding`, async () => {
    const ref = reference.cases[architecture];
    const model = cebraModel(architecture, {
      inputs: reference.inputs,
      hidden: reference.hidden,
      output: reference.output,
    }, new Rng(1));
    model.load(Object.fromEntries(
      Object.entries(ref.state).map(([k, v]) => [k, { data: Float32Array.from(v.data), shape: v.shape }]),
    ));
    const x = tf.tensor2d(reference.x, [reference.T, reference.inputs]);
    const before = tf.memory().numTensors;
    const padded = model.embed(x);
    const unpadded = model.embed(x, { pad: false });
    const batched = model.embed(x, { batchSize: 3 });
    assertEquals(padded.shape, ref.padded.shape as [number, number]);
    assertEquals(unpadded.shape, ref.unpadded.shape as [number, number]);
    assert(maxAbsDiff(await padded.data(), ref.padded.data) < 2e-6);
    assert(maxAbsDiff(await unpadded.data(), ref.unpadded.data) < 2e-6);
    assert(maxAbsDiff(await batched.data(), ref.padded.data) < 2e-6);

    // apply() on explicit windows gives the same embeddings as the sliding transform.
    const { left, right } = model.offset;
    const rows = reference.T - left - right + 1;
    const windows = tf.tidy(() =>
      tf.stack(Array.from({ length: rows }, (_, i) => tf.slice(x, [i, 0], [left + right, -1])))
    ) as tf.Tensor3D;
    const applied = model.apply(windows);
    assert(maxAbsDiff(await applied.data(), ref.unpadded.data) < 2e-6);
    tf.dispose([padded, unpadded, batched, windows, applied]);
    assertEquals(tf.memory().numTensors, before);
    x.dispose();
    model.dispose();
  });
}

Deno.test("offset10 gives T − 9 rows unpadded and T with padding; offsets and normalisation", () => {
  const model = cebraModel("offset10-model", { inputs: 4, hidden: 6, output: 3 }, new Rng(2));
  assertEquals(model.offset, { left: 5, right: 5 });
  assert(model.normalize);
  const x = tf.tensor2d(new Rng(3).normalArray(40 * 4), [40, 4]);
  const out = model.embed(x, { pad: false });
  const padded = model.embed(x);
  assertEquals(out.shape, [31, 3]);
  assertEquals(padded.shape, [40, 3]);
  const norms = tf.tidy(() => tf.norm(padded, "euclidean", 1).dataSync());
  for (const n of norms) assert(Math.abs(n - 1) < 1e-5);
  assertThrows(() => model.embed(tf.zeros([9, 4]) as tf.Tensor2D), UsageError, "receptive");
  tf.dispose([x, out, padded]);
  model.dispose();
  const mlp = cebraModel("offset1-model-mse", { inputs: 4, hidden: 6, output: 2 }, new Rng(2));
  assertEquals(mlp.offset, { left: 0, right: 1 });
  assert(!mlp.normalize);
  // The -mse MLP ignores hidden units: 4 → 60 → 60 → 20 → 2.
  assertEquals(mlp.variables.map((v) => v.shape), [[4, 60], [60], [60, 60], [60], [60, 20], [20], [20, 2], [2]]);
  mlp.dispose();
});

Deno.test("weights and biases start in U(±1/√fan_in) with the uniform's variance", () => {
  const model = cebraModel("offset10-model", { inputs: 30, hidden: 64, output: 8 }, new Rng(4));
  for (const v of model.variables) {
    const fanIn = v.shape.length === 1
      ? (v === model.variables[1] ? 30 * 2 : 64 * 3)
      : v.shape.slice(0, -1).reduce((a, b) => a * b, 1);
    const bound = 1 / Math.sqrt(fanIn);
    const data = v.dataSync();
    let sq = 0;
    for (const value of data) {
      assert(Math.abs(value) <= bound);
      sq += value * value;
    }
    if (data.length > 1000) {
      const variance = sq / data.length;
      // Var U(−b, b) = b²/3; standard error of the mean of n squares is about b²·0.3/√n.
      assert(Math.abs(variance - bound * bound / 3) < bound * bound * 1.5 / Math.sqrt(data.length), `${v.shape}`);
    }
  }
  model.dispose();
});

Deno.test("reinitFirstLayer adapts the input width and keeps the rest; state round-trips", () => {
  const model = cebraModel("offset1-model", { inputs: 5, hidden: 8, output: 3 }, new Rng(5));
  const rest = model.variables.slice(2).map((v) => Array.from(v.dataSync()));
  const before = tf.memory().numTensors;
  model.reinitFirstLayer(new Rng(6), 7);
  assertEquals(tf.memory().numTensors, before);
  assertEquals(model.inputs, 7);
  assertEquals(model.firstLayer.map((v) => v.shape), [[7, 8], [8]]);
  assertEquals(model.variables.slice(2).map((v) => Array.from(v.dataSync())), rest);
  const state = Object.fromEntries(
    Object.entries(model.state()).map(([k, t]) => [k, { data: t.dataSync() as Float32Array, shape: t.shape }]),
  );
  const copy = cebraModel("offset1-model", { inputs: 5, hidden: 8, output: 3 }, new Rng(7));
  copy.load(state);
  assertEquals(copy.inputs, 7);
  const x = tf.tensor2d(new Rng(8).normalArray(6 * 7), [6, 7]);
  const a = model.embed(x), b = copy.embed(x);
  assertEquals(Array.from(a.dataSync()), Array.from(b.dataSync()));
  tf.dispose([x, a, b]);
  assertThrows(() => copy.load({ ...state, "layer1/kernel": { data: new Float32Array(3), shape: [3] } }), UsageError);
  model.dispose();
  copy.dispose();
});

Deno.test("bad sizes and names throw UsageError", () => {
  assertThrows(
    () => cebraModel("offset5-model" as CebraArchitecture, { inputs: 3, hidden: 4, output: 2 }, new Rng(0)),
    UsageError,
    "offset1-model",
  );
  assertThrows(() => cebraModel("offset1-model", { inputs: 3, hidden: 1, output: 2 }, new Rng(0)), UsageError);
  assertThrows(() => cebraModel("offset1-model", { inputs: 0, hidden: 4, output: 2 }, new Rng(0)), UsageError);
  const model = cebraModel("offset1-model", { inputs: 3, hidden: 4, output: 2 }, new Rng(0));
  assertThrows(() => model.apply(tf.zeros([2, 1, 4]) as tf.Tensor3D), UsageError, "windows");
  model.dispose();
});
