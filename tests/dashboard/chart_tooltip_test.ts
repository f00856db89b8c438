import { assertEquals } from "../assert.ts";
import { formatDuration, tooltipLine } from "../../dashboard/ui/chart_tooltip.ts";

Deno.test("formatDuration: 3 significant digits under a minute, then minutes and seconds, then hours", () => {
  assertEquals(formatDuration(0.563), "0.563 s");
  assertEquals(formatDuration(12.34), "12.3 s");
  assertEquals(formatDuration(5), "5 s");
  assertEquals(formatDuration(59.96), "60 s");
  assertEquals(formatDuration(60), "1 min 0 s");
  assertEquals(formatDuration(245.4), "4 min 5 s");
  assertEquals(formatDuration(3599.4), "59 min 59 s");
  assertEquals(formatDuration(7260), "2 h 1 min");
  assertEquals(formatDuration(Number.NaN), "");
});

Deno.test("tooltipLine: the line, its value to 4 significant digits, the raw value when it differs, step and time", () => {
  assertEquals(
    tooltipLine({ label: "vae/1", value: 0.123456, step: 120, seconds: 12.34 }),
    "vae/1: 0.1235 · step 120 · 12.3 s",
  );
  assertEquals(
    tooltipLine({ label: "g (2 seeds)", value: 1.5, raw: 1.23456, step: 7, seconds: 245 }),
    "g (2 seeds): 1.5 (raw 1.235) · step 7 · 4 min 5 s",
  );
  assertEquals(tooltipLine({ label: "r", value: 2, raw: 2, step: 1, seconds: 1 }), "r: 2 · step 1 · 1 s");
});
