/**
 * `deno task serve`: the dashboard. A Hono app over the run store (JSON API
 * and server-sent events) that serves a Preact + chart.js page bundled at
 * start with `deno bundle`.
 *
 * @module
 */
import { Hono } from "hono";
import { etag } from "hono/etag";
import { streamSSE } from "hono/streaming";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkRunsRoot, exitWithUsageError, parseCommandLine } from "../lib/core/cli.ts";
import { integer, resolveConfig } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { defaultRunsRoot } from "../lib/core/experiment.ts";
import { type MetricsRow, type Series, SWEEPS_FOLDER } from "../lib/core/run_layout.ts";
import { readConfig, readMedia, readRun, readRunNotes, readSummary, writeRunNotes } from "../lib/core/run_reader.ts";
import type { MetricsReader } from "../lib/core/run_metrics.ts";
import { scorecardHeadline, scoreResults } from "../lib/core/scorecard.ts";
import { findExperiment } from "../experiments/mod.ts";
import { mergedResults, RESULTS_FOLDER } from "../lib/core/reference_results.ts";
import { countStates, listSweeps, readSweep, skippedSweeps, sweepIds, taskStates } from "../lib/sweep/store.ts";
import type { SweepDetail, SweepSummary, SweepTaskRow } from "./ui/sweep_rows.ts";
import { downsample, thinRows } from "./downsample.ts";
import { registrySnapshot } from "./registry.ts";
import { isRunName, metricsProblem, RunIndex } from "./run_index.ts";

/** Options of {@linkcode createApp}. */
export interface AppOptions {
  /** The bundled UI script, served at /app.js. */
  script?: string;
  /** How often a live stream checks its run for new lines, in ms. */
  pollMs?: number;
  /**
   * Read every run's metrics once the server is up (a moment after this
   * returns, so that it listens first), so the first listing is as fast as later ones.
   */
  warm?: boolean;
  /**
   * Host names the Host header may carry (any port); others get 403, so that
   * a page on another site cannot reach the dashboard through DNS rebinding.
   * Unset: any host (tests, a reverse proxy).
   */
  allowedHosts?: readonly string[];
  /** The kept reference results the scorecard shows beside the store's runs (unset: the store alone). */
  results?: string;
}

/** The host name of a Host header, without its port ("[::1]:8787" → "[::1]"). */
export function hostName(header: string): string {
  return header.startsWith("[") ? header.slice(0, header.indexOf("]") + 1) : header.split(":")[0];
}

/**
 * Points per metric a live event carries at most: a writer appending
 * thousands of lines a second reaches the page thinned (each bucket's lowest
 * and highest value), not line by line.
 */
