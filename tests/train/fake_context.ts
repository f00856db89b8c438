/** A RunContext that records logged metrics in memory and saves nothing, for training-loop tests. */
import { Progress } from "../../lib/core/progress.ts";
import { Rng } from "../../lib/core/rng.ts";
import type { RunContext } from "../../lib/core/experiment.ts";

/** A context whose `log` appends to `logged`; images, progress and checkpoints go nowhere. */
export function fakeContext(logged: { step: number; values: Record<string, number> }[]): RunContext {
  return {
    rng: new Rng(0),
    seed: 0,
    preset: "smoke",
    backend: { name: "wasm", adapter: null, softwareAdapter: null, requested: "wasm" },
    dir: "",
    resumed: null,
    log: (step, values) => logged.push({ step, values }),
    image: () => {},
    progress: (label, total) => new Progress(label, total, { write: () => {} }),
    checkpoint: () => Promise.resolve(),
    saveModel: (name) => Promise.resolve(name),
    stopRequested: new AbortController().signal,
  };
}
