import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { logAbsDet } from "../../lib/ml/linalg.ts";
import {
  ConvFiRevNet,
  type ConvFiRevNetOptions,
  DenseFiRevNet,
  type FiRevNet,
  firevnetMnistInput,
  metamers,
  nuisanceInterpolation,
} from "../../lib/models/firevnet.ts";

await selectBackend("wasm");

async function maxAbsDiff(a: tf.Tensor, b: tf.Tensor): Promise<number> {
  assertEquals(a.shape, b.shape);
  const diff = tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))));
  const value = (await diff.data())[0];
  diff.dispose();
  return value;
}

/** Replaces every trainable variable by N(0, scale²) draws: zero-initialised last layers make inversion trivial. */
function randomize(net: FiRevNet, rng: Rng, scale: number): void {
  for (const v of net.params.list()) v.assign(tf.tidy(() => tf.tensor(rng.normalArray(v.size, scale), v.shape)));
}

function randomDense(seed: number, dim = 12, classes = 3): DenseFiRevNet {
  const rng = new Rng(seed);
  const net = new DenseFiRevNet(rng, { dim, classes, blocks: 4, hidden: 16 });
  randomize(net, rng, 0.3);
  return net;
}

const SMALL_CONV: ConvFiRevNetOptions = { side: 8, levels: 2, steps: 2, filters: 8, channels: 2, classes: 3 };

/** A conv net with ActNorms initialised on a batch, then every variable randomised. */
function randomConv(seed: number, options: ConvFiRevNetOptions = SMALL_CONV, scale = 0.2): ConvFiRevNet {
  const rng = new Rng(seed);
  const net = new ConvFiRevNet(rng, options);
  const { side, channels = 3 } = options;
  const init = tf.tensor4d(rng.normalArray(8 * side * side * channels), [8, side, side, channels]);
  tf.dispose(Object.values(net.forward(init)));
  init.dispose();
  randomize(net, rng, scale);
  return net;
}

function inputs(net: FiRevNet, batch: number, seed: number): tf.Tensor {
  const rng = new Rng(seed);
  if (net instanceof ConvFiRevNet) {
    return tf.tensor4d(rng.normalArray(batch * net.dim), [batch, net.side, net.side, net.channels]);
  }
  return tf.tensor2d(rng.normalArray(batch * net.dim), [batch, net.dim]);
}

for (const [name, make] of [["dense", () => randomDense(1)], ["conv", () => randomConv(2)]] as const) {
  Deno.test(`${name} fiRevNet inverts within 1e-4 with randomised weights, without leaking tensors`, async () => {
    const net = make();
    const x = inputs(net, 5, 3);
    const before = tf.memory().numTensors;
    const { zs, zn, logDet } = net.forward(x);
    assertEquals([zs.shape, zn.shape, logDet.shape], [[5, net.classes], [5, net.dim - net.classes], [5]]);
    const back = await net.inverse(zs, zn);
    const error = await maxAbsDiff(back, x);
    assert(error < 1e-4, `round trip error ${error}`);
    tf.dispose([zs, zn, logDet, back]);
    assertEquals(tf.memory().numTensors, before);
    x.dispose();
    net.dispose();
  });
}

Deno.test("metamers carry z_s of xA and z_n of xB (dense and conv, 1e-4)", async () => {
  for (const net of [randomDense(4), randomConv(5)]) {
    const xA = inputs(net, 4, 6), xB = inputs(net, 4, 7);
    const before = tf.memory().numTensors;
    const met = await metamers(net, xA, xB);
    assertEquals(met.shape, xA.shape);
    const a = net.forward(xA), b = net.forward(xB), m = net.forward(met);
    const zsError = await maxAbsDiff(m.zs, a.zs), znError = await maxAbsDiff(m.zn, b.zn);
    assert(zsError < 1e-4, `${net.constructor.name}: z_s error ${zsError}`);
    assert(znError < 1e-4, `${net.constructor.name}: z_n error ${znError}`);
    assert(await maxAbsDiff(met, xA) > 0.1, "the metamer differs from xA");
    tf.dispose([met, ...[a, b, m].flatMap((o) => [o.zs, o.zn, o.logDet])]);
    assertEquals(tf.memory().numTensors, before);
    tf.dispose([xA, xB]);
    net.dispose();
  }
});

