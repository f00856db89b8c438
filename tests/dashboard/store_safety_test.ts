/**
 * The dashboard over a damaged or hostile run store: FIFOs, links out of the
 * store, odd names, broken sweeps and large files are each a named problem
 * that holds up no other request, and no byte outside the store is served.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { createApp, csvRow, LIVE_POINTS_PER_METRIC, servedHostNames } from "../../dashboard/server.ts";
import { thinRows } from "../../dashboard/downsample.ts";
import { SWEEPS_FOLDER } from "../../lib/core/run_layout.ts";
import { eventReader, idOf, newRun } from "./fixtures.ts";

const SECRET = 987654321;

/** Runs a test over a fresh store, with a folder outside it holding a metrics file that must never be served. */
function storeTest(name: string, fn: (root: string, outside: string) => Promise<void>): void {
  Deno.test(name, async () => {
    const root = Deno.makeTempDirSync(), outside = Deno.makeTempDirSync();
    Deno.writeTextFileSync(join(outside, "metrics.jsonl"), `{"step":1,"time":0,"loss":${SECRET}}\n`);
    try {
      await fn(root, outside);
    } finally {
      Deno.removeSync(root, { recursive: true });
      Deno.removeSync(outside, { recursive: true });
    }
  });
}

/** The answer of a request, failing when it takes longer than `ms` (a request held up by a damaged run). */
async function within(ms: number, answer: Response | Promise<Response>): Promise<Response> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, fail) => timer = setTimeout(() => fail(new Error(`no answer in ${ms} ms`)), ms));
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

storeTest(
  "a FIFO or an outside link as metrics.jsonl is a named problem; the other runs serve",
  async (root, outside) => {
    const good = newRun(root), fifo = newRun(root), linked = newRun(root);
    for (const run of [good, fifo, linked]) {
      run.log(1, { loss: 0.5 });
      run.finish("completed");
    }
    Deno.removeSync(join(fifo.dir, "metrics.jsonl"));
    new Deno.Command("mkfifo", { args: [join(fifo.dir, "metrics.jsonl")] }).outputSync();
    Deno.removeSync(join(linked.dir, "metrics.jsonl"));
    Deno.symlinkSync(join(outside, "metrics.jsonl"), join(linked.dir, "metrics.jsonl"));
    const app = createApp(root, { warm: true });
    const listing = await (await within(5000, app.request("/api/runs"))).text();
    assert(!listing.includes(String(SECRET)), "no outside byte in the listing");
    const rows = JSON.parse(listing).runs as { id: string; problem?: string; metrics: Record<string, unknown> }[];
    const row = (run: typeof good) => rows.find((r) => r.id === run.info.id)!;
    assertEquals([row(good).problem, Object.keys(row(good).metrics)], [undefined, ["loss"]]);
    assert(row(fifo).problem?.includes("metrics.jsonl is a FIFO (named pipe)"), row(fifo).problem);
    assert(row(linked).problem?.includes("metrics.jsonl is a symbolic link"), row(linked).problem);
    const names = [good, fifo, linked].map((r) => encodeURIComponent(idOf(r.dir))).join(",");
    const batch = await (await within(5000, app.request(`/api/metrics?runs=${names}`))).text();
    assert(!batch.includes(String(SECRET)), "no outside byte in the charts");
    const { series, problems } = JSON.parse(batch);
    assertEquals(Object.keys(series), [idOf(good.dir)]);
    assertEquals(Object.keys(problems).sort(), [idOf(fifo.dir), idOf(linked.dir)].sort());
    for (const run of [fifo, linked]) {
      const one = await within(5000, app.request(`/api/runs/${idOf(run.dir)}/metrics`));
      assertEquals(one.status, 500);
      assert(!(await one.text()).includes(String(SECRET)));
    }
  },
);