export const LIVE_POINTS_PER_METRIC = 500;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>latentlab</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/app.css"></head>
<body><div id="app">loading…</div><script type="module" src="/app.js"></script></body></html>`;

/** The dashboard's Hono app over the run store at `root`. */
export function createApp(root: string, options: AppOptions = {}): Hono {
  const index = new RunIndex(root);
  // Warming cannot fail (a run that cannot be read is listed with its problem); the timer lets the server listen first.
  if (options.warm) setTimeout(() => index.list(), 0);
  const app = new Hono();
  const pollMs = options.pollMs ?? 500;
  const allowed = options.allowedHosts?.map((h) => h.toLowerCase());
  if (allowed) {
    app.use(async (c, next) => {
      if (!allowed.includes(hostName(c.req.header("host") ?? "").toLowerCase())) {
        return c.json({ error: "this host name is not served; open the dashboard at the address it printed" }, 403);
      }
      await next();
    });
  }

  /** Resolves :exp/:id to a run directory, or answers 400 (malformed) / 404 (absent or outside the root). */
  const run = (exp: string, id: string): { dir: string } | { error: 400 | 404 } => {
    if (!isRunName(exp, id)) return { error: 400 };
    const dir = index.runDir(exp, id);
    return dir ? { dir } : { error: 404 };
  };

  /** {@linkcode run} for a name `experiment/id` as the page writes it. */
  const runByName = (name: string) => {
    const [exp, id, ...rest] = name.split("/");
    return rest.length === 0 && exp && id ? run(exp, id) : { error: 400 as const };
  };

  app.get("/", (c) => c.html(PAGE));
  app.get(
    "/app.js",
    (c) =>
      options.script === undefined
        ? c.text("the UI bundle was not built", 503)
        : c.body(options.script, 200, { "content-type": "text/javascript; charset=utf-8" }),
  );
  app.get(
    "/app.css",
    async (c) =>
      c.body(await Deno.readTextFile(fileURLToPath(new URL("./ui/app.css", import.meta.url))), 200, {
        "content-type": "text/css; charset=utf-8",
      }),
  );

  // Polled every few seconds: an ETag lets an unchanged listing come back as 304 with no body.
  app.use("/api/runs", etag());
  // Folders the listing passes over are named, so that a damaged run does not vanish without notice.
  app.get("/api/runs", async (c) => {
    c.header("cache-control", "no-cache");
    return c.json(await index.list());
  });

  // Verdicts recomputed with today's targets: the kept results, where this store's runs of a seed replace them.
  app.get("/api/scorecard", (c) => {
    const { results, skipped } = mergedResults(options.results ?? null, index.root);
    const groups = scoreResults(results, findExperiment);
    return c.json({ groups, headline: scorecardHeadline(groups), skipped });
  });

  // Sweeps are read from their files only: the dashboard never asks Slurm.
  app.get("/api/sweeps", async (c) => {
    const sweeps: SweepSummary[] = (await listSweeps(index.root)).map((s) => ({
      id: s.id,
      experiment: s.experiment,
      preset: s.preset,
      created: s.created,
      executor: s.executor,
      total: s.total,
      counts: s.counts,
    }));
    return c.json({ sweeps, skipped: skippedSweeps(index.root) });
  });

  app.get("/api/sweeps/:id", async (c) => {
    const id = c.req.param("id");
    // Only a sweep the store lists: no path is built from the request.
    if (!sweepIds(index.root).includes(id)) return c.json({ error: "no such sweep" }, 404);
    const dir = join(index.root, SWEEPS_FOLDER, id);
    let detail: SweepDetail;
    try {
      const sweep = readSweep(dir);
      const states = await taskStates(dir, index.root);
      const metric = sweep.spec?.metric ?? null;
      const tasks: SweepTaskRow[] = states.map((t) => ({
        index: t.index,
        key: t.key,
        values: t.values,
        seed: t.seed,
        status: t.status,
        run: t.run ? { experiment: basename(dirname(t.run)), id: basename(t.run) } : null,
        metric: t.metric,
        exit_code: t.exit_code,
        attempts: t.attempts,
      }));
      detail = {
        id,
        experiment: sweep.experiment_name,
        preset: sweep.preset,
        created: sweep.created,
        executor: sweep.executor,
        total: tasks.length,
        counts: countStates(states),
        varied: sweep.varied,
        metric: metric ? { name: metric.name, goal: metric.goal } : null,
        tasks,
      };
    } catch (error) {
      return c.json({ error: `${id}: ${error instanceof Error ? error.message : String(error)}` }, 500);
    }
    return c.json(detail);
  });

  const registry = registrySnapshot();
  app.get("/api/registry", (c) => c.json(registry));

  app.get("/api/runs/:exp/:id", (c) => {
    const found = run(c.req.param("exp"), c.req.param("id"));
    if ("error" in found) return c.json({ error: "no such run" }, found.error);
    const listed = readRun(found.dir);
    if (!listed) return c.json({ error: "run.json is missing or half-written" }, 404);
    const problem = listed.problem ? { problem: listed.problem } : {};
    return c.json({
      dir: found.dir,
      run: { ...listed.info, status: listed.status, ...problem },
      config: readConfig(found.dir),
      notes: readRunNotes(found.dir),
      summary: readSummary(found.dir),
      media: readMedia(found.dir),
    });
  });

  // Notes, tags and archiving live in notes.json beside run.json, which only the run's writer rewrites.
  app.put("/api/runs/:exp/:id/notes", async (c) => {
    const found = run(c.req.param("exp"), c.req.param("id"));
    if ("error" in found) return c.json({ error: "no such run" }, found.error);
    // A JSON body cannot come from another site's form without a preflight the server never grants.
    if (!c.req.header("content-type")?.startsWith("application/json")) {
      return c.json({ error: "send notes as application/json" }, 415);
    }
    const text = await c.req.text();
    if (text.length > 100_000) return c.json({ error: "notes are at most 100,000 bytes" }, 413);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return c.json({ error: "the body is not JSON" }, 400);
    }
    const problem = writeRunNotes(found.dir, body);
    return problem ? c.json({ error: problem }, 400) : c.json(readRunNotes(found.dir));
  });

  app.get("/api/runs/:exp/:id/metrics", async (c) => {
    const found = run(c.req.param("exp"), c.req.param("id"));
    if ("error" in found) return c.json({ error: "no such run" }, found.error);
    let metrics: MetricsReader;
    try {
      metrics = await index.metrics(found.dir);
    } catch (error) {
      return c.json({ error: metricsProblem(error) }, 500);
    }
    const query = metricsQuery((name) => c.req.query(name));
    if ("error" in query) return c.json({ error: query.error }, 400);
    const series = pickSeries(metrics, query.keys, query.from, query.maxPoints);
    if (c.req.query("format") === "csv") {
      const lines = ["key,step,time,value"];
      for (const [key, s] of series) s.x.forEach((x, i) => lines.push(csvRow([key, x, s.t[i], s.y[i]])));
      // RFC 4180: lines end in CRLF.
      return c.body(lines.join("\r\n") + "\r\n", 200, {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="${c.req.param("exp")}-${c.req.param("id")}.csv"`,
      });
    }
    return c.json({
      keys: [...metrics.series.keys()],
      series: Object.fromEntries(series),
      lines: metrics.lines,
      skipped: metrics.skipped,
    });
  });

  // The charts of a selection in one request: one per run would queue behind the browser's 6 connections per host.
  app.get("/api/metrics", async (c) => {
    const names = runNames(c.req.query("runs"));
    if (names.length === 0) return c.json({ error: "runs=<experiment>/<id>,… names no run" }, 400);
    const query = metricsQuery((name) => c.req.query(name));
    if ("error" in query) return c.json({ error: query.error }, 400);
    const series: Record<string, Record<string, Series>> = {};
    const offsets: Record<string, number> = {};
    const problems: Record<string, string> = {};
    const missing: string[] = [];
    for (const name of names) {
      const found = runByName(name);
      if ("error" in found) {
        // A malformed name is the request's fault; a run deleted since the page listed it is not.
        if (found.error === 400) return c.json({ error: `not a run name: ${name}` }, 400);
        missing.push(name);
        continue;
      }
      let metrics: MetricsReader;
      try {
        metrics = await index.metrics(found.dir);
      } catch (error) {
        problems[name] = metricsProblem(error);
        continue;
      }
      // Built from entries: a metric named __proto__ is a key like any other.
      series[name] = Object.fromEntries(pickSeries(metrics, query.keys, query.from, query.maxPoints));
      offsets[name] = metrics.offset;
    }
    return c.json({ series, offsets, missing, problems });
  });

  app.get("/api/runs/:exp/:id/media/*", async (c) => {
    const found = run(c.req.param("exp"), c.req.param("id"));
    if ("error" in found) return c.json({ error: "no such run" }, found.error);
    const prefix = `/api/runs/${c.req.param("exp")}/${c.req.param("id")}/media/`;
    let relative: string;
    try {
      relative = decodeURIComponent(c.req.path.slice(prefix.length));
    } catch {
      return c.json({ error: "malformed path" }, 400);
    }
    if (!/^[A-Za-z0-9_.-]+\/[0-9]{8}\.png$/.test(relative)) return c.json({ error: "not a media path" }, 400);
    const file = index.runFile(join(found.dir, "media"), relative);
    if (!file) return c.json({ error: "no such media" }, 404);
    return c.body(await Deno.readFile(file), 200, { "content-type": "image/png" });
  });

  // One stream for all the runs a page charts: browsers allow 6 connections per host, one per run would starve the rest.
  // `offsets` (optional, one per run, an empty one for "from now"): where in each metrics.jsonl the page's
  // series end, as /api/metrics answered them, so that no line appended in between is lost.
  app.get("/api/events", async (c) => {
    const names = runNames(c.req.query("runs"));
    const given = c.req.query("offsets")?.split(",");
    if (given && given.length !== names.length) return c.json({ error: "offsets must give one per run" }, 400);
    const runs = new Map<string, { dir: string; offset: number; status: string; problem: string }>();
    for (const [i, name] of names.entries()) {
      const found = runByName(name);
      if ("error" in found) return c.json({ error: `no such run: ${name}` }, found.error);
      let offset = 0;
      if (given?.[i]) {
        offset = Number(given[i]);
        if (!Number.isSafeInteger(offset) || offset < 0) {
          return c.json({ error: `not a byte offset: ${given[i]}` }, 400);
        }
      } else {
        try {
          // The page fetched every complete line already; what is appended from here comes through the stream.
          offset = (await index.metrics(found.dir)).offset;
        } catch {
          // unreadable now: read from the start once it can be read
        }
      }
      runs.set(name, { dir: found.dir, offset, status: "", problem: "" });
    }
    if (runs.size === 0) return c.json({ error: "runs=<experiment>/<id>,… names no run" }, 400);
    return streamSSE(c, async (stream) => {
      while (!stream.aborted) {
        for (const [name, r] of runs) {
          let rows: MetricsRow[] = [];
          try {
            ({ rows, offset: r.offset } = index.tail(r.dir, r.offset));
            r.problem = "";
          } catch (error) {
            if (metricsProblem(error) !== r.problem) {
              r.problem = metricsProblem(error);
              await stream.writeSSE({ event: "problem", data: JSON.stringify({ run: name, problem: r.problem }) });
            }
          }
          if (rows.length > 0) {
            // The offset after these rows: where a stream opened later for this run goes on from.
            const data = { run: name, rows: thinRows(rows, LIVE_POINTS_PER_METRIC), offset: r.offset };
            await stream.writeSSE({ event: "metrics", data: JSON.stringify(data) });
          }
          const now = readRun(r.dir)?.status ?? "deleted";
          if (now !== r.status) {
            r.status = now;
            await stream.writeSSE({ event: "status", data: JSON.stringify({ run: name, status: now }) });
          }
        }
        await stream.sleep(pollMs);
      }
    });
  });

  app.get("/api/runs/:exp/:id/events", async (c) => {
    const found = run(c.req.param("exp"), c.req.param("id"));
    if ("error" in found) return c.json({ error: "no such run" }, found.error);
    const dir = found.dir;
    const given = c.req.query("offset");
    let offset: number;
    if (given !== undefined) {
      offset = Number(given);
      if (given === "" || !Number.isSafeInteger(offset) || offset < 0) {
        return c.json(
          { error: `offset must be a byte offset (a whole number ≥ 0), not ${JSON.stringify(given)}` },
          400,
        );
      }
    } else {
      try {
        // The client already fetched every complete line; a line still being written comes through the stream.
        offset = (await index.metrics(dir)).offset;
      } catch (error) {
        return c.json({ error: metricsProblem(error) }, 500);
      }
    }
    return streamSSE(c, async (stream) => {
      let status = "", problem = "";
      while (!stream.aborted) {
        let rows: MetricsRow[] = [];
        try {
          ({ rows, offset } = index.tail(dir, offset));
          problem = "";
        } catch (error) {
          // Said once, and the stream kept: the file may become readable again, and the status still changes.
          if (metricsProblem(error) !== problem) {
            problem = metricsProblem(error);
            await stream.writeSSE({ event: "problem", data: JSON.stringify({ problem }) });
          }
        }
        if (rows.length > 0) {
          await stream.writeSSE({ event: "metrics", data: JSON.stringify(thinRows(rows, LIVE_POINTS_PER_METRIC)) });
        }
        const now = readRun(dir)?.status ?? "deleted";
        if (now !== status) {
          status = now;
          await stream.writeSSE({ event: "status", data: JSON.stringify({ status }) });
        }
        await stream.sleep(pollMs);
      }
    });
  });

  return app;
}

