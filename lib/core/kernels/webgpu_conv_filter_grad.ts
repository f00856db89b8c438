/**
 * The filter gradient of a 2-D convolution (`Conv2DBackpropFilter`, NHWC) on the webgpu backend as a tiled matrix
 * product. TF.js 4.22 runs a naive kernel there: one invocation per filter weight, each summing over every batch
 * position (65,536 terms for the first layer of the 64×64 conv VAE at batch 64) with a few hundred invocations in
 * all, which leaves a GPU idle; it is most of the BN-CNN's and Tent's step time.
 *
 * dW[k, o] = Σ_m A[k, m] · dy[m, o], with k = (kh, kw, ci), m = (b, oh, ow) and A the input patch values (the im2col
 * matrix, read in place, never stored). Workgroups of 16×16 invocations compute 32×32 tiles of dW, each over one
 * chunk of the positions through workgroup-memory tiles; the chunks' partial sums are then added by the column
 * kernel. Every sum runs in a fixed order, so the result is the same from run to run (no atomics).
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { reduceColumns } from "./webgpu_column_reduce.ts";
import { computePipeline, launch } from "./webgpu_launch.ts";
import { storedAsFloat32, type WebgpuBackendInternals } from "./webgpu_host.ts";

/** Filter weights (rows) and output channels (columns) one invocation computes: a 4×4 block, in registers. */
const BLOCK = 4;
const WORKGROUP = 64;
/** Workgroups a launch aims for, so that a large GPU has work for every core. */
const TARGET_WORKGROUPS = 1024;
/** Partial sums held at most (floats), beyond which the positions are cut into fewer chunks. */
const MAX_PARTIAL_FLOATS = 1 << 24;
/** Positions a chunk holds at least, so that an invocation's loop outweighs its start and its store. */
const MIN_CHUNK = 64;

const SHADER = /* wgsl */ `
struct Settings {
  inHeight : u32, inWidth : u32, inChannels : u32, outHeight : u32,
  outWidth : u32, outChannels : u32, filterWidth : u32, strideHeight : u32,
  strideWidth : u32, padTop : i32, padLeft : i32, rows : u32,
  positions : u32, chunk : u32, rowBlocks : u32, blocks : u32,
}
@group(0) @binding(0) var<storage, read_write> partial : array<f32>;
@group(0) @binding(1) var<storage, read> x : array<f32>;
@group(0) @binding(2) var<storage, read> dy : array<f32>;
@group(0) @binding(3) var<uniform> s : Settings;

@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id : vec3<u32>) {
  let block = id.x;
  if (block >= s.blocks) { return; }
  let row0 = (block % s.rowBlocks) * ${BLOCK}u;
  let column0 = (block / s.rowBlocks) * ${BLOCK}u;
  // Where each of the block's filter weights reads its input: offsets of (kh, kw) and the channel.
  var kh : array<i32, ${BLOCK}>;
  var kw : array<i32, ${BLOCK}>;
  var ci : array<u32, ${BLOCK}>;
  var rowOk : array<bool, ${BLOCK}>;
  for (var r = 0u; r < ${BLOCK}u; r++) {
    let k = row0 + r;
    rowOk[r] = k < s.rows;
    ci[r] = k % s.inChannels;
    let kk = k / s.inChannels;
    kw[r] = i32(kk % s.filterWidth);
    kh[r] = i32(kk / s.filterWidth);
  }
  var acc : array<array<f32, ${BLOCK}>, ${BLOCK}>;
  let start = id.z * s.chunk;
  let end = min(start + s.chunk, s.positions);
  for (var m = start; m < end; m++) {
    let ow = m % s.outWidth;
    let rest = m / s.outWidth;
    let oh = rest % s.outHeight;
    let b = rest / s.outHeight;
    let top = i32(oh * s.strideHeight) - s.padTop;
    let left = i32(ow * s.strideWidth) - s.padLeft;
    var g : array<f32, ${BLOCK}>;
    for (var c = 0u; c < ${BLOCK}u; c++) {
      let o = column0 + c;
      g[c] = select(0.0, dy[m * s.outChannels + min(o, s.outChannels - 1u)], o < s.outChannels);
    }
    for (var r = 0u; r < ${BLOCK}u; r++) {
      let ih = top + kh[r];
      let iw = left + kw[r];
      if (!rowOk[r] || ih < 0 || iw < 0 || ih >= i32(s.inHeight) || iw >= i32(s.inWidth)) { continue; }
      let a = x[((b * s.inHeight + u32(ih)) * s.inWidth + u32(iw)) * s.inChannels + ci[r]];
      for (var c = 0u; c < ${BLOCK}u; c++) { acc[r][c] += a * g[c]; }
    }
  }
  let base = id.z * s.rows * s.outChannels;
  for (var r = 0u; r < ${BLOCK}u; r++) {
    for (var c = 0u; c < ${BLOCK}u; c++) {
      if (row0 + r < s.rows && column0 + c < s.outChannels) {
        partial[base + (row0 + r) * s.outChannels + column0 + c] = acc[r][c];
      }
    }
  }
}`;

