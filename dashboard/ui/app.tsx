/// <reference lib="dom" />
/**
 * The dashboard: a header, and the page the URL hash names (runs table with
 * live charts, a run's page, the reproduction scorecard, or the sweeps).
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import type { RunRow } from "../run_index.ts";
import { RunPage } from "./run_page.tsx";
import { RunsPage } from "./runs_page.tsx";
import { ScorecardPage } from "./scorecard_page.tsx";
import { SweepPage, SweepsPage } from "./sweeps_page.tsx";
import { HparamsPage } from "./hparams_page.tsx";
import { route } from "./url_state.ts";
import { type SkippedFolder, SkippedFolders } from "./skipped_folders.tsx";
import { useHash } from "./use_hash.ts";

/** How often the runs listing is polled, so new runs and status changes show up. */
const POLL_MS = 3000;

/** The whole page; the runs listing is shared by every page. */
export function App() {
  const hash = useHash();
  const [runs, setRuns] = useState<RunRow[] | null>(null);
  const [lost, setLost] = useState(false);
  const [skipped, setSkipped] = useState<SkippedFolder[]>([]);
  useEffect(() => {
    let last = "";
    // A failed poll keeps the last listing and says the server is out of reach; the next poll tries again.
    const load = () =>
      fetch("/api/runs").then(async (res) => {
        if (!res.ok) throw new Error(`/api/runs: ${res.status}`);
        const text = await res.text();
        setLost(false);
        // An unchanged listing changes nothing on the page: no table or chart is rebuilt.
        if (text === last) return;
        last = text;
        const body = JSON.parse(text) as { runs: RunRow[]; skipped?: SkippedFolder[] };
        setRuns(body.runs);
        setSkipped(body.skipped ?? []);
      }).catch(() => setLost(true));
    load();
    const timer = setInterval(load, POLL_MS);
    return () => clearInterval(timer);
  }, []);
  const page = route(hash.page);
  return (
    <div>
      <header>
        <strong>latentlab</strong>
        <a href="#/">runs</a>
        <a href="#/scorecard">scorecard</a>
        <a href="#/hparams">hyperparameters</a>
        <a href="#/sweeps">sweeps</a>
        <span>
          {runs === null ? "" : `${runs.length} runs`}
        </span>
      </header>
      {lost && (
        <p class="connection-lost" role="alert">
          The dashboard server does not answer (stopped?); the page shows what it last received and retries every 3 s.
        </p>
      )}
      <main>
        {page.page === "runs" && <SkippedFolders id="skipped-folders" what="run" skipped={skipped} />}
        {runs === null ? <p>{lost ? "" : "loading…"}</p> : page.page === "run"
          // Keyed by the run: another run's page starts from nothing, not from this one's state.
          ? <RunPage key={`${page.experiment}/${page.id}`} experiment={page.experiment} id={page.id} runs={runs} />
          : page.page === "scorecard"
          ? <ScorecardPage />
          : page.page === "sweeps"
          ? <SweepsPage />
          : page.page === "hparams"
          ? <HparamsPage hash={hash} runs={runs} />
          : page.page === "sweep"
          ? <SweepPage id={page.id} />
          : <RunsPage hash={hash} runs={runs} />}
      </main>
    </div>
  );
}
