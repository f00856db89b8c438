import { assertEquals } from "../assert.ts";
import { formatMeasured, formatValue, resumeCommand, runKey, verdictClass } from "../../dashboard/ui/format.ts";

Deno.test("formatValue: integers in full, other numbers to 4 significant digits without trailing zeros", () => {
  assertEquals(formatValue(3), "3");
  assertEquals(formatValue(-120000), "-120000");
  assertEquals(formatValue(0.123456), "0.1235");
  assertEquals(formatValue(1234.5678), "1235");
  assertEquals(formatValue(0.5), "0.5");
  assertEquals(formatValue(0.0001), "0.0001");
  assertEquals(formatValue(1.23456e-7), "1.235e-7");
  assertEquals(formatValue(NaN), "NaN");
});

Deno.test("formatValue: strings as they are, anything else as JSON, nothing as an empty cell", () => {
  assertEquals(formatValue("wasm"), "wasm");
  assertEquals(formatValue(true), "true");
  assertEquals(formatValue(null), "null");
  assertEquals(formatValue([1, 0.5]), "[1,0.5]");
  assertEquals(formatValue({ beta: 4 }), '{"beta":4}');
  assertEquals(formatValue(undefined), "");
});

Deno.test("formatMeasured dashes a target the run did not measure", () => {
  assertEquals(formatMeasured(null), "—");
  assertEquals(formatMeasured(0.99712), "0.9971");
  assertEquals(formatMeasured(0), "0");
});

Deno.test("runKey and verdictClass", () => {
  assertEquals(runKey({ experiment: "ica-toy", id: "20240101-120000-abcdef" }), "ica-toy/20240101-120000-abcdef");
  assertEquals(verdictClass("reproduced"), "verdict-reproduced");
  assertEquals(verdictClass("not reproduced"), "verdict-not");
  assertEquals(verdictClass("not measured"), "");
});

Deno.test("resumeCommand names the run to continue for interrupted, crashed and failed runs only", () => {
  assertEquals(
    resumeCommand("ica-toy", "/r/ica-toy/20240101-120000-abcdef", "crashed"),
    "deno task run ica-toy --resume /r/ica-toy/20240101-120000-abcdef",
  );
  assertEquals(
    resumeCommand("ica-toy", "/my runs/it's", "interrupted"),
    "deno task run ica-toy --resume '/my runs/it'\\''s'",
  );
  assertEquals(resumeCommand("ica-toy", "/r/x", "completed"), null);
  assertEquals(resumeCommand("ica-toy", "/r/x", "running"), null);
});
