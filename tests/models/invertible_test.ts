import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { logAbsDet } from "../../lib/ml/linalg.ts";
import {
  ActNorm,
  AdditiveCoupling,
  AffineCoupling,
  type Bijection,
  ChannelPermutation,
  Invertible1x1,
  Split,
  squeeze2x2,
  unsqueeze2x2,
} from "../../lib/models/invertible.ts";
import { Params } from "../../lib/models/params.ts";

await selectBackend("wasm");

interface Fixed {
  shape: number[];
  values: number[];
}
interface ActNormValues {
  b: number[];
  logs: number[];
}
interface StepCase {
  x: Fixed;
  hidden: number;
  weights: Record<string, Fixed>;
  y: Fixed;
  logDet: number[];
  actnorm: ActNormValues;
  actnorm0: ActNormValues;
  actnorm1: ActNormValues;
}

/** tests/models/fixtures/reference_firevnet.json, written by make_firevnet_reference.py (torch 1.13). */
const REFERENCE: {
  squeeze: { x: Fixed; y: Fixed };
  actnorm: { x: Fixed; y: Fixed; logDet: number[] } & ActNormValues;
  additiveStep: StepCase;
  affineStep: StepCase;
} = JSON.parse(await Deno.readTextFile(new URL("./fixtures/reference_firevnet.json", import.meta.url)));

function tensorOf(fixed: Fixed): tf.Tensor {
  return tf.tensor(fixed.values, fixed.shape);
}

async function maxAbsDiff(a: tf.Tensor, b: tf.Tensor | ArrayLike<number>): Promise<number> {
  const x = await a.data();
  const y = b instanceof tf.Tensor ? await b.data() : b;
  assertEquals(x.length, y.length);
  let max = 0;
  for (let i = 0; i < x.length; i++) max = Math.max(max, Math.abs(x[i] - y[i]));
  return max;
}

/** Replaces every variable of `params` by N(0, scale²) draws (zero inits would make round trips trivial). */
function randomize(params: Params, rng: Rng, scale = 0.3): void {
  for (const v of params.list()) v.assign(tf.tidy(() => tf.tensor(rng.normalArray(v.size, scale), v.shape)));
}

/**
 * The Jacobian ∂f(x)/∂x at one sample x (`shape` with batch 1) by tf.grad of
 * each output coordinate, as rows `[outputs][inputs]`.
 */
async function jacobian(f: (x: tf.Tensor) => tf.Tensor, x0: Float32Array, shape: number[]): Promise<number[][]> {
  const x = tf.tensor(x0, shape);
  const rows: number[][] = [];
  for (let i = 0; i < x0.length; i++) {
    const onehot = tf.oneHot(tf.tensor1d([i], "int32"), x0.length).reshape(shape);
    const g = tf.grad((input: tf.Tensor) => tf.sum(tf.mul(f(input), onehot)))(x);
    rows.push(Array.from(await g.data()));
    tf.dispose([onehot, g]);
  }
  x.dispose();
  return rows;
}

/** Max |f⁻¹(f(x)) − x|; the layers leave tidying to their caller (a net's tidy), so the check runs in one. */
async function roundTrip(layer: Bijection, x: tf.Tensor): Promise<number> {
  const back = tf.tidy(() => layer.inverse(layer.forward(x, tf.zeros([x.shape[0]])).y));
  const error = await maxAbsDiff(back, x);
  back.dispose();
  return error;
}

async function checkLogDet(layer: Bijection, shape: number[], seed: number): Promise<void> {
  const x0 = new Rng(seed).normalArray(shape.reduce((a, b) => a * b, 1));
  const j = await jacobian((x) => layer.forward(x, tf.zeros([1])).y, x0, shape);
  const x = tf.tensor(x0, shape);
  const { y, logDet } = layer.forward(x, tf.zeros([1]));
  const got = (await logDet.data())[0];
  const want = logAbsDet(j);
  assertAlmostEquals(got, want, 1e-3, `${layer.constructor.name} log-det ${got} vs Jacobian ${want}`);
  assert(Math.abs(want) > 0.05, `a log-det of ${want} makes the check vacuous`);
  tf.dispose([x, y, logDet]);
}

