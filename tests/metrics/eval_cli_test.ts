/** `deno task eval`: a known representation end to end, and every refused input. */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { main } from "../../main.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { constantColumns, constantColumnsWarning } from "../../lib/metrics/evaluate.ts";
import { formatNpy } from "../../lib/core/npy.ts";
import { Rng } from "../../lib/core/rng.ts";
import { FactorSpace } from "../../lib/data/ground_truth.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

async function evalCli(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "eval", ...args],
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout), stderr: new TextDecoder().decode(out.stderr) };
}

/** All factor tuples of a small grid, shuffled, and codes = a permuted, rescaled copy of them. */
function gridArrays(): { codes: Float32Array; factors: Int32Array; n: number } {
  const space = new FactorSpace([3, 6, 10, 8]);
  const rng = new Rng(1);
  const order = rng.permutation(space.total);
  const factors = new Int32Array(space.total * 4), codes = new Float32Array(space.total * 4);
  order.forEach((index, r) => {
    const t = space.tupleOf(index);
    factors.set(t, r * 4);
    codes.set([2 * t[2] + 1, -0.5 * t[0], 3 * t[3] - 4, 0.1 * t[1]], r * 4);
  });
  return { codes, factors, n: space.total };
}

Deno.test("deno task eval scores a permuted, rescaled copy of the factors near 1", async () => {
  const dir = Deno.makeTempDirSync();
  const { codes, factors, n } = gridArrays();
  Deno.writeFileSync(join(dir, "codes.npy"), formatNpy(codes, [n, 4]));
  Deno.writeFileSync(join(dir, "factors.npy"), formatNpy(factors, [n, 4]));
  const out = join(dir, "result.json");
  const { code, stdout, stderr } = await evalCli([
    "--codes",
    join(dir, "codes.npy"),
    "--factors",
    join(dir, "factors.npy"),
    "--metrics",
    "mig,dci,mcc,tc",
    "--out",
    out,
  ]);
  assertEquals(code, 0, stderr);
  const result = JSON.parse(stdout);
  // The keys each metric's registry entry lists as its outputs.
  assertEquals(Object.keys(result).sort(), [
    "dci_completeness",
    "dci_disentanglement",
    "dci_informativeness_test",
    "dci_informativeness_train",
    "mcc",
    "mig",
    "tc",
  ]);
  assert(result.mig >= 0.99 && result.mcc >= 0.99, stdout);
  assert(result.dci_disentanglement >= 0.95 && result.dci_informativeness_test >= 0.99, stdout);
  assert(stderr.includes("seconds per metric"));
  assertEquals(JSON.parse(Deno.readTextFileSync(out)).mig, result.mig);
});

Deno.test("deno task eval refuses bad input with exit code 2", async () => {
  const dir = Deno.makeTempDirSync();
  const write = (name: string, data: Float32Array | Int32Array | Float64Array, shape: number[]) => {
    Deno.writeFileSync(join(dir, name), formatNpy(data, shape));
    return join(dir, name);
  };
  const codes = write("codes.npy", Float32Array.from({ length: 20 }, (_, i) => i), [10, 2]);
  const factors = write("factors.npy", Int32Array.from({ length: 10 }, (_, i) => i % 3), [10, 1]);
  const cases: [string[], string][] = [
    [
      ["--codes", codes, "--factors", write("short.npy", Int32Array.of(1, 2, 1), [3, 1])],
      "codes have 10 rows but factors have 3",
    ],
    [[
      "--codes",
      write("nan.npy", Float32Array.from({ length: 20 }, (_, i) => i === 7 ? NaN : i), [10, 2]),
      "--factors",
      factors,
    ], "codes[3, 1] is NaN"],
    [
      ["--codes", codes, "--factors", write("half.npy", Float64Array.from({ length: 10 }, (_, i) => i / 2), [10, 1])],
      "is not an integer",
    ],
    [["--codes", codes, "--factors", write("const.npy", new Int32Array(10), [10, 1])], "factor 0 is constant"],
    [[
      "--codes",
      write("one.npy", Float32Array.of(1, 2), [1, 2]),
      "--factors",
      write("one_f.npy", Int32Array.of(1), [1, 1]),
    ], "at least 6 rows"],
    [["--codes", codes, "--factors", factors, "--metrics", "mig,bogus"], 'unknown metric "bogus"'],
    [["--codes", codes], "--factors needs a path"],
    [["--codes", join(dir, "missing.npy"), "--factors", factors], "no such file"],
    [["--codes", codes, "--factors", factors, "--bogus", "1"], "unknown option --bogus"],
  ];
  // In process: each is refused with a UsageError naming the problem, before any metric runs.
  for (const [args, message] of cases) await assertRejects(() => main(["eval", ...args]), UsageError, message);
  // Through the command line once: the message, then exit code 2.
  const [args, message] = cases[0];
  const { code, stderr } = await evalCli(args);
  assertEquals(code, 2, `${args.join(" ")}: ${stderr}`);
  assert(stderr.includes(`error: ${message}`), `"${stderr}" lacks "${message}"`);
});

