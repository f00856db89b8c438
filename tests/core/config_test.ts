import { assertEquals, assertThrows } from "../assert.ts";
import {
  choice,
  choices,
  flag,
  integer,
  integers,
  parseNumber,
  real,
  reals,
  resolveConfig,
} from "../../lib/core/config.ts";
import { parseCommandLine } from "../../lib/core/cli.ts";
import { UsageError } from "../../lib/core/errors.ts";

const spec = {
  steps: integer(100, "steps", { min: 1 }),
  lr: real(1e-3, "learning rate", { min: 0, max: 1 }),
  layers: integers([1, 2], "depths", { min: 1, max: 5 }),
  method: choice("a", ["a", "b"], "method"),
  verbose: flag(false, "verbose"),
};
const flags = (args: string[]) => parseCommandLine(args).flags;

Deno.test("parseNumber accepts scientific notation and digit separators", () => {
  assertEquals(parseNumber("1e-4"), 1e-4);
  assertEquals(parseNumber("20_000"), 20000);
  assertEquals(parseNumber("-3.5"), -3.5);
  assertEquals(parseNumber(".5"), 0.5);
  assertEquals(parseNumber("abc"), null);
  assertEquals(parseNumber("1__0"), null);
  assertEquals(parseNumber(""), null);
  assertEquals(parseNumber("1e999"), null);
});

Deno.test("resolveConfig applies defaults, then preset, then flags", () => {
  const cfg = resolveConfig(spec, { steps: 50, lr: 0.01 }, flags(["--lr", "2e-4", "--layers", "3,4", "--verbose"]));
  assertEquals(cfg, { steps: 50, lr: 2e-4, layers: [3, 4], method: "a", verbose: true });
  assertEquals(resolveConfig(spec, {}, flags(["--steps=20_000"])).steps, 20000);
  assertEquals(resolveConfig(spec, {}, flags(["--verbose", "false"])).verbose, false);
});

Deno.test("resolveConfig names an unknown key, the closest valid key and the full list", () => {
  const error = assertThrows(() => resolveConfig(spec, {}, flags(["--stepz", "3"])), UsageError, "--stepz");
  assertEquals(error.message.includes("did you mean --steps?"), true);
  assertEquals(error.message.includes("--lr, --layers, --method, --verbose"), true);
});

Deno.test("resolveConfig rejects wrong types and out-of-range values with what is allowed", () => {
  assertThrows(() => resolveConfig(spec, {}, flags(["--steps", "ten"])), UsageError, "steps must be an integer ≥ 1");
  assertThrows(() => resolveConfig(spec, {}, flags(["--steps", "2.5"])), UsageError, "--steps 2.5");
  assertThrows(() => resolveConfig(spec, {}, flags(["--steps=0"])), UsageError, "≥ 1");
  assertThrows(() => resolveConfig(spec, {}, flags(["--lr", "3"])), UsageError, "≤ 1");
  assertThrows(
    () => resolveConfig(spec, {}, flags(["--layers", "1,9"])),
    UsageError,
    "layers must be a comma-separated list",
  );
  assertThrows(() => resolveConfig(spec, {}, flags(["--method", "c"])), UsageError, "one of a, b");
  assertThrows(() => resolveConfig(spec, {}, flags(["--verbose", "maybe"])), UsageError, "true or false");
  assertThrows(() => resolveConfig(spec, {}, flags(["--lr"])), UsageError, "--lr needs a value");
});

Deno.test("a list of reals takes decimals and checks each against the bounds", () => {
  const listSpec = { scales: reals([0.5], "scales", { min: 0.01, max: 1 }) };
  assertEquals(resolveConfig(listSpec, {}, flags(["--scales", "0.2,1e-1,1"])).scales, [0.2, 0.1, 1]);
  assertThrows(
    () => resolveConfig(listSpec, {}, flags(["--scales", "0.2,2"])),
    UsageError,
    "scales must be a comma-separated list of numbers ≥ 0.01 and ≤ 1",
  );
});

