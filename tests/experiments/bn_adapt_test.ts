/**
 * bn-adapt: bad command lines are refused before any run directory exists, the grouped accuracy is the one-call
 * prior forward, the relative mCE gains and the best prior N follow their closed forms, and saturate is the
 * identity on grey digits (why it is not a dev corruption).
 */
import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import {
  bestFinitePrior,
  type Cell,
  devMetrics,
  type GridOptions,
  groupedAccuracy,
  type PartialOptions,
  testMetrics,
} from "../../lib/adapt/bn_adapt_study.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { parseInvocation } from "../../lib/core/experiment.ts";
import { Rng } from "../../lib/core/rng.ts";
import { accuracyOf, type SourceClassifier } from "../../lib/adapt/source_model.ts";

const experiment = findExperiment("bn-adapt")!;
import { corrupt, type Severity } from "../../lib/data/corruptions.ts";
import { loadMnist } from "../../lib/data/mnist.ts";
import { bnCnn } from "../../lib/models/bn_cnn.ts";
import { projectPath, scriptCommand } from "./cli.ts";

await selectBackend("wasm");

const smokeConfig = () => {
  const invocation = parseInvocation(experiment, ["--preset", "smoke", "--runs", Deno.makeTempDirSync()]);
  assert(invocation !== "help");
  return invocation.cfg as unknown as PartialOptions & GridOptions;
};

Deno.test("bn-adapt: bad input is a UsageError that names what is allowed, before any run directory", async () => {
  const cases: [string[], RegExp][] = [
    [["--corruptions", "gaussian_noise,fogg"], /fogg not allowed.*gaussian_noise, shot_noise/],
    [["--dev_corruptions", "sparkle"], /sparkle not allowed.*speckle_noise/],
    [["--severities", "0,3"], /0 out of range.*≥ 1 and ≤ 5/],
    [["--severities", "6"], /out of range.*≥ 1 and ≤ 5/],
    [["--severities", "2.5"], /not an integer/],
    [["--grid_N", "0,-1"], /-1 out of range.*≥ 0/],
    [["--partial_N", "-1"], /out of range.*≥ 0/],
    [["--adhoc_N", "-16"], /out of range.*≥ 0/],
    [["--grid_n", "0,4"], /0 out of range.*≥ 1/],
    [["--partial_n", "0"], /out of range.*≥ 1/],
    [["--adhoc_n", "0"], /out of range.*≥ 1/],
    [["--test_digits", "2000", "--digits", "3000"], /digits = 3000 exceeds test_digits = 2000/],
    [["--grid_n", "1,2000"], /grid_n 2000.*digits = 1000/],
    [["--mixed_digits", "50000"], /mixed_digits = 50000.*45000/],
  ];
  const root = Deno.makeTempDirSync();
  for (const [args, message] of cases) {
    const error = assertThrows(() => parseInvocation(experiment, [...args, "--runs", root]), UsageError);
    assert(message.test(error.message), `${args.join(" ")}: ${error.message}`);
  }
  // The command line exits 2 and writes nothing.
  const out = await scriptCommand(projectPath("experiments/bn_adapt.ts"), root, ["--corruptions", "fogg"]).output();
  assertEquals(out.code, 2);
  assert(new TextDecoder().decode(out.stderr).includes("fogg not allowed"));
  assertEquals([...Deno.readDirSync(root)], []);
});

Deno.test("bn-adapt: grouped accuracy under the prior equals the one-call forward, short last group included", async () => {
  const net = bnCnn(new Rng(3), { norm: "batch" });
  const rng = new Rng(4);
  // Source statistics away from 0 / 1, so that λ matters.
  net.stats.get("bn0/mean").assign(tf.tensor1d(rng.normalArray(32, 0.1)));
  net.stats.get("bn1/var").assign(tf.tensor1d(Float32Array.from(rng.normalArray(64), (v) => 0.5 + v * v)));
  const model: SourceClassifier = { arch: "bn", net, logits: (x, mode) => net.logits(x, mode), dispose: () => {} };
  const count = 37;
  const images = loadMnist({ seed: 0, train: 100, test: count }).test.images;
  const tensors = tf.memory().numTensors;
  for (const [n, N] of [[8, 4], [1, 16], [5, 0], [37, 2], [40, 3]]) {
    const mode = { kind: "prior" as const, N, n };
    // Labels = the one-call predictions: the one-call accuracy is 1, and the grouped one is 1 only if every
    // prediction agrees.
    const labels = tf.tidy(() =>
      net.logits(tf.tensor4d(images, [count, 28, 28, 1]), mode).argMax(1).dataSync() as Int32Array
    );
    assertEquals(await accuracyOf(model, images, Int32Array.from(labels), mode, count), 1);
    assertEquals(await groupedAccuracy(model, images, Int32Array.from(labels), mode), 1, `n ${n}, N ${N}`);
  }
  assertEquals(tf.memory().numTensors, tensors);
  net.dispose();
});

