import * as tf from "@tensorflow/tfjs";
import { assert } from "../../assert.ts";
import { selectBackend } from "../../../lib/core/backend.ts";
import { Rng } from "../../../lib/core/rng.ts";
import { type ConvGradientRoute, setConvGradientRoute } from "../../../lib/core/kernels/conv2d_backprop.ts";

await selectBackend("wasm");

type Pad = "same" | "valid" | [[0, 0], [number, number], [number, number], [0, 0]];
interface Case {
  batch: number;
  height: number;
  width: number;
  cIn: number;
  cOut: number;
  kernel: [number, number];
  stride: [number, number];
  pad: Pad;
}

/**
 * The cpu reference's filter gradient costs about a microsecond per product (TensorBuffer.get per tap), so random
 * cases keep at most this many, by batch: fewer images take no other branch of the kernels.
 */
const CPU_PRODUCTS = 2_500_000;

/** Products of the cpu backend's filter gradient for one image of `c`. */
function productsPerImage(c: Case): number {
  const info = tf.backend_util.computeConv2DInfo(
    [1, c.height, c.width, c.cIn],
    [...c.kernel, c.cIn, c.cOut],
    c.stride,
    1,
    c.pad,
  );
  return info.outHeight * info.outWidth * c.kernel[0] * c.kernel[1] * c.cIn * c.cOut;
}

/** Random shapes covering stride 1/2, kernel 1..5, SAME/VALID/explicit padding, batch 1..16, channels 1..64, odd sizes. */
function cases(): Case[] {
  const rng = new Rng(11);
  const pick = <T>(values: T[]) => values[rng.int(values.length)];
  const out: Case[] = [
    {
      // The conv VAE's first layer (one image channel): 4,096 products summed per filter tap.
      batch: 16,
      height: 32,
      width: 32,
      cIn: 1,
      cOut: 32,
      kernel: [4, 4],
      stride: [2, 2],
      pad: [[0, 0], [1, 1], [1, 1], [0, 0]],
    },
    // Wide layers (32–64 channels) take the same branches at any batch: one or two images each.
    { batch: 2, height: 8, width: 8, cIn: 64, cOut: 64, kernel: [4, 4], stride: [2, 2], pad: "same" },
    { batch: 3, height: 4, width: 4, cIn: 64, cOut: 32, kernel: [4, 4], stride: [1, 1], pad: "valid" },
    { batch: 1, height: 7, width: 5, cIn: 3, cOut: 2, kernel: [5, 3], stride: [2, 1], pad: "same" },
    // The conv VAE's other encoder layers (k 4, s 2, same) and a 4×4 valid layer, one image each.
    { batch: 1, height: 32, width: 32, cIn: 32, cOut: 32, kernel: [4, 4], stride: [2, 2], pad: "same" },
    { batch: 1, height: 16, width: 16, cIn: 32, cOut: 64, kernel: [4, 4], stride: [2, 2], pad: "same" },
    { batch: 2, height: 4, width: 4, cIn: 64, cOut: 256, kernel: [4, 4], stride: [1, 1], pad: "valid" },
    { batch: 2, height: 64, width: 64, cIn: 1, cOut: 32, kernel: [4, 4], stride: [2, 2], pad: "same" },
    // The pose net: 3 image channels and 16–64 channels, k 3, s 2 and 1, same; odd sizes and batch 1.
    { batch: 2, height: 64, width: 64, cIn: 3, cOut: 16, kernel: [3, 3], stride: [2, 2], pad: "same" },
    { batch: 1, height: 32, width: 32, cIn: 16, cOut: 16, kernel: [3, 3], stride: [1, 1], pad: "same" },
    { batch: 1, height: 15, width: 17, cIn: 16, cOut: 32, kernel: [3, 3], stride: [2, 2], pad: "same" },
    { batch: 1, height: 8, width: 8, cIn: 64, cOut: 64, kernel: [3, 3], stride: [1, 1], pad: "same" },
    { batch: 3, height: 9, width: 11, cIn: 3, cOut: 8, kernel: [3, 3], stride: [2, 2], pad: "valid" },
    {
      batch: 1,
      height: 13,
      width: 10,
      cIn: 5,
      cOut: 9,
      kernel: [4, 4],
      stride: [2, 2],
      pad: [[0, 0], [2, 0], [0, 3], [
        0,
        0,
      ]],
    },
  ];
  while (out.length < 35) {
    const kernel: [number, number] = [1 + rng.int(5), 1 + rng.int(5)];
    const stride: [number, number] = [pick([1, 2]), pick([1, 2])];
    const explicit: Pad = [[0, 0], [rng.int(kernel[0]), rng.int(kernel[0])], [rng.int(kernel[1]), rng.int(kernel[1])], [
      0,
      0,
    ]];
    const c: Case = {
      batch: pick([1, 2, 5, 16]),
      height: kernel[0] + rng.int(12),
      width: kernel[1] + rng.int(12),
      cIn: pick([1, 2, 3, 8, 17, 64]),
      cOut: pick([1, 4, 7, 32, 64]),
      kernel,
      stride,
      pad: pick<Pad>(["same", "valid", explicit]),
    };
    out.push({ ...c, batch: Math.max(1, Math.min(c.batch, Math.floor(CPU_PRODUCTS / productsPerImage(c)))) });
  }
  return out;
}