/** The run names of a comma-separated `runs` parameter, each once, in order. */
function runNames(param: string | undefined): string[] {
  return [...new Set((param ?? "").split(",").filter((name) => name))];
}

/** The `keys`, `from` and `max_points` of a metrics request, or why they are malformed. */
function metricsQuery(
  query: (name: string) => string | undefined,
): { keys: string[] | null; from: number; maxPoints: number } | { error: string } {
  const keys = query("keys")?.split(",").filter((k) => k) ?? null;
  const from = Number(query("from") ?? -Infinity);
  const maxPoints = Number(query("max_points") ?? Infinity);
  return Number.isNaN(from) || Number.isNaN(maxPoints) || maxPoints < 1
    ? { error: "from must be a step number and max_points a positive integer" }
    : { keys, from, maxPoints };
}

/**
 * Of a run's metrics, the series named by `keys` (all when null) from the
 * first step after `from`, each downsampled to about `maxPoints` points, in
 * a Map: metric names are data (`constructor` and `__proto__` included).
 */
function pickSeries(
  metrics: MetricsReader,
  keys: string[] | null,
  from: number,
  maxPoints: number,
): Map<string, Series> {
  const series = new Map<string, Series>();
  for (const key of keys ?? metrics.series.keys()) {
    const full = metrics.series.get(key);
    if (!full) continue;
    const start = full.x.findIndex((x) => x > from);
    // Downsampling copies what it keeps; only a series shorter than max_points goes out as it is held.
    const slice = start < 0
      ? { x: [], t: [], y: [] }
      : start === 0
      ? full
      : { x: full.x.slice(start), t: full.t.slice(start), y: full.y.slice(start) };
    series.set(key, downsample(slice, maxPoints));
  }
  return series;
}

