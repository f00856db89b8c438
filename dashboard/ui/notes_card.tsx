/// <reference lib="dom" />
/**
 * A run's notes: free text, tags and an archive switch, saved to the run's
 * notes.json (run.json is never rewritten by the dashboard).
 *
 * @module
 */
import { useState } from "preact/hooks";
import type { RunNotes } from "../../lib/core/run_layout.ts";
import { putNotes } from "./api.ts";

/** The notes card of a run page; `base` is the run's API path. */
export function NotesCard(props: { base: string; notes: RunNotes }) {
  const [note, setNote] = useState(props.notes.note);
  const [tags, setTags] = useState(props.notes.tags.join(", "));
  const [archived, setArchived] = useState(props.notes.archived);
  const [said, setSaid] = useState("");
  const save = () => {
    const list = [...new Set(tags.split(",").map((t) => t.trim()).filter((t) => t))];
    putNotes(props.base, { note, tags: list, archived }).then(() => setSaid("saved")).catch((e) => setSaid(String(e)));
  };
  return (
    <div class="card" id="notes">
      <h3>notes</h3>
      <textarea aria-label="note" value={note} onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)} />
      <label>
        tags <input aria-label="tags" value={tags} onInput={(e) => setTags((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        <input
          type="checkbox"
          aria-label="archived"
          checked={archived}
          onChange={(e) => setArchived((e.target as HTMLInputElement).checked)}
        />{" "}
        archived (hidden from the runs table; filter <code>archived:true</code> shows it)
      </label>
      <button type="button" onClick={save}>save</button> <span>{said}</span>
    </div>
  );
}
