/**
 * The host-side arithmetic of the webgpu kernels, without a GPU: uniform layout (WGSL's alignment rules, as TF.js's
 * makeUniforms lays them out), workgroup grids, how the filter gradient cuts the positions, and which reductions
 * the column kernel takes. The kernels themselves are tested on a WebGPU adapter in tests/webgpu/.
 */
import { assert, assertEquals } from "../../assert.ts";
import { uniformBytes } from "../../../lib/core/kernels/webgpu_host.ts";
import { workgroupsFor } from "../../../lib/core/kernels/webgpu_launch.ts";
import { positionChunks } from "../../../lib/core/kernels/webgpu_conv_filter_grad.ts";
import { leadingAxes } from "../../../lib/core/kernels/webgpu_column_reduce.ts";

Deno.test("uniformBytes aligns a scalar to 4, a vec2 to 8, vec3 and vec4 to 16, and pads to the largest", () => {
  const bytes = uniformBytes([
    { type: "float32", data: [1.5] },
    { type: "int32", data: [2, 3] },
    { type: "int32", data: [4, 5, 6] },
    { type: "uint32", data: [7] },
  ]);
  // f32 at 0, vec2<i32> at 8, vec3<i32> at 16, u32 at 28; 32 bytes, a multiple of 16.
  assertEquals(bytes.byteLength, 32);
  const view = new DataView(bytes);
  assertEquals(view.getFloat32(0, true), 1.5);
  assertEquals([view.getInt32(8, true), view.getInt32(12, true)], [2, 3]);
  assertEquals([view.getInt32(16, true), view.getInt32(20, true), view.getInt32(24, true)], [4, 5, 6]);
  assertEquals(view.getUint32(28, true), 7);
});

Deno.test("uniformBytes puts a field after a 5- or 6-vector at a multiple of 16, and an empty field as one", () => {
  const bytes = uniformBytes([
    { type: "int32", data: [1, 2, 3, 4, 5] },
    { type: "float32", data: [9] },
    { type: "int32", data: [] },
  ]);
  const view = new DataView(bytes);
  assertEquals(view.getFloat32(32, true), 9);
  assertEquals(view.getInt32(36, true), 1);
  assertEquals(bytes.byteLength, 48);
});

Deno.test("workgroupsFor covers n invocations and spreads over y past the per-dimension limit", () => {
  assertEquals(workgroupsFor(1, 256), [1, 1]);
  assertEquals(workgroupsFor(256, 256), [1, 1]);
  assertEquals(workgroupsFor(257, 256), [2, 1]);
  assertEquals(workgroupsFor(0, 256), [1, 1]);
  const [x, y] = workgroupsFor(70_000 * 256, 256);
  assertEquals(x, 65535);
  assertEquals(y, 2);
  assert(x * y * 256 >= 70_000 * 256);
});

Deno.test("positionChunks covers every position once, in chunks of at least 64 where there are that many", () => {
  for (
    const [rows, columns, positions] of [[16, 32, 65536], [512, 64, 4096], [1024, 64, 1024], [9, 32, 100], [3, 1, 5]]
  ) {
    const { chunks, chunk } = positionChunks(rows, columns, positions);
    assert(chunks >= 1 && chunk >= 1);
    assert(chunks * chunk >= positions, `${chunks} × ${chunk} < ${positions}`);
    assert((chunks - 1) * chunk < positions, `chunk ${chunks} of ${chunk} would be empty for ${positions}`);
    if (positions >= 64) assert(chunk >= 64, `chunk ${chunk} for ${positions} positions`);
    assert(chunks * rows * columns <= 1 << 24);
  }
  // The first conv of the 64×64 VAE (16 weights × 32 channels, 65,536 positions) is cut into many chunks.
  assert(positionChunks(16, 32, 65536).chunks >= 64);
});

Deno.test("leadingAxes names the leading axes a sum or mean reduces, and 0 for any other reduction", () => {
  assertEquals(leadingAxes([0, 1, 2], [8, 4, 4, 3]), 3);
  assertEquals(leadingAxes([1, 0], [8, 4, 3]), 2);
  assertEquals(leadingAxes(0, [8, 3]), 1);
  assertEquals(leadingAxes([-4, -3], [8, 4, 4, 3]), 2);
  assertEquals(leadingAxes([1, 2], [8, 4, 4, 3]), 0);
  assertEquals(leadingAxes([0, 2], [8, 4, 4, 3]), 0);
  assertEquals(leadingAxes([0, 1], [8, 3]), 0, "all axes: TF.js's own reduction needs no transpose");
  assertEquals(leadingAxes(-1, [8, 3]), 0);
});
