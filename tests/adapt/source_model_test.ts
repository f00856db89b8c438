import * as tf from "@tensorflow/tfjs";
import { join } from "node:path";
import { assert, assertAlmostEquals, assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { blobDigits } from "../models/bn_cnn_fixtures.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { formatNpy, parseNpy } from "../../lib/core/npy.ts";
import { readArrayFolder } from "../../lib/core/run_checkpoints.ts";
import { loadSourceModel } from "../../lib/train/source_training.ts";
import {
  accuracyOf,
  probabilitiesOf,
  SOURCE_ARCHS,
  SOURCE_CACHE_VERSION,
  type SourceArch,
  type SourceClassifier,
  sourceModelKey,
  type SourceTraining,
} from "../../lib/adapt/source_model.ts";
import { loadMnist } from "../../lib/data/mnist.ts";
import type { NormMode } from "../../lib/models/bn_cnn.ts";

await selectBackend("wasm");

/** Small enough that each arch trains in about a second, with a first-epoch loss near chance. */
const SMALL: SourceTraining = { trainDigits: 200, seed: 3, epochs: 1, lr: 1e-3, batch: 64 };
/**
 * Two Adam steps on 20 digits, a tenth of SMALL's cost for the BN CNN: for the tests that train it again and again
 * (a rebuild per damage), where any training does. Its first-epoch loss is well above chance.
 */
const TINY: SourceTraining = { trainDigits: 20, seed: 3, epochs: 1, lr: 1e-3, batch: 10 };
const probe = blobDigits(16, 7);

function logitsOf(model: SourceClassifier, mode?: NormMode): Float32Array {
  return tf.tidy(() => model.logits(tf.tensor4d(probe, [16, 28, 28, 1]), mode).dataSync() as Float32Array);
}

async function withCache<T>(body: (root: string) => Promise<T>): Promise<T> {
  const root = Deno.makeTempDirSync({ prefix: "source-model-" });
  try {
    return await body(root);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
}

Deno.test("sourceModelKey: names the dataset, every training field and the format version", () => {
  const base = sourceModelKey("bn", { trainDigits: 8000, seed: 0, epochs: 3, lr: 1e-3, batch: 128 });
  // "mnist-idx": a model trained on other digits (the former 10,000-digit package) never matches.
  assertEquals(base, `bn-mnist-idx-d8000-s0-e3-lr0.001-b128-v${SOURCE_CACHE_VERSION}`);
  const changes: [SourceArch, Partial<SourceTraining>][] = [
    ["gn", {}],
    ["mlp", {}],
    ["bn", { trainDigits: 8001 }],
    ["bn", { seed: 1 }],
    ["bn", { epochs: 4 }],
    ["bn", { lr: 2e-3 }],
    ["bn", { batch: 64 }],
  ];
  const keys = changes.map(([arch, change]) =>
    sourceModelKey(arch, { trainDigits: 8000, seed: 0, epochs: 3, lr: 1e-3, batch: 128, ...change })
  );
  assertEquals(new Set([base, ...keys]).size, changes.length + 1);
});

Deno.test("loadSourceModel: refuses bad input before any training or cache write", async () => {
  await withCache(async (root) => {
    const bad: [string, SourceTraining][] = [
      ["resnet", SMALL],
      ["bn", { ...SMALL, trainDigits: 5 }],
      ["bn", { ...SMALL, trainDigits: 60_001 }],
      ["bn", { ...SMALL, trainDigits: 200.5 }],
      ["bn", { ...SMALL, seed: 0.5 }],
      ["bn", { ...SMALL, epochs: 0 }],
      ["bn", { ...SMALL, lr: 0 }],
      ["bn", { ...SMALL, lr: NaN }],
      ["bn", { ...SMALL, batch: 1 }],
    ];
    for (const [arch, training] of bad) {
      let thrown: unknown = null;
      try {
        await loadSourceModel(arch as SourceArch, training, { cacheRoot: root });
      } catch (error) {
        thrown = error;
      }
      assert(thrown instanceof UsageError, `${arch} ${JSON.stringify(training)}: ${thrown}`);
    }
    assertEquals([...Deno.readDirSync(root)].length, 0);
  });
});

Deno.test("loadSourceModel: a cached model gives bit-identical logits, stats and accuracy; no tensors leak", async () => {
  await withCache(async (root) => {
    for (const arch of SOURCE_ARCHS) {
      const before = tf.memory().numTensors;
      const losses: number[] = [];
      const trained = await loadSourceModel(arch, SMALL, {
        cacheRoot: root,
        onEpoch: (_epoch, loss) => losses.push(loss),
      });
      assertEquals(trained.fromCache, false);
      assert(trained.trainSeconds > 0);
      assertEquals(losses.length, 1);
      // Four Adam steps from random weights: the epoch's mean cross-entropy is near chance (ln 10 ≈ 2.30), the BN
      // CNN's first steps a little above it.
      assert(losses[0] > 0 && losses[0] < Math.log(10) + 0.5, `${arch}: first-epoch loss ${losses[0]}`);
      assertEquals(trained.model.arch, arch);
      assertEquals(trained.model.net === null, arch === "mlp");
      const modes: (NormMode | undefined)[] = arch === "bn"
        ? [undefined, { kind: "batch" }, { kind: "prior", N: 4, n: 8 }]
        : [undefined];
      const fresh = modes.map((mode) => logitsOf(trained.model, mode));
      // Training moved the BN running statistics away from the initial 0 / 1.
      if (arch === "bn") {
        const mean = trained.model.net!.stats.get("bn0/mean").dataSync();
        assert(mean.some((v) => Math.abs(v) > 1e-3), "bn0/mean did not move");
      }
      trained.model.dispose();

      const loaded = await loadSourceModel(arch, SMALL, { cacheRoot: root, onEpoch: () => losses.push(-1) });
      assertEquals(loaded.fromCache, true);
      assertEquals(loaded.trainSeconds, 0);
      assertEquals(loaded.key, trained.key);
      assertEquals(loaded.cleanTrainAccuracy, trained.cleanTrainAccuracy);
      assertEquals(losses.length, 1);
      modes.forEach((mode, i) => assertEquals(logitsOf(loaded.model, mode), fresh[i]));
      loaded.model.dispose();
      assertEquals(tf.memory().numTensors, before, `${arch}: tensors leaked`);
    }
    const { arrays } = readArrayFolder(join(root, sourceModelKey("bn", SMALL)));
    assertEquals(
      Object.keys(arrays).filter((k) => k.startsWith("stats/")).sort(),
      ["stats/bn0/mean", "stats/bn0/var", "stats/bn1/mean", "stats/bn1/var"],
    );
  });
});

Deno.test("loadSourceModel: a damaged entry is rebuilt, never half-read", async () => {
  await withCache(async (root) => {
    const first = await loadSourceModel("bn", TINY, { cacheRoot: root });
    const reference = logitsOf(first.model);
    first.model.dispose();
    const folder = join(root, first.key);
    const names = JSON.parse(Deno.readTextFileSync(join(folder, "state.json"))).names as string[];
    const fileOf = (name: string) => join(folder, `${names.indexOf(name)}.npy`);
    const damages: [string, () => void][] = [
      ["a deleted array", () => Deno.removeSync(fileOf("params/fc0/w"))],
      ["a truncated npy", () => {
        const bytes = Deno.readFileSync(fileOf("params/conv1/w"));
        Deno.writeFileSync(fileOf("params/conv1/w"), bytes.subarray(0, bytes.length - 4));
      }],
      ["a NaN in the statistics", () => {
        const array = parseNpy(Deno.readFileSync(fileOf("stats/bn1/var")));
        (array.data as Float32Array)[5] = NaN;
        Deno.writeFileSync(fileOf("stats/bn1/var"), formatNpy(array.data, array.shape));
      }],
      ["a wrong shape", () => {
        const array = parseNpy(Deno.readFileSync(fileOf("params/fc1/b")));
        Deno.writeFileSync(fileOf("params/fc1/b"), formatNpy(array.data, [2, 5]));
      }],
      ["a float64 array", () => {
        const array = parseNpy(Deno.readFileSync(fileOf("params/fc1/b")));
        Deno.writeFileSync(fileOf("params/fc1/b"), formatNpy(Float64Array.from(array.data as Float32Array), [10]));
      }],
      ["an unparsable state.json", () => Deno.writeTextFileSync(join(folder, "state.json"), "{")],
      ["a state of another key", () => {
        const state = JSON.parse(Deno.readTextFileSync(join(folder, "state.json")));
        Deno.writeTextFileSync(join(folder, "state.json"), JSON.stringify({ ...state, key: "bn-other" }));
      }],
    ];
    for (const [what, damage] of damages) {
      damage();
      const rebuilt = await loadSourceModel("bn", TINY, { cacheRoot: root });
      assertEquals(rebuilt.fromCache, false, what);
      assertEquals(logitsOf(rebuilt.model), reference, what);
      rebuilt.model.dispose();
      const again = await loadSourceModel("bn", TINY, { cacheRoot: root });
      assertEquals(again.fromCache, true, `${what}: the rebuilt entry reads back`);
      again.model.dispose();
    }
    // No temp folder is left beside the entry.
    assertEquals([...Deno.readDirSync(root)].map((e) => e.name), [first.key]);
  });
});

Deno.test("loadSourceModel: two processes training one key both end with a valid entry", async () => {
  await withCache(async (root) => {
    const script = join(root, "load.ts");
    const library = new URL("../../lib/train/source_training.ts", import.meta.url).href;
    const backend = new URL("../../lib/core/backend.ts", import.meta.url).href;
    Deno.writeTextFileSync(
      script,
      `import { loadSourceModel } from "${library}";
import { selectBackend } from "${backend}";
await selectBackend("wasm");
const loaded = await loadSourceModel("mlp", ${JSON.stringify(SMALL)}, { cacheRoot: ${JSON.stringify(root)} });
console.log(JSON.stringify({ fromCache: loaded.fromCache, accuracy: loaded.cleanTrainAccuracy }));
`,
    );
    const config = new URL("../../deno.json", import.meta.url).pathname;
    const run = () =>
      new Deno.Command(Deno.execPath(), { args: ["run", "-A", "--config", config, script], stderr: "piped" }).output();
    const outputs = await Promise.all([run(), run()]);
    for (const output of outputs) {
      assertEquals(output.code, 0, new TextDecoder().decode(output.stderr));
    }
    const loaded = await loadSourceModel("mlp", SMALL, { cacheRoot: root });
    assertEquals(loaded.fromCache, true);
    loaded.model.dispose();
    assertEquals([...Deno.readDirSync(root)].map((e) => e.name).sort(), ["load.ts", sourceModelKey("mlp", SMALL)]);
  });
});

Deno.test("accuracyOf and probabilitiesOf: batched results agree with one forward; bad input refused", async () => {
  await withCache(async (root) => {
    const { model } = await loadSourceModel("bn", TINY, { cacheRoot: root });
    const { images, labels } = loadMnist({ seed: 11, train: 60, test: 10 }).train;
    const before = tf.memory().numTensors;
    const probs = await probabilitiesOf(model, images, undefined, 25);
    const whole = tf.tidy(() => tf.softmax(model.logits(tf.tensor4d(images, [60, 28, 28, 1]))).dataSync());
    for (let i = 0; i < probs.length; i++) assertAlmostEquals(probs[i], whole[i], 1e-6);
    for (let r = 0; r < 60; r++) {
      assertAlmostEquals(probs.subarray(r * 10, r * 10 + 10).reduce((a, b) => a + b, 0), 1, 1e-5);
    }
    let correct = 0;
    for (let r = 0; r < 60; r++) {
      const row = Array.from(probs.subarray(r * 10, r * 10 + 10));
      if (row.indexOf(Math.max(...row)) === labels[r]) correct++;
    }
    assertEquals(await accuracyOf(model, images, labels, undefined, 25), correct / 60);
    // The batch size matters under batch statistics only through the groups; prior n 4 in batches of 20 = of 60.
    const prior: NormMode = { kind: "prior", N: 2, n: 4 };
    assertEquals(
      await accuracyOf(model, images, labels, prior, 20),
      await accuracyOf(model, images, labels, prior, 60),
    );
    assertEquals(tf.memory().numTensors, before);
    await assertRejects(() => accuracyOf(model, images.subarray(1), labels), UsageError);
    await assertRejects(() => accuracyOf(model, images, labels.subarray(1)), UsageError);
    await assertRejects(() => accuracyOf(model, images, labels, undefined, 0), UsageError);
    await assertRejects(() => probabilitiesOf(model, new Float32Array(0)), UsageError);
    assertThrows(() => tf.tidy(() => model.logits(tf.zeros([2, 28, 28, 3]) as tf.Tensor4D)), UsageError);
    model.dispose();
  });
});