/** A test cell with the given errors per mode. */
function cell(corruption: string, severity: number, errors: Record<string, number>, w2 = 0): Cell {
  const accuracy = Object.fromEntries(Object.entries(errors).map(([k, e]) => [k, 1 - e]));
  return { split: "test", corruption, severity, step: 0, accuracy, w2, w2_normalized: 2 * w2 } as Cell;
}

Deno.test("bn-adapt: relative mCE gains and the W₂ correlation follow their closed forms", () => {
  const cfg = smokeConfig();
  const base = { partial: 0.3, adhoc: 0.3, gn: 0.3 };
  const cells = [
    cell("gaussian_noise", 3, { ...base, none: 0.2, full: 0.1, mlp: 0.5 }, 1),
    cell("gaussian_noise", 5, { ...base, none: 0.4, full: 0.2, mlp: 0.5 }, 2),
    cell("contrast", 3, { ...base, none: 0.1, full: 0.1, mlp: 0.2 }, 3),
    cell("contrast", 5, { ...base, none: 0.1, full: 0.1, mlp: 0.2 }, 4),
  ];
  const m = testMetrics(cells, cfg);
  // CE_none = 0.6/1.0 and 0.2/0.4; CE_full = 0.3/1.0 and 0.2/0.4.
  assertAlmostEquals(m["bn/mce_none"], 0.55, 1e-12);
  assertAlmostEquals(m["bn/mce_full"], 0.4, 1e-12);
  assertAlmostEquals(m["bn/rel_gain_full"], 1 - 0.4 / 0.55, 1e-12);
  // CE_partial = 0.6/1.0 and 0.6/0.4.
  assertAlmostEquals(m["bn/rel_gain_partial8"], 1 - 1.05 / 0.55, 1e-12);
  assertAlmostEquals(m["bn/per_corruption_gain"], (0.1 + 0.2) / 4, 1e-12);
  assertAlmostEquals(m["mlp/mce"], 1, 1e-12);
  // Unadapted errors 0.2, 0.4, 0.1, 0.1 against W₂ 1, 2, 3, 4: r by hand.
  const [x, y] = [[1, 2, 3, 4], [0.2, 0.4, 0.1, 0.1]];
  const [mx, my] = [2.5, 0.2];
  const sxy = x.reduce((s, xi, i) => s + (xi - mx) * (y[i] - my), 0);
  const sxx = x.reduce((s, xi) => s + (xi - mx) ** 2, 0), syy = y.reduce((s, yi) => s + (yi - my) ** 2, 0);
  assertAlmostEquals(m["bn/r_w2_error"], sxy / Math.sqrt(sxx * syy), 1e-12);
  assertAlmostEquals(m["bn/r_w2n_error"], m["bn/r_w2_error"], 1e-12);
});

Deno.test("bn-adapt: the best prior N at n = 1 is the finite N ≥ 1 with the lowest dev mCE, ties to the smaller", () => {
  const mce: Record<number, number> = { 0: 0.1, 1: 0.9, 4: 0.5, 16: 0.4, 64: 0.4, [Infinity]: 0.2 };
  assertEquals(bestFinitePrior([0, 1, 4, 16, 64, Infinity], (N) => mce[N]), 16);
  assertEquals(bestFinitePrior([64, 16, 4], (N) => mce[N]), 16);
  assertEquals(bestFinitePrior([0, Infinity], (N) => mce[N]), undefined);

  const cfg = { ...smokeConfig(), grid_n: [1], grid_N: [0, 4, 16], grid_source: true };
  const errors = { none: 0.3, full: 0.2, mlp: 0.5, "n1/N0": 0.4, "n1/N4": 0.25, "n1/N16": 0.35, "n1/Ninf": 0.3 };
  const m = devMetrics([{ ...cell("speckle_noise", 3, errors), split: "dev" }], cfg);
  assertEquals([m["bn/best_N_n1"], m["bn/log2_best_N_n1"], m["bn/best_N_n1_beats_none"]], [4, 2, 1]);
  assertAlmostEquals(m["bn/dev_mce/n1/N4"], 0.5, 1e-12);
  assertAlmostEquals(m["bn/dev_mce_none"], 0.6, 1e-12);
});

Deno.test("bn-adapt: saturate leaves grey digits as they are, at every severity", () => {
  const { images } = loadMnist({ seed: 0, train: 100, test: 20 }).test;
  for (const severity of [1, 2, 3, 4, 5] as Severity[]) {
    const out = corrupt({ values: images, n: 20, shape: [28, 28, 1] }, "saturate", severity, { seed: 0 }).values;
    const worst = out.reduce((m, v, i) => Math.max(m, Math.abs(v - images[i])), 0);
    // The outputs are rounded to the 1/255 grid; the digits' values are not all on it.
    assert(worst <= 0.5 / 255 + 1e-7, `severity ${severity}: ${worst}`);
  }
});