Deno.test("squeeze2x2 is numpy's reshape(b,h/2,2,w/2,2,c).transpose(0,1,3,2,4,5) exactly, and unsqueeze2x2 undoes it", async () => {
  const x = tensorOf(REFERENCE.squeeze.x) as tf.Tensor4D;
  const y = squeeze2x2(x);
  assertEquals(y.shape, REFERENCE.squeeze.y.shape as [number, number, number, number]);
  assertEquals(Array.from(await y.data()), REFERENCE.squeeze.y.values);
  const back = unsqueeze2x2(y);
  assertEquals(Array.from(await back.data()), REFERENCE.squeeze.x.values);
  // The TF space_to_depth index formula on another shape.
  const [b, h, w, c] = [1, 6, 2, 2];
  const values = Float32Array.from({ length: b * h * w * c }, (_, i) => i);
  const z = await squeeze2x2(tf.tensor4d(values, [b, h, w, c])).data();
  for (let i = 0; i < h / 2; i++) {
    for (let j = 0; j < w / 2; j++) {
      for (const [di, dj] of [[0, 0], [0, 1], [1, 0], [1, 1]]) {
        for (let k = 0; k < c; k++) {
          assertEquals(
            z[((i * (w / 2) + j) * 4 + 2 * di + dj) * c + k],
            values[((2 * i + di) * w + 2 * j + dj) * c + k],
          );
        }
      }
    }
  }
  // A gradient flows through both on the wasm backend (depthToSpace's would not).
  const g = tf.grad((t: tf.Tensor) => tf.sum(tf.square(unsqueeze2x2(squeeze2x2(t as tf.Tensor4D)))))(x);
  assertAlmostEquals(await maxAbsDiff(g, tf.mul(x, 2)), 0, 1e-6);
  assertThrows(() => squeeze2x2(tf.zeros([1, 3, 4, 1])), UsageError, "even height and width");
  tf.dispose([x, y, back, g]);
});

Deno.test("ActNorm initialises on its first batch as the torch reference and its log-det matches", async () => {
  const ref = REFERENCE.actnorm;
  const norm = new ActNorm({ channels: 6 });
  const x = tensorOf(ref.x);
  const { y, logDet } = norm.forward(x, tf.zeros([x.shape[0]]));
  assert(norm.initialized);
  assert(await maxAbsDiff(norm.params.get("b"), ref.b) < 1e-5, "b");
  assert(await maxAbsDiff(norm.params.get("logs"), ref.logs) < 1e-5, "logs");
  const yError = await maxAbsDiff(y, ref.y.values), logDetError = await maxAbsDiff(logDet, ref.logDet);
  assert(yError < 1e-5, `y error ${yError}`);
  assert(logDetError < 1e-5 * Math.max(1, Math.abs(ref.logDet[0])), `log-det error ${logDetError}`);
  // The normalised batch has zero mean and unit variance per channel.
  const { mean, variance } = tf.moments(tf.reshape(y, [-1, 6]), 0);
  assert(await maxAbsDiff(mean, new Float32Array(6)) < 1e-5);
  assert(await maxAbsDiff(variance, new Float32Array(6).fill(1)) < 1e-4);
  tf.dispose([x, y, logDet, mean, variance]);
  norm.dispose();
});

