import { assert, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { loadMnist, MNIST_CLASS_COUNTS, MNIST_TOTAL, type MnistSplit, stratifiedCounts } from "../../lib/data/mnist.ts";

const base = loadMnist({ seed: 0 });

function classCounts(split: MnistSplit): number[] {
  const counts = new Array(10).fill(0);
  for (const label of split.labels) counts[label]++;
  return counts;
}

function keys(split: MnistSplit): string[] {
  return Array.from(split.labels, (label, r) => `${label}:${split.indices[r]}`);
}

Deno.test("the package ships 10,000 digits with the documented per-class counts", () => {
  assertEquals([...MNIST_CLASS_COUNTS], [1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978]);
  assertEquals(MNIST_TOTAL, 10_000);
});

Deno.test("default split: 8,000 / 2,000 images of shape [n, 28, 28, 1] in [0, 1]", () => {
  for (const [split, n] of [[base.train, 8000], [base.test, 2000]] as const) {
    assertEquals(split.n, n);
    assertEquals(split.images.length, n * 28 * 28);
    assertEquals(split.labels.length, n);
    assertEquals(split.indices.length, n);
    let min = Infinity, max = -Infinity;
    for (const v of split.images) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
    assertEquals([min, max], [0, 1]);
    assert(split.labels.every((l) => l >= 0 && l < 10));
  }
  // Real digits have ink: a few percent of pixels are bright.
  let mean = 0;
  for (const v of base.train.images) mean += v / base.train.images.length;
  assert(mean > 0.05 && mean < 0.25, `mean intensity ${mean}`);
});

Deno.test("train and test share no digit and neither holds one twice", () => {
  const train = new Set(keys(base.train));
  const test = new Set(keys(base.test));
  assertEquals(train.size, 8000);
  assertEquals(test.size, 2000);
  for (const key of test) assert(!train.has(key), `digit ${key} is in both parts`);
});

Deno.test("each class's share is within ±1 image of proportional", () => {
  const cases: [number, number][] = [[8000, 2000], [9999, 1], [5000, 5000], [7, 3], [1, 1], [1234, 567]];
  for (const [train, test] of cases) {
    const split = train === 8000 && test === 2000 ? base : loadMnist({ seed: 3, train, test });
    for (const [part, n] of [[split.train, train], [split.test, test]] as const) {
      const counts = classCounts(part);
      assertEquals(counts.reduce((a, b) => a + b, 0), n);
      counts.forEach((count, c) => {
        const proportional = (n * MNIST_CLASS_COUNTS[c]) / MNIST_TOTAL;
        assert(Math.abs(count - proportional) <= 1, `${train}/${test}: class ${c} has ${count}, ~${proportional}`);
      });
    }
  }
  // The full dataset splits exactly: every digit lands in one part.
  const all = loadMnist({ seed: 1, train: 5000, test: 5000 });
  assertEquals(new Set([...keys(all.train), ...keys(all.test)]).size, 10_000);
  assertEquals([...stratifiedCounts(10_000)], [...MNIST_CLASS_COUNTS]);
});

Deno.test("same seed gives the identical split, another seed a different one", () => {
  const again = loadMnist({ seed: 0 });
  assertEquals(again.train.labels, base.train.labels);
  assertEquals(again.train.indices, base.train.indices);
  assertEquals(again.test.indices, base.test.indices);
  assertEquals(again.train.images, base.train.images);
  const other = loadMnist({ seed: 1 });
  assertNotEquals(other.train.indices, base.train.indices);
  assertNotEquals(other.train.labels, base.train.labels);
  assertNotEquals(new Set(keys(other.test)), new Set(keys(base.test)));
  // The stratified counts do not depend on the seed.
  assertEquals(classCounts(other.train), classCounts(base.train));
});

Deno.test("the images are the package's digits: a digit looks the same in any split", () => {
  const other = loadMnist({ seed: 7, train: 9000, test: 1000 });
  const where = new Map(keys(other.train).map((key, r) => [key, r]));
  let compared = 0;
  keys(base.test).forEach((key, r) => {
    const s = where.get(key);
    if (s === undefined) return;
    compared++;
    assertEquals(
      other.train.images.subarray(s * 784, (s + 1) * 784),
      base.test.images.subarray(r * 784, (r + 1) * 784),
    );
  });
  assert(compared > 1000, `only ${compared} shared digits`);
});

Deno.test("binarize thresholds at 0.5 to exactly 0 or 1", () => {
  const binary = loadMnist({ seed: 0, train: 500, test: 100, binarize: true });
  const grey = loadMnist({ seed: 0, train: 500, test: 100 });
  assertEquals(binary.train.indices, grey.train.indices);
  let ones = 0;
  for (let p = 0; p < binary.train.images.length; p++) {
    const v = binary.train.images[p];
    assert(v === 0 || v === 1, `pixel ${p} = ${v}`);
    assertEquals(v, grey.train.images[p] >= 0.5 ? 1 : 0);
    ones += v;
  }
  assert(ones > 0);
});

Deno.test("bad options throw an error naming the option and its range", () => {
  assertThrows(() => loadMnist({ seed: 0, train: 0 }), RangeError, "train must be an integer in 1..9999");
  assertThrows(() => loadMnist({ seed: 0, train: 2.5 }), RangeError, "train");
  assertThrows(() => loadMnist({ seed: 0, test: -1 }), RangeError, "test must be an integer in 1..9999");
  assertThrows(() => loadMnist({ seed: 0, test: 10_000 }), RangeError, "test");
  assertThrows(() => loadMnist({ seed: 0, train: 9000, test: 1001 }), RangeError, "train + test must be at most 10000");
  assertThrows(() => loadMnist({ seed: 0.5 }), RangeError, "seed");
});
