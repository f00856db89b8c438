import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { createApp } from "../../dashboard/server.ts";
import { eventReader, idOf, newRun } from "./fixtures.ts";
import { EXPERIMENTS } from "../../experiments/mod.ts";
import { METRICS } from "../../lib/metrics/registry.ts";
import { downsample } from "../../dashboard/downsample.ts";
import { MetricsReader, parseMetrics } from "../../lib/core/run_metrics.ts";
import { sparkline, summaryCurvesSvg, targetCurve } from "../../lib/core/curves.ts";
import { POINTS_KEPT_PER_METRIC } from "../../dashboard/run_index.ts";
import { RESUMED_LOSS, RESUMED_METRICS } from "../core/run_store_fixtures.ts";

Deno.test("GET /api/runs lists runs with status, config and metric reducers", async () => {
  const root = Deno.makeTempDirSync();
  const a = newRun(root);
  for (let s = 1; s <= 5; s++) a.log(s, { loss: 10 - s, acc: s / 10 });
  a.finish("completed");
  const b = newRun(root, "other", { lr: 0.2 });
  b.log(1, { loss: 3 });
  const app = createApp(root);
  const res = await app.request("/api/runs");
  assertEquals(res.status, 200);
  const { runs } = await res.json();
  assertEquals(runs.length, 2);
  const first = runs.find((r: { experiment: string }) => r.experiment === "toy");
  assertEquals(first.status, "completed");
  assertEquals(first.config, { lr: 0.1 });
  assertEquals(first.metrics.loss, { last: 5, min: 5, max: 9 });
  assertEquals(first.backend, "wasm");
  assertEquals(runs.find((r: { experiment: string }) => r.experiment === "other").status, "running");
  b.finish("completed");
});

Deno.test("metrics paging returns points after a step and downsampling keeps the extremes", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  for (let s = 1; s <= 1000; s++) run.log(s, { loss: s === 500 ? 1e6 : s === 700 ? -1e6 : Math.sin(s) });
  run.finish("completed");
  const app = createApp(root);
  const page = await (await app.request(`/api/runs/${idOf(run.dir)}/metrics?keys=loss&from=990`)).json();
  assertEquals(page.series.loss.x, [991, 992, 993, 994, 995, 996, 997, 998, 999, 1000]);
  assertEquals(page.lines, 1000);
  const small = await (await app.request(`/api/runs/${idOf(run.dir)}/metrics?keys=loss&max_points=50`)).json();
  const { x, y } = small.series.loss;
  assert(x.length <= 50, `${x.length} points`);
  assertEquals([x[0], x.at(-1)], [1, 1000]);
  assert(y.includes(1e6) && y.includes(-1e6), "spikes survive downsampling");
  const csv = await (await app.request(`/api/runs/${idOf(run.dir)}/metrics?keys=loss&from=998&format=csv`)).text();
  assertEquals(csv.split("\r\n")[0], "key,step,time,value");
  assertEquals(csv.trim().split("\r\n").length, 3);
});

Deno.test("downsample keeps first, last, minima and maxima of every bucket", () => {
  const n = 10_000;
  const series = {
    x: [...Array(n).keys()],
    t: [...Array(n).keys()],
    y: Array.from({ length: n }, (_, i) => (i * 7919) % 101),
  };
  series.y[4321] = 500;
  const out = downsample(series, 100);
  assert(out.x.length <= 100);
  assertEquals([out.x[0], out.x.at(-1)], [0, n - 1]);
  assert(out.y.includes(500));
  assertEquals(out.x, [...out.x].sort((a, b) => a - b));
});

Deno.test("malformed and torn metrics lines are skipped and counted, never a 500", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.log(1, { loss: 1 });
  Deno.writeTextFileSync(join(run.dir, "metrics.jsonl"), 'garbage\n{"step":2,"time":1,"loss":0.5}\n{"step":3,"ti', {
    append: true,
  });
  run.finish("failed");
  const app = createApp(root);
  const res = await app.request(`/api/runs/${idOf(run.dir)}/metrics`);
  assertEquals(res.status, 200);
  const body = await res.json();
  assertEquals(body.series.loss.x, [1, 2]);
  assertEquals(body.skipped, 1);
  const listed = (await (await app.request("/api/runs")).json()).runs[0];
  assertEquals(listed.skipped, 2); // the malformed line and the torn last line of a finished run
});