Deno.test("nuisanceInterpolation keeps z_s and moves z_n linearly from A to B", async () => {
  const net = randomDense(8);
  const xA = inputs(net, 3, 9), xB = inputs(net, 3, 10);
  const steps = 5;
  const path = await nuisanceInterpolation(net, xA, xB, steps);
  assertEquals(path.shape, [steps, 3, net.dim]);
  const a = net.forward(xA), b = net.forward(xB);
  const first = tf.tidy(() => tf.squeeze(tf.slice(path, [0, 0, 0], [1, -1, -1]), [0]));
  assert(await maxAbsDiff(first, xA) < 1e-4, "t = 0 is xA");
  for (let s = 0; s < steps; s++) {
    const t = s / (steps - 1);
    const xs = tf.tidy(() => tf.squeeze(tf.slice(path, [s, 0, 0], [1, -1, -1]), [0]));
    const z = net.forward(xs);
    const wantZn = tf.tidy(() => tf.add(tf.mul(a.zn, 1 - t), tf.mul(b.zn, t)));
    assert(await maxAbsDiff(z.zs, a.zs) < 1e-4, `z_s at step ${s}`);
    assert(await maxAbsDiff(z.zn, wantZn) < 1e-4, `z_n at step ${s}`);
    tf.dispose([xs, wantZn, z.zs, z.zn, z.logDet]);
  }
  await assertRejects(() => nuisanceInterpolation(net, xA, xB, 1), UsageError, "steps must be an integer ≥ 2");
  tf.dispose([path, first, xA, xB, a.zs, a.zn, a.logDet, b.zs, b.zn, b.logDet]);
  net.dispose();
});

Deno.test("the conv fiRevNet's log-det equals log|det| of its tf.grad Jacobian (affine couplings, 1×1 convs)", async () => {
  const options: ConvFiRevNetOptions = {
    side: 4,
    levels: 2,
    steps: 2,
    filters: 4,
    channels: 1,
    classes: 2,
    coupling: "affine",
    permutation: "conv",
  };
  const net = randomConv(12, options, 0.3);
  const x0 = new Rng(13).normalArray(16);
  const x = tf.tensor4d(x0, [1, 4, 4, 1]);
  const rows: number[][] = [];
  for (let i = 0; i < net.dim; i++) {
    const g = tf.grad((input: tf.Tensor) => {
      const { zs, zn } = net.forward(input);
      return tf.sum(tf.slice(tf.concat([zs, zn], 1), [0, i], [1, 1]));
    })(x);
    rows.push(Array.from(await g.data()));
    g.dispose();
  }
  const { zs, zn, logDet } = net.forward(x);
  const got = (await logDet.data())[0], want = logAbsDet(rows);
  assertAlmostEquals(got, want, 1e-3, `log-det ${got} vs Jacobian ${want}`);
  assert(Math.abs(want) > 0.1, "non-trivial log-det");
  tf.dispose([x, zs, zn, logDet]);
  net.dispose();
});

Deno.test("the reference conv fiRevNet has the reference shapes: 16×16×12 → 8×8×24 → 4×4×48, d 3,072", async () => {
  const net = new ConvFiRevNet(new Rng(1), { side: 32, levels: 3, steps: 1, filters: 8 });
  assertEquals([net.dim, net.classes, net.finalShape], [3072, 10, [4, 4, 48]]);
  const digits = new Float32Array(2 * 784).map((_, i) => (i % 7) / 6);
  const x = firevnetMnistInput(digits, null);
  assertEquals(x.shape, [2, 32, 32, 3]);
  const values = await x.data();
  // Channels 1–2 and the 2-pixel border are 2·0 − 1; the digit sits in channel 3 at offset (2, 2).
  assertEquals(values[0], -1);
  assertEquals(values[((0 * 32 + 2) * 32 + 3) * 3 + 2], Math.fround(2 * digits[1] - 1));
  assertEquals(values[((0 * 32 + 2) * 32 + 3) * 3 + 1], -1);
  const noisy = await firevnetMnistInput(digits, new Rng(2)).data();
  const shift = noisy.map((v, i) => v - values[i]);
  assert(shift.every((d) => d >= 0 && d < 2 / 256 + 1e-6) && shift.some((d) => d > 0), "u ~ U(0, 1/256), doubled");
  const { zs, zn, logDet } = net.forward(x);
  assertEquals([zs.shape, zn.shape], [[2, 10], [2, 3062]]);
  const back = await net.inverse(zs, zn);
  assert(await maxAbsDiff(back, x) < 1e-4);
  tf.dispose([x, zs, zn, logDet, back]);
  net.dispose();
});

