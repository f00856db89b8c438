/**
 * The example experiment of docs/architecture.md is a real file: the page quotes
 * docs/examples/linear_slowflow.ts whole, this test's import makes `deno task test`
 * type-check it, and its smoke preset runs in process with a full summary.
 */
import * as tf from "@tensorflow/tfjs";
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { parseInvocation, runExperiment } from "../../lib/core/experiment.ts";
import { listRuns } from "../../lib/core/run_reader.ts";
import { experiment } from "../../docs/examples/linear_slowflow.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE = "docs/examples/linear_slowflow.ts";

await selectBackend("wasm");

Deno.test("docs/architecture.md quotes the example experiment exactly as its file holds it", () => {
  const page = Deno.readTextFileSync(`${ROOT}docs/architecture.md`);
  const marker = `<!-- example: ${EXAMPLE} -->`;
  const start = page.indexOf(marker);
  assert(start >= 0, `docs/architecture.md lacks ${marker}`);
  const block = page.slice(start + marker.length).match(/^\s*```ts\n([\s\S]*?)```/);
  assert(block, `no \`\`\`ts block after ${marker}`);
  assertEquals(block[1], Deno.readTextFileSync(`${ROOT}${EXAMPLE}`), `copy ${EXAMPLE} into docs/architecture.md`);
});

Deno.test("the example experiment's smoke preset runs, measures its target and frees its tensors", async () => {
  const root = Deno.makeTempDirSync();
  try {
    const invocation = parseInvocation(experiment, ["--preset", "smoke", "--runs", root, "--backend", "wasm"]);
    assert(invocation !== "help");
    const tensors = tf.memory().numTensors;
    const { dir, summary } = await runExperiment(experiment, invocation, { report: () => {} });
    assertEquals(tf.memory().numTensors, tensors, "tensors left after the run");
    assertEquals(listRuns(root).map((run) => [run.dir, run.status]), [[dir, "completed"]]);
    const [target] = summary.targets;
    assert(target.ours !== null && Number.isFinite(target.ours), JSON.stringify(target));
    assert((target.curve?.points.length ?? 0) >= 2, "the target's learning curve was logged");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
