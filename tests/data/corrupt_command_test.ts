import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { exists, runCommand, writeNpy } from "../cli_helpers.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { readNpy } from "../../lib/core/npy.ts";
import { Rng } from "../../lib/core/rng.ts";
import { CORRUPT_USAGE, corruptCommand } from "../../lib/data/corrupt_command.ts";
import { corrupt } from "../../lib/data/corruptions.ts";
import { mnistC } from "../../lib/data/mnist_c.ts";

/** Runs corrupt in process; returns the exit code and the printed lines. */
const run = (args: string[]) => runCommand(corruptCommand, args);

function randomBytes(count: number, seed: number): Uint8Array {
  const rng = new Rng(seed);
  return Uint8Array.from({ length: count }, () => rng.int(256));
}

Deno.test("corrupt writes float32 images of the input's shape, the same as corrupt() with that seed", async () => {
  const dir = Deno.makeTempDirSync();
  const values = Float32Array.from(randomBytes(3 * 32 * 32 * 3, 1), (v) => v / 255);
  const input = writeNpy(dir, "x.npy", values, [3, 32, 32, 3]);
  const out = join(dir, "y.npy");
  const { code, lines } = await run(["--in", input, "--out", out, "--name", "fog", "--severity", "3", "--seed", "7"]);
  assertEquals(code, 0);
  assertEquals(lines, [`${out}: 3 images of 32×32×3, fog severity 3 (cifar table), seed 7, float32`]);
  const written = await readNpy(out);
  assertEquals([written.dtype, written.shape], ["f4", [3, 32, 32, 3]]);
  const expected = corrupt({ values, n: 3, shape: [32, 32, 3] }, "fog", 3, { seed: 7 });
  assertEquals(Array.from(written.data as Float32Array), Array.from(expected.values));
});

Deno.test("corrupt: uint8 [n, h, w] in, uint8 of the same shape out; --table imagenet", async () => {
  const dir = Deno.makeTempDirSync();
  const bytes = randomBytes(2 * 28 * 30, 2);
  const input = writeNpy(dir, "x.npy", bytes, [2, 28, 30]);
  const out = join(dir, "y.npy");
  await run(["--in", input, "--out", out, "--name", "contrast", "--severity", "2", "--table", "imagenet"]);
  const written = await readNpy(out);
  assertEquals([written.dtype, written.shape], ["u1", [2, 28, 30]]);
  const images = {
    values: Float32Array.from(bytes, (v) => v / 255),
    n: 2,
    shape: [28, 30, 1] as [number, number, number],
  };
  const expected = corrupt(images, "contrast", 2, { seed: 0, table: "imagenet" });
  assertEquals(Array.from(written.data as Uint8Array), Array.from(expected.values, (v) => Math.round(v * 255)));
});

Deno.test("corrupt --table mnist_c applies an MNIST-C corruption without a severity", async () => {
  const dir = Deno.makeTempDirSync();
  const values = Float32Array.from(randomBytes(2 * 784, 3), (v) => v / 255);
  const input = writeNpy(dir, "x.npy", values, [2, 28, 28, 1]);
  const out = join(dir, "y.npy");
  const { lines } = await run([
    "--in",
    input,
    "--out",
    out,
    "--name",
    "shot_noise",
    "--table",
    "mnist_c",
    "--seed",
    "4",
  ]);
  assertEquals(lines, [`${out}: 2 images of 28×28×1, MNIST-C shot_noise, seed 4, float32`]);
  const expected = mnistC({ values, n: 2, shape: [28, 28, 1] }, "shot_noise", { seed: 4 });
  assertEquals(Array.from((await readNpy(out)).data as Float32Array), Array.from(expected.values));
});

Deno.test("corrupt --help prints the usage", async () => {
  assertEquals((await run(["--help"])).lines, [CORRUPT_USAGE]);
});