Deno.test("deno task eval refuses before any work what the metrics cannot score, and an --out it cannot write", async () => {
  const dir = Deno.makeTempDirSync();
  const write = (name: string, data: Float32Array | Int32Array | BigInt64Array, shape: number[]) => {
    Deno.writeFileSync(join(dir, name), formatNpy(data, shape));
    return join(dir, name);
  };
  const codes = (n: number, d = 2) =>
    write(`codes${n}x${d}.npy`, Float32Array.from({ length: n * d }, (_, i) => Math.sin(i)), [n, d]);
  const factors = (n: number) => write(`factors${n}.npy`, Int32Array.from({ length: n }, (_, i) => i % 2), [n, 1]);
  const header = (name: string, text: string) => {
    text += " ".repeat((64 - ((10 + text.length + 1) % 64)) % 64) + "\n";
    const bytes = new Uint8Array(10 + text.length + 80);
    bytes.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
    new DataView(bytes.buffer).setUint16(8, text.length, true);
    bytes.set(new TextEncoder().encode(text), 10);
    Deno.writeFileSync(join(dir, name), bytes);
    return join(dir, name);
  };
  const big = write("big.npy", BigInt64Array.from({ length: 10 }, (_, i) => 2n ** 53n + BigInt(i % 2)), [10, 1]);
  const cases: [string[], string][] = [
    // 2–5 rows leave a split with fewer than 2 train or test rows: the metrics threw plain errors (exit 1).
    ...[2, 3, 4, 5].map((n): [string[], string] => [["--codes", codes(n), "--factors", factors(n)], "at least 6 rows"]),
    [["--codes", write("empty.npy", new Float32Array(0), [10, 0]), "--factors", factors(10)], "at least 1 column"],
    [["--codes", codes(10), "--factors", write("nofactor.npy", new Int32Array(0), [10, 0])], "at least 1 column"],
    [["--codes", codes(10, 1), "--factors", factors(10), "--metrics", "mig,tc"], "tc (total correlation"],
    [[
      "--codes",
      header("neg.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 2), }"),
      "--factors",
      factors(10),
    ], "negative"],
    [[
      "--codes",
      header("word.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (n, 2), }"),
      "--factors",
      factors(10),
    ], "a shape holds integers"],
    [["--codes", dir, "--factors", factors(10)], "a folder, not an .npy file"],
    [["--codes", codes(10), "--factors", big], "beyond ±(2^53 − 1)"],
    [["--codes", codes(10), "--factors", factors(10), "--out", dir], "is a folder"],
    [["--codes", codes(10), "--factors", factors(10), "--out", join(dir, "no", "r.json")], "does not exist"],
    [["--codes", codes(10), "--factors", factors(10), "--metrics", "mig,mig"], "mig is given more than once"],
    [["--codes", codes(10), "--factors", factors(10), "--metrics"], "--metrics needs a value"],
  ];
  const before = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  for (const [args, message] of cases) await assertRejects(() => main(["eval", ...args]), UsageError, message);
  // --out is checked before the arrays are read: a bad --out with bad arrays names the --out.
  await assertRejects(
    () => main(["eval", "--codes", codes(2), "--factors", factors(2), "--out", join(dir, "no", "r.json")]),
    UsageError,
    "--out",
  );
  assertEquals([...Deno.readDirSync(dir)].map((e) => e.name).sort(), before);
});

Deno.test("eval warns about constant code columns, naming them, and when every column is constant", () => {
  const codes = (rows: number[][]) => ({ data: rows.flat(), rows: rows.length, cols: rows[0].length });
  const varied = [[0, 5, 1], [1, 5, 1 + 1e-12], [2, 5, 1], [3, 5, 1], [4, 5, 1], [5, 5, 1]];
  assertEquals(constantColumns(codes(varied)), [1, 2]);
  assertEquals(
    constantColumnsWarning(codes(varied)),
    "warning: code columns 1, 2 of 3 are constant: they carry no information about any factor",
  );
  assertEquals(constantColumnsWarning(codes(varied.map((r) => [r[0], r[0] * 1e-3]))), null);
  assert(constantColumnsWarning(codes(varied.map((r) => [r[1]])))!.startsWith("warning: all 1 code columns"));
});