/** Paths the kernels take: the shape rule, and each path forced (both must match whatever the rule picks). */
const ROUTES: ConvGradientRoute[] = ["auto", "gemm", "conv"];

async function compare(what: string, c: Case, f: () => tf.Tensor): Promise<void> {
  await tf.setBackend("cpu");
  const expected = await tf.tidy(f).data();
  await tf.setBackend("wasm");
  for (const route of ROUTES) {
    const previous = setConvGradientRoute(route);
    const before = tf.memory().numTensors;
    const result = tf.tidy(f);
    const actual = await result.data();
    result.dispose();
    setConvGradientRoute(previous);
    assert(tf.memory().numTensors === before, `${what} (${route}) leaked tensors`);
    assert(actual.length === expected.length, `${what} (${route}): ${actual.length} vs ${expected.length} values`);
    let scale = 1, diff = 0;
    for (let i = 0; i < expected.length; i++) {
      scale = Math.max(scale, Math.abs(expected[i]));
      diff = Math.max(diff, Math.abs(actual[i] - expected[i]));
    }
    // Largest seen: 3.2e-6 of the scale (filter gradients summing 16 384 products in another order than cpu).
    assert(diff <= 1e-5 * scale, `${what} (${route}) ${JSON.stringify(c)}: max diff ${diff} at scale ${scale}`);
  }
}

Deno.test("wasm Conv2DBackpropFilter and Conv2DBackpropInput match the cpu backend", async () => {
  const rng = new Rng(12);
  for (const c of cases()) {
    const xShape: [number, number, number, number] = [c.batch, c.height, c.width, c.cIn];
    const wShape: [number, number, number, number] = [...c.kernel, c.cIn, c.cOut];
    const x = rng.normalArray(xShape.reduce((a, b) => a * b));
    const w = rng.normalArray(wShape.reduce((a, b) => a * b));
    const outShape = tf.tidy(() => tf.conv2d(tf.tensor4d(x, xShape), tf.tensor4d(w, wShape), c.stride, c.pad).shape);
    if (outShape.some((d) => d <= 0)) continue;
    const dy = rng.normalArray(outShape.reduce((a, b) => a * b));
    await compare(
      "filter gradient",
      c,
      () =>
        tf.engine().runKernel("Conv2DBackpropFilter", { x: tf.tensor4d(x, xShape), dy: tf.tensor4d(dy, outShape) }, {
          strides: c.stride,
          pad: c.pad,
          dataFormat: "NHWC",
          filterShape: wShape,
        }) as tf.Tensor,
    );
    await compare(
      "input gradient",
      c,
      () => tf.conv2dTranspose(tf.tensor4d(dy, outShape), tf.tensor4d(w, wShape), xShape, c.stride, c.pad),
    );
  }
});

Deno.test("gradients of a conv / transposed-conv stack on wasm match the cpu backend", async () => {
  const rng = new Rng(13);
  const x = rng.normalArray(4 * 16 * 16 * 1);
  const w1 = rng.normalArray(4 * 4 * 1 * 8, 0.3), w2 = rng.normalArray(4 * 4 * 1 * 8, 0.3);
  const loss = (a: tf.Tensor, b: tf.Tensor) => {
    const h = tf.relu(tf.conv2d(tf.tensor4d(x, [4, 16, 16, 1]), a as tf.Tensor4D, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]));
    const y = tf.conv2dTranspose(h, b as tf.Tensor4D, [4, 16, 16, 1], 2, [[0, 0], [1, 1], [1, 1], [0, 0]]);
    return tf.sum(tf.square(tf.sub(y, tf.tensor4d(x, [4, 16, 16, 1]))));
  };
  const grads = async (backend: string) => {
    await tf.setBackend(backend);
    const g = tf.tidy(() => tf.grads(loss)([tf.tensor4d(w1, [4, 4, 1, 8]), tf.tensor4d(w2, [4, 4, 1, 8])]));
    const values = await Promise.all(g.map((t) => t.data()));
    tf.dispose(g);
    return values;
  };
  const cpu = await grads("cpu"), wasm = await grads("wasm");
  for (let k = 0; k < 2; k++) {
    const scale = Math.max(1, ...cpu[k].map(Math.abs));
    const diff = Math.max(...wasm[k].map((v, i) => Math.abs(v - cpu[k][i])));
    assert(diff <= 1e-4 * scale, `gradient ${k}: diff ${diff} at scale ${scale}`);
  }
});