Deno.test("corrupt refuses bad input before writing anything, saying what is allowed", async () => {
  const dir = Deno.makeTempDirSync();
  const ok = writeNpy(dir, "ok.npy", new Float32Array(2 * 28 * 28).fill(0.5), [2, 28, 28]);
  const out = join(dir, "out.npy");
  const bright = new Float32Array(28 * 28).fill(0.5);
  bright[10] = 1.5;
  const nan = new Float32Array(28 * 28).fill(0.5);
  nan[3] = NaN;
  const files = {
    bright: writeNpy(dir, "bright.npy", bright, [1, 28, 28]),
    nan: writeNpy(dir, "nan.npy", nan, [1, 28, 28]),
    flat: writeNpy(dir, "flat.npy", new Float32Array(2 * 784), [2, 784]),
    twoChannels: writeNpy(dir, "two.npy", new Float32Array(28 * 28 * 2), [1, 28, 28, 2]),
    small: writeNpy(dir, "small.npy", new Float32Array(27 * 27), [1, 27, 27]),
    ints: writeNpy(dir, "ints.npy", new Int32Array(28 * 28), [1, 28, 28]),
    colour: writeNpy(dir, "colour.npy", new Float32Array(28 * 28 * 3), [1, 28, 28, 3]),
  };
  const args = (input: string, name: string, severity?: string, extra: string[] = []) => [
    "--in",
    input,
    "--out",
    out,
    "--name",
    name,
    ...(severity === undefined ? [] : ["--severity", severity]),
    ...extra,
  ];
  const cases: [string[], string][] = [
    [args(ok, "fogg", "3"), 'unknown corruption "fogg"; did you mean fog? valid: gaussian_noise, shot_noise'],
    [args(ok, "fog", "0"), "--severity must be 1, 2, 3, 4 or 5"],
    [args(ok, "fog", "6"), "--severity must be 1, 2, 3, 4 or 5"],
    [args(ok, "fog", "2.5"), "--severity must be 1, 2, 3, 4 or 5"],
    [args(ok, "fog"), "--severity needs a severity from 1 to 5"],
    [args(ok, "fog", "3", ["--table", "tiny"]), 'unknown table "tiny"'],
    [args(ok, "fog", "3", ["--seed", "1.5"]), "--seed must be an integer"],
    [args(ok, "fog", "3", ["--seed", "-1"]), "--seed must be an integer from 0 to 4294967295"],
    [args(ok, "fog", "3", ["--seed", "4294967296"]), "--seed must be an integer from 0 to 4294967295"],
    [["--in", ok, "--out", ok, "--name", "fog", "--severity", "3"], "is the --in file: it would be overwritten"],
    [args(ok, "fog", "3", ["--sigma", "1"]), "unknown option --sigma for corrupt"],
    [args(ok, "defocus_blur", "3", ["--table", "mnist_c"]), 'unknown corruption "defocus_blur"'],
    [args(files.colour, "stripe", undefined, ["--table", "mnist_c"]), "--table mnist_c needs [n, 28, 28]"],
    [args(files.bright, "fog", "3"), "value 1.5 of image 0 (flat index 10) is not in [0, 1]"],
    [args(files.nan, "fog", "3"), "value NaN of image 0 (flat index 3) is not in [0, 1]"],
    [args(files.flat, "fog", "3"), "shape [2, 784] is not [n, h, w] or [n, h, w, c]"],
    [args(files.twoChannels, "fog", "3"), "2 channels; images need 1 or 3"],
    [args(files.small, "fog", "3"), "both sides must be at least 28"],
    [args(files.ints, "fog", "3"), "dtype i4 is not float32, float64 or uint8"],
    [args(join(dir, "missing.npy"), "fog", "3"), "missing.npy"],
    [["--in", ok, "--out", join(dir, "no", "such", "y.npy"), "--name", "fog", "--severity", "3"], "does not exist"],
  ];
  for (const [argv, message] of cases) {
    await assertRejects(() => run(argv), UsageError, message).catch((error) => {
      throw new Error(`${argv.join(" ")}: ${error.message}`);
    });
    assert(!exists(out), `${argv.join(" ")} wrote ${out}`);
  }
});