for (const [name, Coupling] of [["additive", AdditiveCoupling], ["affine", AffineCoupling]] as const) {
  Deno.test(`a flow step (ActNorm → reverse → ${name} conv coupling) matches torch on fixed weights`, async () => {
    const ref = name === "additive" ? REFERENCE.additiveStep : REFERENCE.affineStep;
    const params = new Params();
    const channels = ref.x.shape[3];
    const layers: Bijection[] = [
      new ActNorm({ channels, params, prefix: "actnorm/" }),
      new ChannelPermutation({ channels, kind: "reverse" }),
      new Coupling(new Rng(1), { channels, hidden: ref.hidden, kind: "conv", params, prefix: "coupling/" }),
    ];
    for (const [key, w] of Object.entries(ref.weights)) params.get(`coupling/${key}`).assign(tensorOf(w));
    const x = tensorOf(ref.x);
    let h = x, logDet: tf.Tensor1D = tf.zeros([x.shape[0]]);
    for (const layer of layers) ({ y: h, logDet } = layer.forward(h, logDet));
    const yError = await maxAbsDiff(h, ref.y.values), logDetError = await maxAbsDiff(logDet, ref.logDet);
    assert(yError < 1e-5, `y error ${yError}`);
    assert(logDetError < 1e-5 * Math.max(1, ...ref.logDet.map(Math.abs)), `log-det error ${logDetError}`);
    for (
      const [key, values] of [["actnorm/", ref.actnorm], ["coupling/nn/actnorm0/", ref.actnorm0], [
        "coupling/nn/actnorm1/",
        ref.actnorm1,
      ]] as const
    ) {
      assert(await maxAbsDiff(params.get(`${key}b`), values.b) < 1e-5, `${key}b`);
      assert(await maxAbsDiff(params.get(`${key}logs`), values.logs) < 1e-5, `${key}logs`);
    }
    for (const layer of layers) layer.dispose();
    params.dispose();
  });
}

/** Every layer kind with randomised weights, on the input shape it is made for. */
function layerCases(rng: Rng): { name: string; layer: Bijection; shape: number[] }[] {
  return [
    { name: "ActNorm (NHWC)", layer: new ActNorm({ channels: 4 }), shape: [3, 2, 3, 4] },
    { name: "ActNorm (dense)", layer: new ActNorm({ channels: 5 }), shape: [3, 5] },
    {
      name: "ChannelPermutation reverse",
      layer: new ChannelPermutation({ channels: 6, kind: "reverse" }),
      shape: [3, 2, 2, 6],
    },
    {
      name: "ChannelPermutation shuffle",
      layer: new ChannelPermutation({ channels: 7, kind: "shuffle", rng }),
      shape: [3, 7],
    },
    { name: "Invertible1x1 (NHWC)", layer: new Invertible1x1(rng, { channels: 6 }), shape: [3, 2, 2, 6] },
    { name: "Invertible1x1 (dense)", layer: new Invertible1x1(rng, { channels: 9 }), shape: [3, 9] },
    { name: "AdditiveCoupling dense", layer: new AdditiveCoupling(rng, { channels: 7, hidden: 8 }), shape: [3, 7] },
    {
      name: "AdditiveCoupling conv",
      layer: new AdditiveCoupling(rng, { channels: 4, hidden: 8, kind: "conv" }),
      shape: [3, 4, 4, 4],
    },
    { name: "AffineCoupling dense", layer: new AffineCoupling(rng, { channels: 6, hidden: 8 }), shape: [3, 6] },
    {
      name: "AffineCoupling conv",
      layer: new AffineCoupling(rng, { channels: 6, hidden: 8, kind: "conv" }),
      shape: [3, 4, 4, 6],
    },
  ];
}

Deno.test("every layer inverts its forward pass within 1e-4 with randomised weights", async () => {
  const rng = new Rng(7);
  for (const { name, layer, shape } of layerCases(rng)) {
    const x = tf.tensor(rng.normalArray(shape.reduce((a, b) => a * b, 1)), shape);
    tf.dispose(layer.forward(x, tf.zeros([shape[0]])).y); // data-dependent initialisations
    randomize(layer.params, rng, 0.3);
    const before = tf.memory().numTensors;
    const error = await roundTrip(layer, x);
    assert(error < 1e-4, `${name}: round trip error ${error}`);
    assertEquals(tf.memory().numTensors, before, `${name} leaks tensors`);
    x.dispose();
    layer.dispose();
  }
  const split = new Split(6);
  const x = tf.tensor(rng.normalArray(2 * 3 * 6), [2, 3, 6]);
  const { y, factored } = split.forward(x);
  assertEquals([y.shape, factored.shape], [[2, 3, 3], [2, 3, 3]]);
  const back = split.inverse(y, factored);
  assertEquals(await maxAbsDiff(back, x), 0);
  assertThrows(() => split.inverse(factored, tf.zeros([2, 3, 2])), UsageError, "expects 3 + 3 channels");
  tf.dispose([x, y, factored, back]);
});