/** One CSV record per RFC 4180: a field holding a comma, a quote or a line break is quoted, its quotes doubled. */
export function csvRow(fields: readonly (string | number)[]): string {
  return fields.map((field) => {
    const text = String(field);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  }).join(",");
}

/** Bundles the Preact UI with `deno bundle` and returns the script. */
export async function bundleUi(): Promise<string> {
  const entry = fileURLToPath(new URL("./ui/main.tsx", import.meta.url));
  const out = await Deno.makeTempFile({ suffix: ".js" });
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--platform=browser", "--minify", "-o", out, entry],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!result.success) throw new Error(`deno bundle failed: ${new TextDecoder().decode(result.stderr)}`);
  const script = await Deno.readTextFile(out);
  await Deno.remove(out);
  return script;
}

/**
 * The host names a dashboard bound to `bind` answers to: the bind itself
 * and loopback, and, bound to every address (0.0.0.0 or ::), the machine's
 * name and each address of its network interfaces, by which others reach it.
 */
export function servedHostNames(bind: string): string[] {
  const names = [bind, "127.0.0.1", "localhost", "[::1]"];
  if (bind === "0.0.0.0" || bind === "::" || bind === "[::]") {
    names.push(Deno.hostname());
    for (const { family, address } of Deno.networkInterfaces()) {
      // Link-local IPv6 addresses carry a zone ("%eth0") that no Host header can.
      names.push(family === "IPv6" ? `[${address.split("%")[0]}]` : address);
    }
  }
  return [...new Set(names.map((name) => name.toLowerCase()))];
}