Deno.test("inverse with the wrong widths names both; bad options raise UsageError", async () => {
  const net = randomDense(1, 12, 3);
  await assertRejects(
    () => net.inverse(tf.zeros([2, 4]), tf.zeros([2, 9])),
    UsageError,
    "widths (3, 9), got z_s [2,4] and z_n [2,9]",
  );
  net.dispose();
  const rng = new Rng(1);
  const dense = { dim: 10, classes: 2, blocks: 2, hidden: 4 };
  assertThrows(() => new DenseFiRevNet(rng, { ...dense, classes: 10 }), UsageError, "classes must be < dim");
  assertThrows(() => new DenseFiRevNet(rng, { ...dense, blocks: 0 }), UsageError, "blocks must be an integer ≥ 1");
  assertThrows(() => new DenseFiRevNet(rng, { ...dense, hidden: 0 }), UsageError, "hidden must be an integer ≥ 1");
  const conv = { side: 8, levels: 2, steps: 1, filters: 4 };
  assertThrows(() => new ConvFiRevNet(rng, { ...conv, side: 6 }), UsageError, "divisible by 2^levels = 4");
  assertThrows(() => new ConvFiRevNet(rng, { ...conv, levels: 0 }), UsageError, "levels must be an integer ≥ 1");
  assertThrows(() => new ConvFiRevNet(rng, { ...conv, channels: 1, classes: 64 }), UsageError, "classes must be < dim");
  assertThrows(() => new ConvFiRevNet(rng, { ...conv, steps: 0 }), UsageError, "steps must be an integer ≥ 1");
  const convNet = new ConvFiRevNet(rng, conv);
  assertThrows(() => convNet.forward(tf.zeros([1, 8, 8, 1])), UsageError, "[batch, 8, 8, 3]");
  await assertRejects(() => convNet.inverse(tf.zeros([1, 10]), tf.zeros([1, 182])), Error, "before the ActNorm");
  convNet.dispose();
});

Deno.test("both nets train on the wasm backend: every variable gets a gradient, the loss falls", async () => {
  // Randomised weights: at the zero init, only the last layers of the coupling networks get gradients.
  for (const net of [randomDense(2), randomConv(3)]) {
    const rng = new Rng(4);
    const x = inputs(net, 16, 5);
    const labels = tf.oneHot(tf.tensor1d(Array.from({ length: 16 }, (_, i) => i % net.classes), "int32"), net.classes);
    const optimizer = tf.train.adam(1e-2);
    const loss = () =>
      tf.tidy(() => {
        const { zs, zn, logDet } = net.forward(x, { training: true, rng });
        const ce = tf.losses.softmaxCrossEntropy(labels, net.logits(zs, { training: true }));
        return tf.add(ce, tf.mul(1e-3, tf.add(tf.mean(tf.square(zn)), tf.mean(logDet)))) as tf.Scalar;
      });
    const variables = net.params.list();
    const { value, grads } = tf.variableGrads(loss, variables);
    for (const v of variables) {
      const g = await grads[v.name].data();
      assert(g.every(Number.isFinite) && g.some((e) => e !== 0), `${net.constructor.name}: ${v.name} gets no gradient`);
    }
    const first = (await value.data())[0];
    optimizer.applyGradients(grads as unknown as Record<string, tf.Variable>);
    tf.dispose([value, ...Object.values(grads)]);
    for (let i = 0; i < 20; i++) optimizer.minimize(loss, true, variables)?.dispose();
    const last = (await loss().data())[0];
    assert(last < first, `${net.constructor.name}: loss ${first} → ${last}`);
    if (net instanceof ConvFiRevNet) {
      const mean = await net.stats.get("bn/mean").data();
      assert(mean.some((m) => m !== 0), "training moves the BatchNorm running mean");
    }
    optimizer.dispose();
    tf.dispose([x, labels]);
    net.dispose();
  }
});