Deno.test("log-dets of affine coupling, ActNorm and the 1×1 convolution equal log|det| of the tf.grad Jacobian", async () => {
  const rng = new Rng(11);
  const cases: [Bijection, number[]][] = [
    [new AffineCoupling(rng, { channels: 8, hidden: 6 }), [1, 8]],
    [new AffineCoupling(rng, { channels: 2, hidden: 6, kind: "conv" }), [1, 2, 2, 2]],
    [new ActNorm({ channels: 2 }), [1, 2, 2, 2]],
    [new ActNorm({ channels: 7 }), [1, 7]],
    [new Invertible1x1(rng, { channels: 4 }), [1, 1, 2, 4]],
    [new Invertible1x1(rng, { channels: 8 }), [1, 8]],
  ];
  for (const [layer, shape] of cases) {
    // Initialises the ActNorms on a batch of 4.
    tf.tidy(() => {
      const batch = [4, ...shape.slice(1)];
      layer.forward(tf.tensor(rng.normalArray(batch.reduce((a, b) => a * b, 1)), batch), tf.zeros([4]));
    });
    randomize(layer.params, rng, 0.5);
    await checkLogDet(layer, shape, 3);
    layer.dispose();
  }
  // Volume-preserving layers add exactly 0.
  const additive = new AdditiveCoupling(rng, { channels: 6, hidden: 4 });
  randomize(additive.params, rng);
  const { y, logDet } = additive.forward(tf.ones([2, 6]), tf.zeros([2]));
  assertEquals(Array.from(await logDet.data()), [0, 0]);
  tf.dispose([y, logDet]);
  additive.dispose();
});

Deno.test("gradients flow to every variable of every layer on the wasm backend", async () => {
  const rng = new Rng(5);
  for (const { name, layer, shape } of layerCases(rng)) {
    const x = tf.tensor(rng.normalArray(shape.reduce((a, b) => a * b, 1)), shape);
    tf.dispose(layer.forward(x, tf.zeros([shape[0]])).y);
    randomize(layer.params, rng, 0.3);
    const variables = layer.params.list();
    if (variables.length === 0) {
      assert(name.startsWith("ChannelPermutation"), `${name} has no variables`);
      x.dispose();
      layer.dispose();
      continue;
    }
    const { value, grads } = tf.variableGrads(() =>
      tf.tidy(() => {
        const { y, logDet } = layer.forward(x, tf.zeros([shape[0]]), { training: true, rng });
        return tf.add(tf.sum(tf.square(y)), tf.sum(logDet)) as tf.Scalar;
      }), variables);
    for (const v of variables) {
      const g = await grads[v.name].data();
      assert(g.every(Number.isFinite), `${name}: ${v.name} has a non-finite gradient`);
      assert(g.some((e) => e !== 0), `${name}: ${v.name} gets no gradient`);
    }
    tf.dispose([value, x, ...Object.values(grads)]);
    layer.dispose();
  }
});

Deno.test("layers reject wrong shapes and options with UsageError", () => {
  const rng = new Rng(1);
  const norm = new ActNorm({ channels: 3 });
  assertThrows(() => norm.forward(tf.zeros([2, 4]), tf.zeros([2])), UsageError, "expects 3 channels");
  assertThrows(() => norm.inverse(tf.zeros([2, 3])), Error, "before the data-dependent initialisation");
  assertThrows(
    () => new AdditiveCoupling(rng, { channels: 1, hidden: 4 }),
    UsageError,
    "channels must be an integer ≥ 2",
  );
  assertThrows(
    () => new AdditiveCoupling(rng, { channels: 4, hidden: 0 }),
    UsageError,
    "hidden must be an integer ≥ 1",
  );
  assertThrows(() => new ChannelPermutation({ channels: 4, kind: "shuffle" }), UsageError, "needs an rng");
  const conv = new AdditiveCoupling(rng, { channels: 4, hidden: 4, kind: "conv" });
  assertThrows(() => conv.forward(tf.zeros([2, 4]), tf.zeros([2])), UsageError, "conv coupling expects");
  assertThrows(() => unsqueeze2x2(tf.zeros([1, 2, 2, 3])), UsageError, "4·channels");
  norm.dispose();
  conv.dispose();
});
