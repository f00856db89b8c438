/** Fixtures shared by the dashboard's tests. */
import type { RunRow } from "../../dashboard/run_index.ts";
import { RunWriter } from "../../lib/core/run_writer.ts";

/** A new run of `experiment` in the store at `root`, written as an experiment writes it. */
export function newRun(root: string, experiment = "toy", config: Record<string, unknown> = { lr: 0.1 }): RunWriter {
  return RunWriter.create({
    root,
    experiment,
    argv: [],
    seed: 1,
    preset: "smoke",
    backend: { name: "wasm" },
    config,
    versions: {},
    gitCommit: null,
  });
}

/** The `experiment/id` of a run's directory, as the API names it. */
export const idOf = (dir: string): string => dir.split("/").slice(-2).join("/");

/** A completed run row of experiment "vae" with `fields` overriding the defaults. */
export function runRow(id: string, fields: Partial<RunRow> = {}): RunRow {
  return {
    experiment: "vae",
    id,
    status: "completed",
    created: "2024-01-01T00:00:00Z",
    ended: null,
    duration_s: 1,
    backend: "wasm",
    seed: 0,
    preset: "smoke",
    tags: [],
    config: {},
    metrics: {},
    final: {},
    skipped: 0,
    note: "",
    archived: false,
    ...fields,
  };
}

/**
 * Reads a server-sent event stream into `text` until a needle appears: the
 * response of GET …/events, read the way a browser's EventSource would.
 */
export function eventReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const stream = {
    text: "",
    async readUntil(needle: string): Promise<void> {
      while (!stream.text.includes(needle)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${needle}`);
        stream.text += decoder.decode(value);
      }
    },
    /** Stops reading, as a browser closing the page. */
    cancel: () => reader.cancel(),
  };
  return stream;
}
