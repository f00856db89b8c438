/**
 * Runs an experiment script's experiment as its command line does (heartbeat and signal thread included) and
 * SIGKILLs this process as soon as the first checkpoint at step ≥ `step` is on disk: a crash that lands at a chosen
 * checkpoint on any machine, where a watching process would land wherever its polling and the load let it.
 *
 *   deno run -A tests/experiments/kill_at_checkpoint.ts <script> <step> ...arguments of the script
 *
 * Exits with code 3 when the run ends without such a checkpoint.
 */
import { pathToFileURL } from "node:url";
import { type AnyExperiment, parseInvocation, runExperiment } from "../../lib/core/experiment.ts";

const [script, step, ...args] = Deno.args;
const { experiment } = await import(pathToFileURL(script).href) as { experiment: AnyExperiment };
const invocation = parseInvocation(experiment, args);
if (invocation === "help") throw new Error("--help given");
await runExperiment(experiment, invocation, {
  watchSignals: true,
  report: () => {},
  checkpointed: (saved) => {
    if (saved >= Number(step)) Deno.kill(Deno.pid, "SIGKILL");
  },
});
console.error(`the run ended without a checkpoint at step ≥ ${step}`);
Deno.exit(3);
