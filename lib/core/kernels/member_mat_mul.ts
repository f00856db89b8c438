/**
 * A batched matMul for ensembles, `[K, r, c]·[K, c, m]` with a different
 * right operand per member, that is fast on the wasm backend.
 *
 * tfjs-backend-wasm 4.22 hands a BatchMatMul with one batch entry to XNNPACK
 * but runs more than one through a plain loop, about ten times slower per
 * entry: 9 × [100, 60]·[60, 40] takes 1.8 ms against 37 µs for one. Here one
 * kernel call runs the K products one at a time on the fast path, copying
 * each member's operands into their own heap tensors (XNNPACK caches its
 * packed right operand by tensor id, so every member gets fresh tensors).
 * Gradient code calls it for dx = dy·Wᵀ and dW = xᵀ·dy too (the transposes
 * are taken by latentlab's BatchMatMul). Other backends use tf.matMul.
 *
 * @module
 */
import /** @ignore */ * as tf from "@tensorflow/tfjs";
import { type KernelArgs, replaceWasmKernel, WasmOps } from "./wasm_ops.ts";

/** Kernel name of the member-wise product (wasm only). */
export const MEMBER_MAT_MUL = "LatentlabMemberMatMul";

function memberMatMulKernel(args: KernelArgs): tf.TensorInfo {
  const { inputs, backend, attrs } = args;
  const { a, b } = inputs as { a: tf.TensorInfo; b: tf.TensorInfo };
  const { transposeA, transposeB } = attrs as unknown as { transposeA: boolean; transposeB: boolean };
  const [members, a1, a2] = a.shape, [, b1, b2] = b.shape;
  const rows = transposeA ? a2 : a1, cols = transposeB ? b1 : b2;
  const ops = new WasmOps(backend);
  const out = ops.allocate([members, rows, cols]);
  const sizeA = a1 * a2, sizeB = b1 * b2, sizeOut = rows * cols;
  for (let k = 0; k < members; k++) {
    const ak = ops.backend.makeOutput([1, a1, a2], "float32");
    const bk = ops.backend.makeOutput([1, b1, b2], "float32");
    // Views after the allocations: a growing heap invalidates earlier ones.
    ops.view(ak).set(ops.view(a).subarray(k * sizeA, (k + 1) * sizeA));
    ops.view(bk).set(ops.view(b).subarray(k * sizeB, (k + 1) * sizeB));
    const product = tf.getKernel("BatchMatMul", "wasm")!.kernelFunc({
      inputs: { a: ak, b: bk },
      backend: ops.backend,
      attrs: { transposeA, transposeB } as unknown as tf.NamedAttrMap,
    }) as tf.TensorInfo;
    ops.view(out).set(ops.view(product), k * sizeOut);
    for (const info of [ak, bk, product]) ops.backend.disposeData(info.dataId);
  }
  return ops.finish(out);
}

/** Registers the member-wise product on the wasm backend (idempotent; a no-op without the wasm backend). */
export function registerWasmMemberMatMul(): void {
  if (!tf.getKernel("BatchMatMul", "wasm")) return;
  replaceWasmKernel(MEMBER_MAT_MUL, memberMatMulKernel);
}

function checkShapes(a: tf.Tensor, b: tf.Tensor, transposeA: boolean, transposeB: boolean): void {
  const inner = [transposeA ? a.shape[1] : a.shape[2], transposeB ? b.shape[2] : b.shape[1]];
  if (a.rank !== 3 || b.rank !== 3 || a.shape[0] !== b.shape[0] || inner[0] !== inner[1]) {
    throw new Error(`memberMatMul: cannot multiply [${a.shape}] by [${b.shape}] member by member`);
  }
}

/**
 * The product `a·b` member by member with optional transposes, `[K, ·, ·]`
 * operands, without a gradient: the kernel on wasm, tf.matMul elsewhere.
 * For gradient code that writes its own backward pass.
 */
export function memberProduct(a: tf.Tensor, b: tf.Tensor, transposeA = false, transposeB = false): tf.Tensor3D {
  checkShapes(a, b, transposeA, transposeB);
  if (tf.getBackend() !== "wasm") return tf.matMul(a as tf.Tensor3D, b as tf.Tensor3D, transposeA, transposeB);
  if (a.dtype !== "float32" || b.dtype !== "float32") throw new Error("memberMatMul: float32 operands only");
  registerWasmMemberMatMul();
  return tf.engine().runKernel(
    MEMBER_MAT_MUL,
    { a, b } as unknown as tf.NamedTensorMap,
    { transposeA, transposeB } as unknown as tf.NamedAttrMap,
  ) as tf.Tensor3D;
}
