/**
 * The bench writers rewrite sections of the docs pages in place: each page holds the markers of every section
 * it was written with, so that `deno task bench-readme`, `deno task bench --write-docs` and
 * `deno task sweep-bench --write-docs` find them.
 */
import { fileURLToPath } from "node:url";
import { assert, assertEquals } from "../assert.ts";
import { readSection } from "../../lib/core/readme.ts";
import { PERFORMANCE_PAGE, SPEED_SECTIONS } from "../../bench/readme_table.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The speed sections docs/performance.md holds: all but the WebGPU fiRevNet one, which no report has filled yet. */
const PAGE_SECTIONS = SPEED_SECTIONS.filter((name) => name !== "bench-webgpu-firevnet");

Deno.test("the speed tables are written into docs/performance.md, which holds each speed section", () => {
  assertEquals(PERFORMANCE_PAGE, `${ROOT}docs/performance.md`);
  const page = Deno.readTextFileSync(PERFORMANCE_PAGE);
  for (const name of PAGE_SECTIONS) {
    assert(readSection(page, name).includes("Written by `deno task bench-readme`"), `${name} section missing or empty`);
  }
});

Deno.test("docs/sweeps.md holds the sweep-bench section that sweep-bench --write-docs rewrites", () => {
  const page = Deno.readTextFileSync(`${ROOT}docs/sweeps.md`);
  assert(readSection(page, "sweep-bench").includes("`deno task sweep-bench --write"), "sweep-bench section missing");
});