Deno.test("traversal attempts are refused", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.image("grid", 1, { width: 1, height: 1, channels: 1, data: Uint8Array.of(7) });
  run.finish("completed");
  const secret = Deno.makeTempDirSync();
  Deno.writeTextFileSync(join(secret, "run.json"), "{}");
  Deno.mkdirSync(join(root, "evil"));
  Deno.symlinkSync(secret, join(root, "evil", "20990101-000000-abcdef"));
  const app = createApp(root);
  const id = idOf(run.dir);
  assertEquals((await app.request(`/api/runs/${id}/media/grid/00000001.png`)).status, 200);
  for (
    const path of [
      "/api/runs/../secret",
      "/api/runs/toy/..%2F..%2Fetc",
      "/api/runs/%2e%2e/20990101-000000-abcdef",
      "/api/runs/toy/not-a-run-id",
      `/api/runs/${id}/media/..%2F..%2Frun.json`,
      `/api/runs/${id}/media/grid/..%2F..%2F..%2Frun.json`,
      `/api/runs/${id}/media/%2e%2e/%2e%2e/config.json`,
    ]
  ) {
    const res = await app.request(path);
    assert([400, 404].includes(res.status), `${path}: ${res.status}`);
  }
  assertEquals((await app.request("/api/runs/evil/20990101-000000-abcdef")).status, 404, "symlink out of the root");
});

Deno.test("the server keeps working when a run is half-written or deleted", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.log(1, { loss: 1 });
  run.finish("completed");
  Deno.mkdirSync(join(root, "toy", "20990101-000000-aaaaaa")); // no run.json yet
  Deno.mkdirSync(join(root, "toy", "20990101-000000-aaaaab"));
  Deno.writeTextFileSync(join(root, "toy", "20990101-000000-aaaaab", "run.json"), '{"id": "2099'); // half-written
  const app = createApp(root);
  assertEquals((await (await app.request("/api/runs")).json()).runs.length, 1);
  assertEquals((await app.request("/api/runs/toy/20990101-000000-aaaaaa")).status, 404);
  Deno.removeSync(run.dir, { recursive: true });
  assertEquals((await (await app.request("/api/runs")).json()).runs.length, 0);
  assertEquals((await app.request(`/api/runs/${idOf(run.dir)}/metrics`)).status, 404);
});

Deno.test("SSE delivers lines appended after connecting", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.log(1, { loss: 1 });
  const app = createApp(root, { pollMs: 20 });
  const controller = new AbortController();
  const res = await app.request(`/api/runs/${idOf(run.dir)}/events`, { signal: controller.signal });
  assertEquals(res.headers.get("content-type"), "text/event-stream");
  const stream = eventReader(res);
  const readUntil = (needle: string) => stream.readUntil(needle);
  await readUntil('"status":"running"');
  run.log(2, { loss: 0.5 });
  run.log(3, { loss: 0.25 });
  await readUntil('"step":3');
  assert(stream.text.includes('"step":2') && !stream.text.includes('"step":1,'), stream.text);
  run.finish("completed");
  await readUntil('"status":"completed"');
  controller.abort();
  await stream.cancel();
});

Deno.test("the dashboard reads a resumed run's re-logged step as the CLI does: the last write wins", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.finish("completed");
  Deno.writeTextFileSync(join(run.dir, "metrics.jsonl"), RESUMED_METRICS);
  const app = createApp(root);
  const body = await (await app.request(`/api/runs/${idOf(run.dir)}/metrics`)).json();
  assertEquals(body.series.loss, RESUMED_LOSS);
  assertEquals([body.lines, body.skipped], [4, 1]);
  const cli = parseMetrics(RESUMED_METRICS).rows;
  assertEquals(
    body.series.loss.x.map((x: number, i: number) => [x, body.series.loss.y[i]]),
    cli.map((r) => [r.step, r.loss]),
  );
  const [listed] = (await (await app.request("/api/runs")).json()).runs;
  assertEquals(listed.metrics.loss, { last: 2, min: 2, max: 5 });
  assertEquals(listed.skipped, 1);
});