storeTest("linked run folders, odd names and broken sweeps are listed as skipped, with why", async (root, outside) => {
  const upper = newRun(root, "Ica-Toy"), accented = newRun(root, "résumé");
  for (const run of [upper, accented]) {
    run.log(1, { loss: 0.25 });
    run.finish("completed");
  }
  // A run copied in under a name of its own, and one whose name no link can carry.
  const renamed = join(root, "Ica-Toy", "Baseline-Run");
  Deno.renameSync(upper.dir, renamed);
  const spaced = newRun(root, "toy");
  spaced.finish("completed");
  Deno.renameSync(spaced.dir, join(root, "toy", "my run"));
  const elsewhere = newRun(outside, "toy");
  elsewhere.finish("completed");
  Deno.symlinkSync(elsewhere.dir, join(root, "toy", "linked"));
  Deno.symlinkSync(join(outside, "toy"), join(root, "linked-experiment"));
  Deno.mkdirSync(join(root, SWEEPS_FOLDER, "half-planned"), { recursive: true });
  const app = createApp(root);
  const body = await (await app.request("/api/runs")).json();
  const listed = body.runs.map((r: { experiment: string; id: string }) => `${r.experiment}/${r.id}`).sort();
  assertEquals(listed, ["Ica-Toy/Baseline-Run", idOf(accented.dir)].sort());
  const why = Object.fromEntries(body.skipped.map((s: { folder: string; why: string }) => [s.folder, s.why]));
  assertEquals(Object.keys(why).sort(), ["linked-experiment", "toy/linked", "toy/my run"]);
  assert(why["toy/linked"].includes("symbolic link") && why["linked-experiment"].includes("symbolic link"));
  assert(why["toy/my run"].includes("rename it"), why["toy/my run"]);
  for (const name of ["Ica-Toy/Baseline-Run", idOf(accented.dir)]) {
    const path = name.split("/").map(encodeURIComponent).join("/");
    const metrics = await (await app.request(`/api/runs/${path}/metrics`)).json();
    assertEquals(metrics.series.loss.y, [0.25]);
  }
  const sweeps = await (await app.request("/api/sweeps")).json();
  assertEquals(sweeps.skipped, [{ folder: "half-planned", why: "no sweep.json" }]);
});

storeTest("a large metrics file is read in slices: a request for another run does not wait for it", async (root) => {
  const big = newRun(root), small = newRun(root);
  small.log(1, { loss: 1 });
  for (const run of [big, small]) run.finish("completed");
  const line = (step: number) => `{"step":${step},"time":${step},"loss":${Math.sin(step)},"acc":${step % 7}}\n`;
  const lines = Array.from({ length: 50_000 }, (_, i) => line(i + 1)).join("");
  Deno.writeTextFileSync(join(big.dir, "metrics.jsonl"), lines);
  const app = createApp(root);
  const order: string[] = [];
  const bigRead = Promise.resolve(app.request(`/api/runs/${idOf(big.dir)}/metrics?max_points=10`)).then((r) => {
    order.push("big");
    return r.json();
  });
  const smallRead = Promise.resolve(app.request(`/api/runs/${idOf(small.dir)}/metrics`)).then((r) => {
    order.push("small");
    return r.json();
  });
  const [bigBody, smallBody] = await Promise.all([bigRead, smallRead]);
  assertEquals(order, ["small", "big"]);
  assertEquals([bigBody.lines, smallBody.series.loss.y], [50_000, [1]]);
});

