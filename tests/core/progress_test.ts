import { assertEquals } from "../assert.ts";
import { formatDuration, Progress } from "../../lib/core/progress.ts";

Deno.test("Progress prints one plain line per interval when not on a terminal", () => {
  const lines: string[] = [];
  const progress = new Progress("train", 100, { tty: false, every: 25, write: (t) => lines.push(t) });
  for (let step = 5; step <= 100; step += 5) progress.update(step, 1 / step);
  assertEquals(lines.length, 4);
  assertEquals(lines.map((l) => l.split(" ")[1]), ["25/100", "50/100", "75/100", "100/100"]);
  assertEquals(lines.every((l) => l.endsWith("\n") && l.includes("steps/s") && l.includes("ETA")), true);
  assertEquals(lines[3].includes("loss 0.01000"), true);
});

Deno.test("Progress redraws a bar in place on a terminal", () => {
  const out: string[] = [];
  const progress = new Progress("train", 2, { tty: true, write: (t) => out.push(t) });
  progress.update(2, 0.5);
  assertEquals(out[0].startsWith("\r\x1b[2K"), true);
  assertEquals(out[0].includes("█".repeat(24)), true);
  assertEquals(out.at(-1), "\n");
});

Deno.test("formatDuration", () => {
  assertEquals(formatDuration(12.4), "12s");
  assertEquals(formatDuration(185), "3m05s");
  assertEquals(formatDuration(3720), "1h02m");
  assertEquals(formatDuration(Infinity), "?");
});