const OPTIONS = { port: integer(8787, "port to listen on", { min: 0, max: 65535 }) };

async function main(args: string[]): Promise<void> {
  const { flags, positionals } = parseCommandLine(args);
  if (flags.has("help")) {
    console.log("usage: deno task serve [--port 8787] [--host 127.0.0.1] [--runs data/runs]");
    return;
  }
  const host = flags.get("host"), runs = flags.get("runs");
  flags.delete("host");
  flags.delete("runs");
  let port: number;
  try {
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (host === true || runs === true) throw new UsageError("--host and --runs need a value");
    if (typeof host === "string" && host.trim() === "") throw new UsageError("--host needs a host name; it is empty");
    port = resolveConfig(OPTIONS, {}, flags, ["host", "runs"]).port;
    // The dashboard only reads the run store: a folder that does not exist yet is fine, a file or "" is not.
    if (typeof runs === "string") checkRunsRoot(runs, { write: false });
  } catch (error) {
    if (error instanceof UsageError) exitWithUsageError(error.message);
    throw error;
  }
  const root = typeof runs === "string" ? runs : defaultRunsRoot();
  const hostname = typeof host === "string" ? host : "127.0.0.1";
  const app = createApp(root, {
    script: await bundleUi(),
    warm: true,
    results: fileURLToPath(new URL(`../${RESULTS_FOLDER}`, import.meta.url)),
    allowedHosts: servedHostNames(hostname),
  });
  try {
    Deno.serve({
      port,
      hostname,
      onListen: ({ hostname, port }) => {
        console.log(`latentlab dashboard on http://${hostname}:${port}/ (runs: ${root})`);
        try {
          Deno.statSync(root);
        } catch {
          console.log(`${root} does not exist yet: no runs to show until an experiment writes one (deno task demo)`);
        }
      },
    }, app.fetch);
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      exitWithUsageError(`port ${port} is in use; choose another with --port N`);
    }
    throw error;
  }
}

if (import.meta.main) await main(Deno.args);
