import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";

Deno.test("auto never picks WebGPU on a software adapter, and reports the adapter", async () => {
  const info = await selectBackend("auto");
  assertEquals(tf.getBackend(), info.name);
  if (info.softwareAdapter) assert(info.name !== "webgpu", `picked webgpu on ${info.adapter}`);
  if (info.adapter === null) assertEquals(info.softwareAdapter, null);
  assertEquals(info.requested, "auto");
});

Deno.test("explicit wasm and cpu choices are honoured", async () => {
  assertEquals((await selectBackend("wasm")).name, "wasm");
  assertEquals((await selectBackend("cpu")).name, "cpu");
  await selectBackend("wasm");
});
