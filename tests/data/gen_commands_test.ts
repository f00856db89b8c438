import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { exists, runCommand } from "../cli_helpers.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { readNpy } from "../../lib/core/npy.ts";
import { GEN_SPLIT_USAGE, genSplitCommand } from "../../lib/data/gen_commands.ts";
import { makeSplit } from "../../lib/data/splits.ts";

/** Runs gen-split in process; returns the exit code and the printed lines. */
const genSplit = (args: string[]) => runCommand(genSplitCommand, args);

Deno.test("gen-split writes int32 train.npy and test.npy of the split and prints the counts", async () => {
  const out = join(Deno.makeTempDirSync(), "new", "split");
  const { code, lines } = await genSplit(["--dataset", "dsprites", "--split", "composition", "--out", out]);
  assertEquals(code, 0);
  assertEquals(lines, ["train 192312 (26.08%) test 544968"]);
  const split = makeSplit("dsprites", "composition");
  const train = await readNpy(join(out, "train.npy")), test = await readNpy(join(out, "test.npy"));
  assertEquals([train.dtype, train.shape, test.dtype, test.shape], ["i4", [192_312], "i4", [544_968]]);
  assertEquals(train.data, split.train);
  assertEquals(test.data, split.test);
});

Deno.test("gen-split into an existing empty folder; dsprites-rot shares dSprites' splits; --help", async () => {
  const out = Deno.makeTempDirSync();
  const { lines } = await genSplit(["--dataset=dsprites-rot", "--split=extrapolation", `--out=${out}`]);
  assertEquals(lines, ["train 240000 (32.55%) test 497280"]);
  assertEquals((await genSplit(["--help"])).lines, [GEN_SPLIT_USAGE]);
});

Deno.test("gen-split refuses a bad command line before writing anything, saying what is allowed", async () => {
  const root = Deno.makeTempDirSync();
  const out = join(root, "out");
  const full = Deno.makeTempDirSync();
  Deno.writeTextFileSync(join(full, "keep.txt"), "x");
  const file = join(root, "a-file");
  Deno.writeTextFileSync(file, "x");
  const ok = ["--dataset", "shapes3d", "--split", "random", "--out", out];
  const cases: [string[], string][] = [
    [["--dataset", "shapes3", "--split", "random", "--out", out], 'unknown dataset "shapes3"; did you mean shapes3d?'],
    [["--dataset", "celebglow", "--split", "random", "--out", out], "valid: dsprites, dsprites-rot, shapes3d, mpi3d"],
    [["--dataset", "shapes3d", "--split", "interp", "--out", out], 'unknown split "interp"'],
    [
      ["--dataset", "shapes3d", "--split", "interp", "--out", out],
      "valid: random, composition, interpolation, extrapolation",
    ],
    [["--split", "random", "--out", out], "--dataset needs a dataset: dsprites, dsprites-rot, shapes3d, mpi3d"],
    [["--dataset", "shapes3d", "--out", out], "--split needs a split: random, composition"],
    [["--dataset", "shapes3d", "--split", "random"], "--out needs a new or empty folder"],
    [["--dataset", "shapes3d", "--split", "random", "--out"], "--out needs"],
    [["--dataset", "shapes3d", "--split", "random", "--out", full], "the folder is not empty (it holds keep.txt)"],
    [["--dataset", "shapes3d", "--split", "random", "--out", file], "not a folder"],
    [["--dataset", "shapes3d", "--split", "random", "--out", join(file, "sub")], "is a file, not a folder"],
    [[...ok, "--seed", "1"], "unknown option --seed for gen-split; valid: --dataset, --split, --out"],
    [[...ok, "extra"], 'unexpected argument "extra"'],
    [[...ok, "--split", "random"], "--split is given twice"],
  ];
  for (const [args, message] of cases) {
    await assertRejects(() => genSplit(args), UsageError, message);
    assert(!exists(out), `${args.join(" ")}: wrote ${out}`);
  }
  assertEquals([...Deno.readDirSync(full)].map((e) => e.name), ["keep.txt"]);
});