Deno.test("live events: a writer's burst reaches the page thinned, its extremes kept; offsets are validated", async () => {
  const root = Deno.makeTempDirSync();
  try {
    const run = newRun(root);
    run.log(0, { loss: 0 });
    const app = createApp(root, { pollMs: 20 });
    const base = `/api/runs/${idOf(run.dir)}/events`;
    for (const bad of ["abc", "-1", "1.5", ""]) {
      const res = await app.request(`${base}?offset=${bad}`);
      assertEquals(res.status, 400, `offset=${bad}`);
      assert((await res.json()).error.includes("byte offset"));
    }
    const controller = new AbortController();
    const res = await app.request(base, { signal: controller.signal });
    const stream = eventReader(res);
    await stream.readUntil('"status":"running"');
    // Appended at once, as a fast writer's lines between two polls.
    const burst = Array.from({ length: 5000 }, (_, i) => i + 1).map((step) =>
      JSON.stringify({ step, time: step, loss: step === 2345 ? 99 : Math.sin(step) }) + "\n"
    );
    Deno.writeTextFileSync(join(run.dir, "metrics.jsonl"), burst.join(""), { append: true });
    await stream.readUntil('"step":5000,');
    const rows = stream.text.split("\n").filter((l) => l.startsWith("data: [")).flatMap((l) => JSON.parse(l.slice(6)));
    assert(rows.length <= LIVE_POINTS_PER_METRIC, `${rows.length} rows sent for 5,000 lines`);
    assert(rows.some((r: { loss: number }) => r.loss === 99), "the spike is kept");
    controller.abort();
    await stream.cancel();
    run.finish("completed");
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("thinRows keeps every stretch of rising steps apart, each metric's extremes, first and last", () => {
  const rows = Array.from({ length: 1000 }, (_, i) => ({ step: i + 1, time: i, a: i === 500 ? -5 : i % 3, b: i }));
  // A resume: steps start again from 800.
  const resumed = [...rows, ...Array.from({ length: 300 }, (_, i) => ({ step: 800 + i, time: 2000 + i, a: 1, b: 7 }))];
  const thin = thinRows(resumed, 100);
  const back = thin.findIndex((r, i) => i > 0 && r.step <= thin[i - 1].step);
  assert(back > 0, "the resumed stretch follows the first");
  const [first, second] = [thin.slice(0, back), thin.slice(back)];
  assertEquals([first[0].step, first.at(-1)!.step, second[0].step, second.at(-1)!.step], [1, 1000, 800, 1099]);
  for (const metric of ["a", "b"]) {
    const kept = [first, second].map((rows) => rows.filter((r) => metric in r).length);
    assert(kept.every((n) => n <= 100), `${metric}: ${kept} points`);
  }
  assert(first.some((r) => r.a === -5), "the minimum of a is kept");
  assertEquals(thinRows(rows.slice(0, 50), 100), rows.slice(0, 50));
});

Deno.test("metric names are data: __proto__, constructor and a CSV-hostile name round-trip", async () => {
  const root = Deno.makeTempDirSync();
  try {
    const run = newRun(root);
    const hostile = 'say "hi", then\nleave';
    Deno.writeTextFileSync(
      join(run.dir, "metrics.jsonl"),
      JSON.stringify({ step: 1, time: 0, ["__proto__"]: 1, constructor: 2, [hostile]: 3 }) + "\n",
    );
    run.finish("completed");
    const app = createApp(root);
    const body = await (await app.request(`/api/runs/${idOf(run.dir)}/metrics`)).text();
    const series = JSON.parse(body).series;
    assertEquals(Object.keys(series).sort(), ["__proto__", "constructor", hostile].sort());
    assertEquals(Object.getOwnPropertyDescriptor(series, "__proto__")!.value.y, [1]);
    const [listed] = (await (await app.request("/api/runs")).json()).runs;
    assertEquals(Object.keys(listed.metrics).sort(), ["__proto__", "constructor", hostile].sort());
    const csv = await (await app.request(`/api/runs/${idOf(run.dir)}/metrics?format=csv`)).text();
    assert(csv.includes('\r\n"say ""hi"", then\nleave",1,0,3\r\n'), JSON.stringify(csv));
    assertEquals(csvRow(["plain", 1.5, 'a"b']), 'plain,1.5,"a""b"');
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("bound to every address, the dashboard answers to the machine's name and addresses", () => {
  const names = servedHostNames("0.0.0.0");
  assert(names.includes(Deno.hostname().toLowerCase()), names.join(" "));
  for (const { family, address } of Deno.networkInterfaces()) {
    if (family === "IPv4") assert(names.includes(address), address);
  }
  assertEquals(servedHostNames("127.0.0.1"), ["127.0.0.1", "localhost", "[::1]"]);
});