/** How the positions are cut: `chunks` chunks of `chunk` positions. */
export function positionChunks(rows: number, columns: number, positions: number): { chunks: number; chunk: number } {
  const blocks = Math.ceil(rows / BLOCK) * Math.ceil(columns / BLOCK);
  const byWork = Math.ceil(TARGET_WORKGROUPS * WORKGROUP / blocks);
  const byMemory = Math.max(1, Math.floor(MAX_PARTIAL_FLOATS / (rows * columns)));
  const bySize = Math.max(1, Math.floor(positions / MIN_CHUNK));
  const wanted = Math.max(1, Math.min(byWork, byMemory, bySize, 65535));
  const chunk = Math.ceil(positions / wanted);
  return { chunks: Math.ceil(positions / chunk), chunk };
}

interface FilterGradAttrs {
  strides: number | [number, number];
  pad: "valid" | "same" | number | tf.backend_util.ExplicitPadding;
  dataFormat: "NHWC" | "NCHW";
  dimRoundingMode?: "floor" | "round" | "ceil";
  filterShape: [number, number, number, number];
}

function filterGradient(stock: tf.KernelFunc) {
  return (args: { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs: tf.NamedAttrMap }): tf.TensorInfo => {
    const { x, dy } = args.inputs as Record<string, tf.TensorInfo>;
    const attrs = args.attrs as unknown as FilterGradAttrs;
    const backend = args.backend as WebgpuBackendInternals;
    if (attrs.dataFormat === "NCHW" || !storedAsFloat32(backend, x, dy)) {
      return stock(args as Parameters<tf.KernelFunc>[0]) as tf.TensorInfo;
    }
    const info = tf.backend_util.computeConv2DInfo(
      x.shape as [number, number, number, number],
      attrs.filterShape,
      attrs.strides,
      1,
      attrs.pad,
      attrs.dimRoundingMode,
      false,
      "channelsLast",
    );
    const rows = info.filterHeight * info.filterWidth * info.inChannels;
    const columns = info.outChannels;
    const positions = info.batchSize * info.outHeight * info.outWidth;
    const { chunks, chunk } = positionChunks(rows, columns, positions);
    const partial = backend.makeTensorInfo(chunks === 1 ? attrs.filterShape : [chunks, rows * columns], "float32");
    const name = "LatentlabConv2DBackpropFilter";
    const u32 = (value: number) => ({ type: "uint32", data: [value] });
    const i32 = (value: number) => ({ type: "int32", data: [value] });
    launch(backend, name, computePipeline(backend.device, name, SHADER), [partial, x, dy], [
      u32(info.inHeight),
      u32(info.inWidth),
      u32(info.inChannels),
      u32(info.outHeight),
      u32(info.outWidth),
      u32(info.outChannels),
      u32(info.filterWidth),
      u32(info.strideHeight),
      u32(info.strideWidth),
      i32(info.padInfo.top),
      i32(info.padInfo.left),
      u32(rows),
      u32(positions),
      u32(chunk),
      u32(Math.ceil(rows / BLOCK)),
      u32(Math.ceil(rows / BLOCK) * Math.ceil(columns / BLOCK)),
    ], [Math.ceil(Math.ceil(rows / BLOCK) * Math.ceil(columns / BLOCK) / WORKGROUP), 1, chunks]);
    if (chunks === 1) return partial;
    const result = reduceColumns(backend, partial, chunks, rows * columns, attrs.filterShape);
    (backend as unknown as { disposeData(dataId: object): void }).disposeData(partial.dataId);
    return result;
  };
}

/** Routes webgpu's Conv2DBackpropFilter (NHWC, float32) through the tiled kernel (idempotent). */
export function registerWebgpuConvFilterGradient(): void {
  const stock = tf.getKernel("Conv2DBackpropFilter", "webgpu");
  if (!stock || (stock as { latentlab?: boolean }).latentlab) return;
  tf.unregisterKernel("Conv2DBackpropFilter", "webgpu");
  tf.registerKernel({
    ...stock,
    kernelFunc: filterGradient(stock.kernelFunc) as unknown as tf.KernelFunc,
    latentlab: true,
  } as tf.KernelConfig);
}