Deno.test("GET /api/scorecard judges a store's runs and the kept results, and answers 200 when a run.json lacks created", async () => {
  const root = Deno.makeTempDirSync();
  newRun(root, "other").finish("completed"); // a second run, so that listing sorts
  const run = newRun(root);
  run.writeSummary({ experiment: "toy", run_id: run.info.id, preset: "smoke", seed: 1, targets: [], claims: [] });
  run.finish("completed");
  const info = JSON.parse(Deno.readTextFileSync(join(run.dir, "run.json")));
  delete info.created;
  Deno.writeTextFileSync(join(run.dir, "run.json"), JSON.stringify(info));
  const res = await createApp(root).request("/api/scorecard");
  assertEquals(res.status, 200);
  const card = await res.json();
  // "toy" is no registered experiment: its group says so rather than vanishing.
  assertEquals(
    card.groups.map((
      g: { experiment: string; seeds: number[]; problem: string },
    ) => [g.experiment, g.seeds, g.problem]),
    [
      ["toy", [1], "no experiment toy today"],
    ],
  );
  assertEquals(card.headline.startsWith("Like-for-like targets: "), true);
  // Kept results beside the store: a file that does not parse is named, not dropped.
  const kept = Deno.makeTempDirSync();
  Deno.mkdirSync(join(kept, "toy", "quick"), { recursive: true });
  Deno.writeTextFileSync(join(kept, "toy", "quick", "seed-0.json"), "{}");
  const withKept = await (await createApp(root, { results: kept }).request("/api/scorecard")).json();
  assertEquals(withKept.skipped, [`${join(kept, "toy", "quick", "seed-0.json")}: no experiment`]);
});

Deno.test("runs with a run.json or summary.json that lacks fields are shown with their problem", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.log(1, { loss: 1 });
  run.writeSummary({});
  run.finish("completed");
  Deno.writeTextFileSync(join(run.dir, "run.json"), "{}");
  const app = createApp(root);
  const res = await app.request("/api/runs");
  assertEquals(res.status, 200);
  const [listed] = (await res.json()).runs;
  assertEquals(
    [listed.experiment, listed.id, listed.status, listed.created, listed.duration_s, listed.metrics.loss.last],
    ["toy", run.info.id, "crashed", `${run.info.created.slice(0, 19)}.000Z`, 0, 1],
  );
  assertEquals(
    listed.problem,
    "run.json: missing or invalid id, experiment, status, created, ended, heartbeat, seed, preset",
  );
  const detail = await app.request(`/api/runs/${idOf(run.dir)}`);
  assertEquals(detail.status, 200);
  const { run: info, summary } = await detail.json();
  assertEquals([info.status, info.problem], ["crashed", listed.problem]);
  assertEquals([summary.targets, summary.claims, summary.experiment], [[], [], "toy"]);
  assertEquals(summary.problem, "summary.json: missing or invalid experiment, run_id, preset, seed, targets, claims");
  assertEquals((await app.request("/api/scorecard")).status, 200);
});

Deno.test("SSE delivers a line that was half-written when the client connected", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.log(1, { loss: 1 });
  const path = join(run.dir, "metrics.jsonl");
  Deno.writeTextFileSync(path, '{"step":2,"time":1,', { append: true });
  const app = createApp(root, { pollMs: 20 });
  const controller = new AbortController();
  const res = await app.request(`/api/runs/${idOf(run.dir)}/events`, { signal: controller.signal });
  const stream = eventReader(res);
  const readUntil = (needle: string) => stream.readUntil(needle);
  await readUntil('"status":"running"');
  Deno.writeTextFileSync(path, '"loss":0.5}\n', { append: true });
  await readUntil('"step":2');
  assert(stream.text.includes('[{"step":2,"time":1,"loss":0.5}]'), stream.text);
  run.finish("completed");
  await readUntil('"status":"completed"');
  controller.abort();
  await stream.cancel();
});

Deno.test("/api/registry serves every experiment, objective and metric the CLI knows", async () => {
  const body = await (await createApp(Deno.makeTempDirSync()).request("/api/registry")).json();
  assertEquals(body.experiments.map((e: { name: string }) => e.name), EXPERIMENTS.map((e) => e.name));
  assertEquals(body.metrics.map((m: { name: string }) => m.name), [...METRICS.names]);
  const vae = body.experiments.find((e: { name: string }) => e.name === "vae-dsprites");
  assertEquals(vae.config.resolution, {
    doc: "image side; 32 drops one stride-2 stage",
    default: 64,
    allowed: "one of 64, 32",
  });
  assertEquals(body.objectives.filter((o: { registry: string }) => o.registry === "VAE objective").length, 6);
});

