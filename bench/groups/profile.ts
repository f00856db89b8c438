/**
 * `--profile`: per-kernel times of the timed entries' steps on the active backend (the conv VAE 64×64's when no
 * single-process step was timed), with GFLOP/s against the backend's one-thread sgemm rate and PyTorch's, and the
 * wall time the kernels leave unexplained.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { Rng } from "../../lib/core/rng.ts";
import type { KernelCall, KernelProfile, ProfileReport } from "../harness/report.ts";
import type { Workload } from "../harness/rounds.ts";

/**
 * Single-thread sgemm rates of the active backend in GFLOP/s: an n×n×n
 * matMul and a 1×1 convolution of the same GEMM shape with 8n rows
 * (XNNPACK's GEMM microkernel on wasm), each timed by its fastest of
 * `repeats` runs, since a limit is a best case.
 */
async function backendGemmGflops(n: number, repeats: number): Promise<{ matmul: number; conv1x1: number }> {
  const rng = new Rng(1);
  const fastest = async (run: () => tf.Tensor) => {
    let best = Infinity;
    for (let i = 0; i <= repeats; i++) {
      const start = performance.now();
      const out = run();
      await out.data();
      out.dispose();
      if (i > 0) best = Math.min(best, performance.now() - start);
    }
    return best / 1000;
  };
  const a = tf.tensor2d(rng.normalArray(n * n), [n, n]), b = tf.tensor2d(rng.normalArray(n * n), [n, n]);
  const x = tf.tensor4d(rng.normalArray(8 * n * n), [1, 8 * n, 1, n]), w = tf.reshape(b, [1, 1, n, n]) as tf.Tensor4D;
  const matmul = 2 * n ** 3 / await fastest(() => tf.matMul(a, b)) / 1e9;
  const conv1x1 = 2 * 8 * n ** 3 / await fastest(() => tf.conv2d(x, w, 1, "valid")) / 1e9;
  tf.dispose([a, b, x, w]);
  return { matmul, conv1x1 };
}

const numel = (shape: number[]) => shape.reduce((p, d) => p * d, 1);

/**
 * FLOPs (2 per multiply-add) of one call of a convolution or matrix-product
 * kernel from its input and output shapes, or null for other kernels. Shapes
 * follow the tfjs kernel inputs: Conv2D (x, filter), Conv2DBackpropInput (dy,
 * filter), Conv2DBackpropFilter (x, dy) → filter, BatchMatMul (a, b).
 */
export function kernelFlops(name: string, inputs: number[][], output: number[]): number | null {
  switch (name) {
    case "Conv2D":
    case "FusedConv2D": {
      const [kh, kw, ci] = inputs[1];
      return 2 * numel(output) * kh * kw * ci;
    }
    case "Conv2DBackpropInput": {
      const [kh, kw, ci] = inputs[1];
      return 2 * numel(inputs[0]) * kh * kw * ci;
    }
    case "Conv2DBackpropFilter": {
      const [kh, kw, ci] = output;
      return 2 * numel(inputs[1]) * kh * kw * ci;
    }
    case "BatchMatMul":
    case "_FusedMatMul": {
      // Output [..., m, n]; the shared dimension k = |a| · n / |output| whatever the transposes.
      const n = output.at(-1)!;
      return 2 * numel(output) * (numel(inputs[0]) * n / numel(output));
    }
    default:
      return null;
  }
}

/** The backend's one-thread sgemm rates and PyTorch's, measured once per `--profile` run. */
export async function gemmRates(torch: ProfileReport["gemm"]["torch"]): Promise<ProfileReport["gemm"]> {
  const n = 512;
  const rates = await backendGemmGflops(n, 7);
  return {
    n,
    backend_matmul_gflops: rates.matmul,
    backend_conv1x1_gflops: rates.conv1x1,
    limit_gflops: Math.max(rates.matmul, rates.conv1x1),
    torch,
  };
}

/**
 * Per-kernel time of a workload's steps on the active backend (`tf.profile`, `steps` steps after 2 warm-up ones),
 * with GFLOP/s against the sgemm limit in `gemm`, beside the wall time of as many unprofiled steps: what the
 * kernels do not account for is the per-op cost of the engine (tape, dispatch, allocation) and the JS between ops.
 */
export async function profileWorkload(
  workload: Workload,
  backend: string,
  gemm: ProfileReport["gemm"],
  steps = 3,
): Promise<ProfileReport> {
  const state = await workload.build(new Rng(0));
  const byKernel = new Map<string, { calls: number; ms: number; flops: number | null }>();
  const calls: KernelCall[] = [];
  let wall = Infinity;
  try {
    for (let i = 0; i < 2; i++) await state.step();
    for (let i = 0; i < steps; i++) {
      const start = performance.now();
      await state.step();
      wall = Math.min(wall, performance.now() - start);
    }
    for (let i = 0; i < steps; i++) {
      const info = await tf.profile(async () => {
        await state.step();
      });
      for (const k of info.kernels) {
        const ms = Number(k.kernelTimeMs);
        const flops = kernelFlops(k.name, k.inputShapes as number[][], k.outputShapes[0] as number[]);
        const entry = byKernel.get(k.name) ?? { calls: 0, ms: 0, flops: flops === null ? null : 0 };
        entry.calls++;
        entry.ms += ms;
        if (flops !== null) entry.flops! += flops;
        byKernel.set(k.name, entry);
        if (flops !== null && i === steps - 1) {
          calls.push({ name: k.name, input_shapes: k.inputShapes as number[][], ms, gflops: flops / ms / 1e6 });
        }
      }
    }
  } finally {
    state.dispose();
  }
  const total = [...byKernel.values()].reduce((s, k) => s + k.ms, 0);
  const kernels = [...byKernel].sort((a, b) => b[1].ms - a[1].ms).map(([name, k]): KernelProfile => {
    const gflops = k.flops === null ? null : k.flops / k.ms / 1e6;
    return {
      name,
      calls: k.calls / steps,
      ms: k.ms / steps,
      share: k.ms / total,
      gflop: k.flops === null ? null : k.flops / steps / 1e9,
      gflops,
      of_gemm_limit: gflops === null ? null : gflops / gemm.limit_gflops,
    };
  });
  return {
    backend,
    model: workload.name,
    batch: workload.batch,
    steps,
    total_ms: total / steps,
    wall_ms: wall,
    gemm,
    kernels,
    calls: calls.sort((a, b) => b.ms - a.ms),
  };
}
