/**
 * GET /api/metrics (the series of many runs in one request) and the
 * offsets by which GET /api/events goes on from where that answer ended.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { createApp } from "../../dashboard/server.ts";
import { RunWriter } from "../../lib/core/run_writer.ts";
import { eventReader } from "./fixtures.ts";

function newRun(root: string, seed: number): RunWriter {
  return RunWriter.create({
    root,
    experiment: "toy",
    argv: [],
    seed,
    preset: "smoke",
    backend: { name: "wasm" },
    config: { lr: 0.1 },
    versions: {},
    gitCommit: null,
  });
}

const idOf = (dir: string) => dir.split("/").slice(-2).join("/");
const loss = (run: number, step: number) => Math.cos(step * (run + 1)) + run;

Deno.test("GET /api/metrics answers the series of every run named, the missing ones named apart", async () => {
  const root = Deno.makeTempDirSync();
  const runs = [0, 1, 2].map((seed) => newRun(root, seed));
  runs.forEach((run, r) => {
    for (let s = 1; s <= 30; s++) run.log(s, { loss: loss(r, s), acc: s / 30 });
    run.finish("completed");
  });
  const names = runs.map((r) => idOf(r.dir));
  const absent = "toy/20990101-000000-abcdef";
  const app = createApp(root);
  const res = await app.request(`/api/metrics?runs=${[names[2], absent, names[0]].map(encodeURIComponent).join(",")}`);
  assertEquals(res.status, 200);
  const body = await res.json();
  assertEquals(Object.keys(body.series).sort(), [names[0], names[2]].sort());
  assertEquals(body.missing, [absent]);
  assertEquals(body.problems, {});
  const steps = Array.from({ length: 30 }, (_, i) => i + 1);
  for (const r of [0, 2]) {
    assertEquals(body.series[names[r]].loss.x, steps);
    assertEquals(body.series[names[r]].loss.y, steps.map((s) => loss(r, s)));
    assertEquals(body.series[names[r]].acc.y, steps.map((s) => s / 30));
    // The byte after the last complete line: where a stream for the run goes on from.
    assertEquals(body.offsets[names[r]], Deno.statSync(join(runs[r].dir, "metrics.jsonl")).size);
  }

  // keys, from and max_points as the per-run endpoint reads them, with the same answer.
  const query = "keys=loss&from=10&max_points=8";
  const batch = await (await app.request(`/api/metrics?runs=${names.join(",")}&${query}`)).json();
  for (const name of names) {
    const single = await (await app.request(`/api/runs/${name}/metrics?${query}`)).json();
    assertEquals(batch.series[name], single.series);
    assertEquals(Object.keys(batch.series[name]), ["loss"]);
    const { x } = batch.series[name].loss;
    assert(x.length <= 8 && x[0] === 11 && x.at(-1) === 30, JSON.stringify(x));
  }
});

Deno.test("GET /api/metrics refuses malformed names and parameters, and names a run it cannot read", async () => {
  const root = Deno.makeTempDirSync();
  const good = newRun(root, 0), bad = newRun(root, 1);
  good.log(1, { loss: 1 });
  good.finish("completed");
  bad.finish("completed");
  Deno.removeSync(join(bad.dir, "metrics.jsonl"));
  Deno.mkdirSync(join(bad.dir, "metrics.jsonl"));
  const app = createApp(root);
  const [g, b] = [idOf(good.dir), idOf(bad.dir)];
  for (
    const query of [
      "",
      "runs=",
      `runs=${g},..%2F..%2Fetc`,
      `runs=${g}/extra`,
      "runs=toy",
      `runs=${g}&max_points=0`,
      `runs=${g}&from=x`,
    ]
  ) {
    assertEquals((await app.request(`/api/metrics?${query}`)).status, 400, query);
  }
  const body = await (await app.request(`/api/metrics?runs=${g},${b}`)).json();
  assertEquals(body.series[g].loss.y, [1]);
  assert(body.problems[b].startsWith("metrics.jsonl cannot be read: "), body.problems[b]);
  assertEquals([b in body.series, body.missing], [false, []]);
});

Deno.test("a stream opened at the offsets /api/metrics gave delivers the lines appended in between", async () => {
  const root = Deno.makeTempDirSync();
  const runs = [0, 1].map((seed) => newRun(root, seed));
  runs.forEach((run) => run.log(1, { loss: 1 }));
  const names = runs.map((r) => idOf(r.dir));
  const app = createApp(root, { pollMs: 20 });
  const { offsets } = await (await app.request(`/api/metrics?runs=${names.join(",")}`)).json();
  // Written after the page's fetch and before its stream connects: a stream from "now" would never send it.
  runs[0].log(2, { loss: 0.5 });
  const controller = new AbortController();
  const res = await app.request(
    `/api/events?runs=${names.join(",")}&offsets=${names.map((n) => offsets[n]).join(",")}`,
    { signal: controller.signal },
  );
  const stream = eventReader(res);
  const size = (r: number) => Deno.statSync(join(runs[r].dir, "metrics.jsonl")).size;
  await stream.readUntil(`{"run":"${names[0]}","rows":[{"step":2,`);
  assert(stream.text.includes(`"loss":0.5}],"offset":${size(0)}}`), stream.text);
  runs[1].log(2, { loss: 0.25 });
  await stream.readUntil(`{"run":"${names[1]}","rows":[{"step":2,`);
  assert(stream.text.includes(`"loss":0.25}],"offset":${size(1)}}`), stream.text);
  assert(!stream.text.includes('"step":1,'), "lines the fetch answered are not sent again");
  controller.abort();
  await stream.cancel();

  // An empty offset is "from now"; a count that does not match the runs, or a bad number, is refused.
  const fromNow = new AbortController();
  const partial = eventReader(
    await app.request(`/api/events?runs=${names.join(",")}&offsets=,${offsets[names[1]]}`, { signal: fromNow.signal }),
  );
  await partial.readUntil(`{"run":"${names[1]}","rows":[{"step":2,`);
  runs[0].log(3, { loss: 0.125 });
  await partial.readUntil(`{"run":"${names[0]}","rows":[{"step":3,`);
  assert(!partial.text.includes(`{"run":"${names[0]}","rows":[{"step":2,`), partial.text);
  fromNow.abort();
  await partial.cancel();
  runs.forEach((run) => run.finish("completed"));
  for (const offsets of ["0", "0,-1", "0,x", "0,1.5"]) {
    assertEquals((await app.request(`/api/events?runs=${names.join(",")}&offsets=${offsets}`)).status, 400, offsets);
  }
});
