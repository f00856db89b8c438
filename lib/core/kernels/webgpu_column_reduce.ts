/**
 * Sum and Mean over the leading axes on the webgpu backend in one launch. TF.js reduces only innermost axes, so a
 * bias gradient (a sum of `[batch, …, channels]` over all but the channels) or BatchNorm's moments first transpose the
 * whole tensor: two launches and a copy, at every layer of every step. This kernel reduces the columns of the tensor
 * seen as `[rows, columns]` where it lies: one workgroup per column, threads striding over the rows, then a tree in
 * workgroup memory; or, for a few rows, one invocation per column. Other reductions go to TF.js's kernels.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { computePipeline, launch, workgroupsFor } from "./webgpu_launch.ts";
import { storedAsFloat32, type WebgpuBackendInternals } from "./webgpu_host.ts";

const WORKGROUP = 256;
const MAX_GROUPS_PER_DIMENSION = 65535;

const SHADER = /* wgsl */ `
struct Settings { rows : u32, columns : u32, mean : u32 }
@group(0) @binding(0) var<storage, read_write> result : array<f32>;
@group(0) @binding(1) var<storage, read> x : array<f32>;
@group(0) @binding(2) var<uniform> settings : Settings;
var<workgroup> partial : array<f32, ${WORKGROUP}>;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(local_invocation_id) local : vec3<u32>, @builtin(workgroup_id) group : vec3<u32>,
        @builtin(num_workgroups) groups : vec3<u32>) {
  let column = group.y * groups.x + group.x;
  var total = 0.0;
  if (column < settings.columns) {
    for (var row = local.x; row < settings.rows; row += ${WORKGROUP}u) {
      total += x[row * settings.columns + column];
    }
  }
  partial[local.x] = total;
  workgroupBarrier();
  for (var stride = ${WORKGROUP / 2}u; stride > 0u; stride >>= 1u) {
    if (local.x < stride) { partial[local.x] += partial[local.x + stride]; }
    workgroupBarrier();
  }
  if (local.x == 0u && column < settings.columns) {
    result[column] = select(partial[0], partial[0] / f32(settings.rows), settings.mean == 1u);
  }
}`;

/** Rows up to which one invocation adds a column's rows alone: a workgroup per column would idle most of its threads. */
const FEW_ROWS = 128;

const SHADER_FEW_ROWS = /* wgsl */ `
struct Settings { rows : u32, columns : u32, mean : u32, rowLength : u32 }
@group(0) @binding(0) var<storage, read_write> result : array<f32>;
@group(0) @binding(1) var<storage, read> x : array<f32>;
@group(0) @binding(2) var<uniform> settings : Settings;
@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) id : vec3<u32>) {
  let column = id.y * settings.rowLength + id.x;
  if (column >= settings.columns) { return; }
  var total = 0.0;
  for (var row = 0u; row < settings.rows; row++) { total += x[row * settings.columns + column]; }
  result[column] = select(total, total / f32(settings.rows), settings.mean == 1u);
}`;

/** How many leading axes `axis` names (all of 0 … k−1 and nothing else, 0 < k < rank), or 0 when it names others. */
export function leadingAxes(axis: number | number[], shape: number[]): number {
  const axes = [...new Set(tf.util.parseAxisParam(axis, shape))].sort((a, b) => a - b);
  const leading = axes.every((a, i) => a === i) ? axes.length : 0;
  return leading < shape.length ? leading : 0;
}

/**
 * The sums (or means) over the rows of `x` seen as `[rows, columns]`, as a new tensor of `shape` (whose size is
 * `columns`), in one launch; the order of additions is fixed, so the result is the same from run to run.
 */
export function reduceColumns(
  backend: WebgpuBackendInternals,
  x: tf.TensorInfo,
  rows: number,
  columns: number,
  shape: number[],
  mean = false,
): tf.TensorInfo {
  const result = backend.makeTensorInfo(shape, "float32");
  if (columns === 0) return result;
  if (rows <= FEW_ROWS) {
    const name = "LatentlabColumnReduceFewRows";
    const workgroups = workgroupsFor(columns, WORKGROUP, MAX_GROUPS_PER_DIMENSION);
    launch(backend, name, computePipeline(backend.device, name, SHADER_FEW_ROWS), [result, x], [
      { type: "uint32", data: [rows] },
      { type: "uint32", data: [columns] },
      { type: "uint32", data: [mean ? 1 : 0] },
      { type: "uint32", data: [workgroups[0] * WORKGROUP] },
    ], workgroups);
    return result;
  }
  const name = "LatentlabColumnReduce";
  const xGroups = Math.min(columns, MAX_GROUPS_PER_DIMENSION);
  launch(backend, name, computePipeline(backend.device, name, SHADER), [result, x], [
    { type: "uint32", data: [rows] },
    { type: "uint32", data: [columns] },
    { type: "uint32", data: [mean ? 1 : 0] },
  ], [xGroups, Math.ceil(columns / xGroups)]);
  return result;
}

type ReduceArgs = {
  inputs: { x: tf.TensorInfo };
  backend: unknown;
  attrs: { axis: number | number[]; keepDims: boolean };
};

function columnReduce(mean: boolean, stock: tf.KernelFunc) {
  return (args: ReduceArgs): tf.TensorInfo => {
    const { inputs: { x }, attrs: { axis, keepDims } } = args;
    const backend = args.backend as WebgpuBackendInternals;
    const leading = storedAsFloat32(backend, x) ? leadingAxes(axis, x.shape) : 0;
    if (leading === 0) return stock(args as unknown as Parameters<tf.KernelFunc>[0]) as tf.TensorInfo;
    const rows = tf.util.sizeFromShape(x.shape.slice(0, leading));
    const kept = x.shape.slice(leading);
    const columns = tf.util.sizeFromShape(kept);
    const shape = keepDims ? [...x.shape.slice(0, leading).map(() => 1), ...kept] : kept;
    return reduceColumns(backend, x, rows, columns, shape, mean);
  };
}

/** Routes webgpu's Sum and Mean over leading axes through the column kernel (idempotent). */
export function registerWebgpuColumnReduce(): void {
  for (const [kernelName, mean] of [["Sum", false], ["Mean", true]] as const) {
    const stock = tf.getKernel(kernelName, "webgpu");
    if (!stock || (stock as { latentlab?: boolean }).latentlab) continue;
    tf.unregisterKernel(kernelName, "webgpu");
    tf.registerKernel({
      ...stock,
      kernelFunc: columnReduce(mean, stock.kernelFunc) as unknown as tf.KernelFunc,
      latentlab: true,
    } as tf.KernelConfig);
  }
}