Deno.test("a list of choices takes a comma-separated subset and names what is not allowed", () => {
  const listSpec = { methods: choices(["a", "b"], ["a", "b", "c"], "methods") };
  assertEquals(resolveConfig(listSpec, {}, flags(["--methods", "c,a"])).methods, ["c", "a"]);
  assertEquals(resolveConfig(listSpec, {}, new Map()).methods, ["a", "b"]);
  assertThrows(
    () => resolveConfig(listSpec, {}, flags(["--methods", "a,x,y"])),
    UsageError,
    "--methods a,x,y: x, y not allowed; methods must be a comma-separated list of a, b, c",
  );
});

Deno.test("parseCommandLine pairs flags with values and refuses repeats", () => {
  const parsed = parseCommandLine(["run", "ica-toy", "--seed", "3", "--quiet", "--lr=1e-3", "-h"]);
  assertEquals(parsed.positionals, ["run", "ica-toy"]);
  assertEquals([...parsed.flags], [["seed", "3"], ["quiet", true], ["lr", "1e-3"], ["help", true]]);
  assertThrows(() => parseCommandLine(["--seed", "1", "--seed", "2"]), UsageError, "twice");
});

Deno.test("a list key refuses a repeated value unless its spec allows repeats", () => {
  const listSpec = {
    layers: integers([1, 2], "depths", { min: 1, max: 5 }),
    scales: reals([0.5], "scales", { min: 0.01, max: 1 }),
    methods: choices(["a"], ["a", "b"], "methods"),
    draws: integers([1], "draws", { min: 1, repeats: true }),
  };
  assertThrows(
    () => resolveConfig(listSpec, {}, flags(["--layers", "1,1"])),
    UsageError,
    "--layers 1,1: 1 is given more than once; layers must be a comma-separated list of integers ≥ 1 and ≤ 5, each at most once",
  );
  assertThrows(() => resolveConfig(listSpec, {}, flags(["--scales", "0.2,0.20"])), UsageError, "0.2 is given more");
  assertThrows(() => resolveConfig(listSpec, {}, flags(["--methods", "a,b,a"])), UsageError, "a is given more");
  // A preset is held to the same rule.
  assertThrows(() => resolveConfig(listSpec, { layers: [2, 2] }, new Map()), UsageError, "2 is given more");
  assertEquals(resolveConfig(listSpec, {}, flags(["--draws", "3,3"])).draws, [3, 3]);
});

Deno.test("keys that every object has are not options: constructor, toString, __proto__", () => {
  for (const key of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
    assertThrows(() => resolveConfig(spec, {}, new Map([[key, "1"]])), UsageError, `unknown option --${key}`);
    assertThrows(() => resolveConfig(spec, { [key]: 1 } as never, new Map()), Error, "preset sets unknown key");
    assertThrows(() => parseCommandLine([`--${key}`, "1"]), UsageError, `unknown option --${key}`);
  }
});

Deno.test("a negative number is a value: --seed -1 is refused by range, not taken for an option", () => {
  assertEquals([...parseCommandLine(["--lr", "-1e-3", "--x=-2", "--layers", "-1,2"]).flags], [
    ["lr", "-1e-3"],
    ["x", "-2"],
    ["layers", "-1,2"],
  ]);
  assertEquals(parseCommandLine(["run", "-5"]).positionals, ["run", "-5"]);
  assertThrows(
    () => resolveConfig(spec, {}, flags(["--steps", "-5"])),
    UsageError,
    "--steps -5: out of range; steps must be an integer ≥ 1",
  );
  assertThrows(() => resolveConfig(spec, {}, flags(["--lr", "-.5"])), UsageError, "--lr -.5: out of range");
  assertThrows(
    () => resolveConfig(spec, {}, flags(["--layers", "-1,2"])),
    UsageError,
    "--layers -1,2: -1 out of range",
  );
});

Deno.test("an upper bound is enforced and written as the command line takes it", () => {
  const sized = { steps: integer(10, "steps", { min: 1, max: 100_000_000 }) };
  assertThrows(
    () => resolveConfig(sized, {}, flags(["--steps", "1e300"])),
    UsageError,
    "--steps 1e300: out of range; steps must be an integer ≥ 1 and ≤ 100_000_000",
  );
  assertEquals(resolveConfig(sized, {}, flags(["--steps", "1e8"])).steps, 1e8);
  assertThrows(() => resolveConfig(sized, {}, flags(["--steps", "2.5"])), UsageError, "--steps 2.5: not an integer");
});