Deno.test("a run whose metrics.jsonl is 600 MB, most of it NUL bytes a crash left, is listed with its metrics", async () => {
  const root = Deno.makeTempDirSync();
  try {
    const run = newRun(root);
    run.log(1, { loss: 1 });
    run.finish("interrupted");
    const path = join(run.dir, "metrics.jsonl");
    // Extending a file leaves a hole that reads as NUL bytes and takes no disk space.
    Deno.truncateSync(path, 600 * 1024 * 1024);
    Deno.writeTextFileSync(path, '\n{"step":2,"time":1,"loss":0.5}\n', { append: true });
    const app = createApp(root);
    const res = await app.request("/api/runs");
    assertEquals(res.status, 200);
    const [listed] = (await res.json()).runs;
    assertEquals([listed.metrics.loss, listed.skipped, listed.problem], [
      { last: 0.5, min: 0.5, max: 1 },
      1,
      undefined,
    ]);
    const body = await (await app.request(`/api/runs/${idOf(run.dir)}/metrics`)).json();
    assertEquals([body.series.loss.x, body.lines, body.skipped], [[1, 2], 3, 1]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("a run of 200,000 points of one key: exact reducers, a bounded series, and its curves drawn", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.finish("completed");
  const n = 200_000, spike = 123_457;
  const loss = (step: number) => step === spike ? 1e9 : Math.sin(step) / step;
  const lines: string[] = [];
  for (let step = 1; step <= n; step++) lines.push(JSON.stringify({ step, time: step / 100, loss: loss(step) }));
  Deno.writeTextFileSync(join(run.dir, "metrics.jsonl"), lines.join("\n") + "\n");
  let min = Infinity;
  for (let step = 1; step <= n; step++) min = Math.min(min, loss(step));
  const app = createApp(root);
  const id = idOf(run.dir);
  // Read whole first: a listing waits only so long for a large file, listing it meanwhile with its progress.
  await (await app.request(`/api/runs/${id}/metrics?keys=loss&max_points=10`)).body?.cancel();
  const [listed] = (await (await app.request("/api/runs")).json()).runs;
  assertEquals(listed.metrics.loss, { last: loss(n), min, max: 1e9 });
  const chart = (await (await app.request(`/api/runs/${id}/metrics?keys=loss&max_points=2000`)).json()).series.loss;
  assert(chart.x.length <= 2000 && chart.y.includes(1e9), `${chart.x.length} points, the spike among them`);
  assertEquals([chart.x[0], chart.x.at(-1)], [1, n]);
  const all = await (await app.request(`/api/runs/${id}/metrics?keys=loss`)).json();
  assertEquals(all.lines, n);
  assert(all.series.loss.x.length <= POINTS_KEPT_PER_METRIC, `${all.series.loss.x.length} points kept`);
  assert(all.series.loss.y.includes(1e9), "thinning keeps the spike");
  assertEquals(all.series.loss.x.slice(-3), [n - 2, n - 1, n], "the newest points stay whole");
  const csv = await (await app.request(`/api/runs/${id}/metrics?keys=loss&format=csv`)).text();
  assertEquals(csv.trim().split("\r\n").length, all.series.loss.x.length + 1);

  const unthinned = new MetricsReader();
  unthinned.catchUp(join(run.dir, "metrics.jsonl"));
  const curve = targetCurve(unthinned.series, "loss")!;
  assertEquals(curve.points.length, n);
  assertEquals(sparkline(curve.points, n).length, n);
  const target = { metric: "loss", paper: 0, source: "", tolerance: 0, direction: "match" as const, ours: 0 };
  const svg = summaryCurvesSvg({ targets: [{ ...target, verdict: "reproduced", curve }] })!;
  assert(svg.startsWith("<svg") && svg.includes("<path"), "the SVG is drawn");
});

Deno.test("a run whose metrics cannot be read is listed with the reason while the others serve", async () => {
  const root = Deno.makeTempDirSync();
  const good = newRun(root);
  good.log(1, { loss: 1 });
  good.finish("completed");
  const bad = newRun(root, "other");
  bad.log(1, { loss: 1 });
  bad.finish("completed");
  // A directory in the file's place: opening it succeeds, reading it fails, as root too (unlike chmod 000).
  Deno.removeSync(join(bad.dir, "metrics.jsonl"));
  Deno.mkdirSync(join(bad.dir, "metrics.jsonl"));
  const app = createApp(root, { warm: true });
  await new Promise((resolve) => setTimeout(resolve, 10)); // warming runs on a timer; it must not throw
  const res = await app.request("/api/runs");
  assertEquals(res.status, 200);
  const runs = (await res.json()).runs;
  const listedGood = runs.find((r: { id: string }) => r.id === good.info.id);
  const listedBad = runs.find((r: { id: string }) => r.id === bad.info.id);
  assertEquals([listedGood.metrics.loss.last, listedGood.problem], [1, undefined]);
  assertEquals(listedBad.metrics, {});
  assert(listedBad.problem.startsWith("metrics.jsonl cannot be read: "), listedBad.problem);
  const metrics = await app.request(`/api/runs/${idOf(bad.dir)}/metrics`);
  assertEquals([metrics.status, (await metrics.json()).error], [500, listedBad.problem]);
  const events = await app.request(`/api/runs/${idOf(bad.dir)}/events`);
  assertEquals([events.status, (await events.json()).error], [500, listedBad.problem]);
  assertEquals((await app.request(`/api/runs/${idOf(bad.dir)}`)).status, 200, "its page still opens");
  assertEquals((await app.request(`/api/runs/${idOf(good.dir)}/metrics`)).status, 200);
});

Deno.test("with allowed hosts, a request naming another host (DNS rebinding) gets 403", async () => {
  const app = createApp(Deno.makeTempDirSync(), { allowedHosts: ["127.0.0.1", "localhost", "[::1]"] });
  const ask = (host: string) => app.request("/api/runs", { headers: { host } });
  for (const host of ["127.0.0.1:8787", "localhost:1", "[::1]:8787", "LOCALHOST"]) {
    assertEquals((await ask(host)).status, 200, host);
  }
  for (const host of ["evil.example:8787", "127.0.0.1.evil.example", ""]) {
    assertEquals((await ask(host)).status, 403, host);
  }
});

Deno.test("serve on a busy port says so and exits 2", async () => {
  const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = busy.addr as Deno.NetAddr;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../../dashboard/server.ts", import.meta.url).pathname, "--port", String(port)],
    env: { LATENTLAB_RUNS: Deno.makeTempDirSync(), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  busy.close();
  assertEquals(out.code, 2);
  const stderr = new TextDecoder().decode(out.stderr);
  assert(stderr.includes(`port ${port} is in use`), stderr);
});

Deno.test("a run killed without ending lasts until its writer's last sign of life, not its first heartbeat", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  const created = Date.now() - 300_000;
  const info = JSON.parse(Deno.readTextFileSync(join(run.dir, "run.json")));
  const at = new Date(created).toISOString();
  Deno.writeTextFileSync(join(run.dir, "run.json"), JSON.stringify({ ...info, created: at, heartbeat: at }));
  // The guard thread touched the lock 11 s into the run, then the process was killed.
  const touched = new Date(created + 11_000);
  Deno.utimeSync(join(run.dir, "lock"), touched, touched);
  const [row] = (await (await createApp(root).request("/api/runs")).json()).runs;
  assertEquals(row.status, "crashed");
  assert(Math.abs(row.duration_s - 11) < 1, String(row.duration_s));
});

Deno.test("one stream carries the lines and statuses of 8 running runs, each tagged with its run", async () => {
  const root = Deno.makeTempDirSync();
  const runs = Array.from({ length: 8 }, () => newRun(root));
  runs.forEach((r) => r.log(1, { loss: 1 }));
  const app = createApp(root, { pollMs: 20 });
  const controller = new AbortController();
  const names = runs.map((r) => idOf(r.dir));
  const res = await app.request(`/api/events?runs=${names.map(encodeURIComponent).join(",")}`, {
    signal: controller.signal,
  });
  assertEquals(res.headers.get("content-type"), "text/event-stream");
  const stream = eventReader(res);
  for (const name of names) await stream.readUntil(`{"run":"${name}","status":"running"}`);
  runs.forEach((r, i) => r.log(2, { loss: i }));
  for (const [i, name] of names.entries()) {
    await stream.readUntil(`{"run":"${name}","rows":[{"step":2,`);
    assert(stream.text.includes(`"loss":${i}}],`), stream.text.slice(-400));
  }
  // Lines before connecting were fetched with the series: not sent again.
  assert(!stream.text.includes('"step":1,'), stream.text.slice(0, 400));
  runs[3].finish("completed");
  await stream.readUntil(`{"run":"${names[3]}","status":"completed"}`);
  controller.abort();
  await stream.cancel();
  runs.forEach((r, i) => i !== 3 && r.finish("completed"));
  assertEquals((await app.request("/api/events?runs=nope/a%20b")).status, 400);
  assertEquals((await app.request("/api/events?runs=nope/x")).status, 404);
  assertEquals((await app.request(`/api/events?runs=${names[0]}/extra`)).status, 400);
  assertEquals((await app.request("/api/events")).status, 400);
});

Deno.test("/api/runs names the folders it passes over, with why", async () => {
  const root = Deno.makeTempDirSync();
  newRun(root).finish("completed");
  for (const [name, content] of [["20240101-000000-aaaaaa", null], ["20240101-000000-bbbbbb", "{"]] as const) {
    Deno.mkdirSync(join(root, "toy", name));
    if (content !== null) Deno.writeTextFileSync(join(root, "toy", name, "run.json"), content);
  }
  const body = await (await createApp(root).request("/api/runs")).json();
  assertEquals(body.runs.length, 1);
  assertEquals(body.skipped, [
    { folder: "toy/20240101-000000-aaaaaa", why: "no run.json" },
    { folder: "toy/20240101-000000-bbbbbb", why: "run.json does not parse" },
  ]);
});

Deno.test("notes: PUT writes notes.json (never run.json), tags join the run's row, bad notes are refused", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.finish("completed");
  const app = createApp(root);
  const url = `/api/runs/${idOf(run.dir)}/notes`;
  const put = (body: unknown, type = "application/json") =>
    app.request(url, { method: "PUT", headers: { "content-type": type }, body: JSON.stringify(body) });
  const runJson = Deno.readTextFileSync(join(run.dir, "run.json"));
  const saved = await put({ note: "lr too high", tags: ["baseline", "v2"], archived: true });
  assertEquals(saved.status, 200);
  assertEquals(JSON.parse(Deno.readTextFileSync(join(run.dir, "notes.json"))), {
    note: "lr too high",
    tags: ["baseline", "v2"],
    archived: true,
  });
  assertEquals(Deno.readTextFileSync(join(run.dir, "run.json")), runJson);
  const [row] = (await (await app.request("/api/runs")).json()).runs;
  assertEquals([row.note, row.archived, row.tags.slice(-2)], ["lr too high", true, ["baseline", "v2"]]);
  assertEquals((await (await app.request(`/api/runs/${idOf(run.dir)}`)).json()).notes.tags, ["baseline", "v2"]);
  for (
    const bad of [
      { note: 1, tags: [], archived: false },
      { note: "", tags: ["a", "a"], archived: false },
      {
        note: "",
        tags: [""],
        archived: false,
      },
      { note: "", tags: [], archived: "yes" },
      [],
    ]
  ) {
    assertEquals((await put(bad)).status, 400, JSON.stringify(bad));
  }
  assertEquals((await put({ note: "", tags: [], archived: false }, "text/plain")).status, 415);
  assertEquals((await put({ note: "x".repeat(200_000), tags: [], archived: false })).status, 413);
  assertEquals(JSON.parse(Deno.readTextFileSync(join(run.dir, "notes.json"))).note, "lr too high");
});

Deno.test("/api/runs carries an ETag: an unchanged listing answers 304 without a body, a changed one 200", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.finish("completed");
  const app = createApp(root);
  const first = await app.request("/api/runs");
  const tag = first.headers.get("etag");
  assert(tag, "no ETag");
  await first.body?.cancel();
  const again = await app.request("/api/runs", { headers: { "if-none-match": tag } });
  assertEquals(again.status, 304);
  newRun(root).finish("completed");
  const changed = await app.request("/api/runs", { headers: { "if-none-match": tag } });
  assertEquals(changed.status, 200);
  assertEquals((await changed.json()).runs.length, 2);
});

Deno.test("a resumed run's duration leaves out the idle gap between its attempts", async () => {
  const root = Deno.makeTempDirSync();
  const run = newRun(root);
  run.finish("interrupted");
  const info = JSON.parse(Deno.readTextFileSync(join(run.dir, "run.json")));
  const t0 = Date.now() - 3_600_000;
  const iso = (ms: number) => new Date(t0 + ms).toISOString();
  // 100 s of work, an hour idle, 50 s more.
  Deno.writeTextFileSync(
    join(run.dir, "run.json"),
    JSON.stringify({
      ...info,
      status: "completed",
      created: iso(0),
      ended: iso(100_000 + 3_000_000 + 50_000),
      resumes: [{ step: 10, at: iso(100_000 + 3_000_000), stopped: iso(100_000) }],
    }),
  );
  const [row] = (await (await createApp(root).request("/api/runs")).json()).runs;
  assertEquals(row.duration_s, 150);
});
