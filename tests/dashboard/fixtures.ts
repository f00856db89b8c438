/** Fixtures shared by the dashboard's tests. */
import type { RunRow } from "../../dashboard/run_index.ts";

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
