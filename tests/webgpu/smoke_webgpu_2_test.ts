/** The webgpu-vs-wasm checks (smoke_webgpu.ts) of the experiments of group 2. */
import { webgpuChecks } from "./smoke_webgpu.ts";

webgpuChecks(1);
