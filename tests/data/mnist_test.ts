import { assert, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { join } from "node:path";
import { UsageError } from "../../lib/core/errors.ts";
import {
  checkMnistParts,
  loadMnist,
  MNIST_FILES,
  mnistClassCounts,
  mnistDataDir,
  mnistFilePart,
  type MnistSplit,
  parseIdx,
  readMnistFile,
  stratifiedCounts,
} from "../../lib/data/mnist.ts";

// Independent facts of the official MNIST (LeCun et al.): per-class counts, first labels, mean pixel value.
const TRAIN_COUNTS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949];
const TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009];

const base = loadMnist({ seed: 0 });

function classCounts(split: MnistSplit): number[] {
  const counts = new Array(10).fill(0);
  for (const label of split.labels) counts[label]++;
  return counts;
}

Deno.test("the package's files are the official ones: sizes, md5 sums, class counts, first labels", () => {
  const official: [string, number, string][] = [
    ["train-images-idx3-ubyte", 47_040_016, "6bbc9ace898e44ae57da46a324031adb"],
    ["train-labels-idx1-ubyte", 60_008, "a25bea736e30d166cdddb491f175f624"],
    ["t10k-images-idx3-ubyte", 7_840_016, "2646ac647ad5339dbf082846283269ea"],
    ["t10k-labels-idx1-ubyte", 10_008, "27ae3e4e09519cfbb04c329615203637"],
  ];
  const specs = [MNIST_FILES.train.images, MNIST_FILES.train.labels, MNIST_FILES.test.images, MNIST_FILES.test.labels];
  assertEquals(specs.map((f) => [f.name, f.bytes, f.md5]), official);
  for (const [name, bytes] of official) assertEquals(Deno.statSync(join(mnistDataDir(), name)).size, bytes);
  assertEquals(mnistClassCounts("train"), TRAIN_COUNTS);
  assertEquals(mnistClassCounts("test"), TEST_COUNTS);
  assertEquals(mnistFilePart("train").labels[0], 5);
  assertEquals(mnistFilePart("test").labels[0], 7);
});

Deno.test("pixels are bytes 0..255 in the files and bytes / 255 in the loaded images", () => {
  const { pixels } = mnistFilePart("train");
  let min = 255, max = 0, sum = 0;
  for (const v of pixels) {
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
  }
  assertEquals([min, max], [0, 255]);
  // The training set's well-known mean intensity 0.1307.
  assert(Math.abs(sum / pixels.length / 255 - 0.1307) < 1e-4, `mean ${sum / pixels.length / 255}`);
  for (const [split, n] of [[base.train, 60_000], [base.test, 10_000]] as const) {
    assertEquals([split.n, split.images.length, split.labels.length, split.indices.length], [n, n * 784, n, n]);
    let lo = Infinity, hi = -Infinity;
    for (const v of split.images) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    assertEquals([lo, hi], [0, 1]);
  }
  const row = base.test.indices[0];
  const file = mnistFilePart("test");
  assertEquals(base.test.labels[0], file.labels[row]);
  assertEquals(
    base.test.images.subarray(0, 784),
    Float32Array.from(file.pixels.subarray(row * 784, (row + 1) * 784), (v) => v / 255),
  );
});

Deno.test("default: every official digit once, training digits from the training file, test digits from the test file", () => {
  assertEquals(new Set(base.train.indices).size, 60_000);
  assertEquals(new Set(base.test.indices).size, 10_000);
  assertEquals(classCounts(base.train), TRAIN_COUNTS);
  assertEquals(classCounts(base.test), TEST_COUNTS);
  const trainLabels = mnistFilePart("train").labels, testLabels = mnistFilePart("test").labels;
  base.train.indices.forEach((row, r) => assertEquals(base.train.labels[r], trainLabels[row]));
  base.test.indices.forEach((row, r) => assertEquals(base.test.labels[r], testLabels[row]));
  // Shuffled, so that the first digits of a part mix the classes.
  assertNotEquals([...base.test.indices.subarray(0, 20)], Array.from({ length: 20 }, (_, i) => i));
});

Deno.test("a subset is stratified: each class within ±1 of its proportional share, no digit twice", () => {
  for (const [train, test] of [[1234, 567], [20, 10], [59_999, 9_999], [8_000, 1]] as const) {
    const split = loadMnist({ seed: 3, train, test });
    for (const [part, n, counts] of [[split.train, train, TRAIN_COUNTS], [split.test, test, TEST_COUNTS]] as const) {
      const got = classCounts(part);
      assertEquals(got.reduce((a, b) => a + b, 0), n);
      assertEquals(new Set(part.indices).size, n);
      got.forEach((count, c) => {
        const proportional = (n * counts[c]) / counts.reduce((a, b) => a + b, 0);
        assert(Math.abs(count - proportional) < 1, `${n}: class ${c} has ${count}, ~${proportional}`);
      });
    }
  }
  assertEquals([...stratifiedCounts(60_000, TRAIN_COUNTS)], TRAIN_COUNTS);
  assertEquals([...stratifiedCounts(10_000, TEST_COUNTS)], TEST_COUNTS);
  assertEquals([...stratifiedCounts(0, TEST_COUNTS)], new Array(10).fill(0));
  assertThrows(() => stratifiedCounts(10_001, TEST_COUNTS), RangeError, "0..10000");
});

Deno.test("same seed gives the same digits, another seed others; a part does not depend on the other's size", () => {
  const a = loadMnist({ seed: 0, train: 2_000, test: 500 });
  const again = loadMnist({ seed: 0, train: 2_000, test: 500 });
  assertEquals(again.train.indices, a.train.indices);
  assertEquals(again.test.indices, a.test.indices);
  assertEquals(again.train.images, a.train.images);
  const other = loadMnist({ seed: 1, train: 2_000, test: 500 });
  assertNotEquals(new Set(other.train.indices), new Set(a.train.indices));
  assertNotEquals(new Set(other.test.indices), new Set(a.test.indices));
  // The stratified counts do not depend on the seed.
  assertEquals(classCounts(other.train), classCounts(a.train));
  assertEquals(loadMnist({ seed: 0, train: 2_000, test: 10_000 }).train.indices, a.train.indices);
  assertEquals(loadMnist({ seed: 0, train: 60_000, test: 500 }).test.indices, a.test.indices);
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

Deno.test("a corrupted or truncated copy of a file is refused, naming the file, the expected and the found value", () => {
  const dir = Deno.makeTempDirSync({ prefix: "mnist-tampered-" });
  try {
    const spec = MNIST_FILES.test.labels;
    const bytes = Deno.readFileSync(join(mnistDataDir(), spec.name));
    const tampered = bytes.slice();
    tampered[8] = (tampered[8] + 1) % 10; // the first label: still a valid digit, a different file
    Deno.writeFileSync(join(dir, spec.name), tampered);
    const error = assertThrows(() => readMnistFile(dir, spec), Error, `${spec.name}: expected md5 ${spec.md5}, found `);
    assert(!error.message.endsWith(spec.md5), error.message);
    // The loader, pointed at the folder with the untouched images beside the tampered labels, refuses it too.
    Deno.copyFileSync(join(mnistDataDir(), MNIST_FILES.test.images.name), join(dir, MNIST_FILES.test.images.name));
    assertThrows(() => mnistFilePart("test", dir), Error, `${spec.name}: expected md5`);
    Deno.writeFileSync(join(dir, spec.name), bytes.subarray(0, bytes.length - 1));
    assertThrows(() => readMnistFile(dir, spec), Error, `${spec.name}: expected 10008 bytes, found 10007`);
    Deno.removeSync(join(dir, spec.name));
    assertThrows(() => readMnistFile(dir, spec), Error, `${spec.name}: cannot read the MNIST file`);
    // The untouched copy passes.
    Deno.writeFileSync(join(dir, spec.name), bytes);
    assertEquals(readMnistFile(dir, spec).length, 10_000);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("parseIdx checks the magic number, the dimensions and the payload size", () => {
  const spec = { ...MNIST_FILES.test.labels, count: 3 };
  const idx = (magic: number, count: number, payload: number) => {
    const bytes = new Uint8Array(8 + payload);
    new DataView(bytes.buffer).setUint32(0, magic);
    new DataView(bytes.buffer).setUint32(4, count);
    return bytes;
  };
  assertEquals(parseIdx(idx(2049, 3, 3), spec).length, 3);
  assertThrows(() => parseIdx(idx(2051, 3, 3), spec), Error, "expected IDX magic number 2049, found 2051");
  assertThrows(() => parseIdx(idx(2049, 4, 3), spec), Error, "expected dimensions 3, found 4");
  assertThrows(() => parseIdx(idx(2049, 3, 2), spec), Error, "expected 11 bytes for 3, found 10");
  assertThrows(() => parseIdx(new Uint8Array(5), spec), Error, "expected an IDX header of 8 bytes, found 5");
  const images = { ...MNIST_FILES.test.images, count: 1 };
  const header = new Uint8Array(16 + 784);
  const view = new DataView(header.buffer);
  [2051, 1, 28, 27].forEach((v, i) => view.setUint32(4 * i, v));
  assertThrows(() => parseIdx(header, images), Error, "expected dimensions 1×28×28, found 1×28×27");
});

Deno.test("bad options throw an error naming the option and its range", () => {
  assertThrows(() => loadMnist({ seed: 0, train: 0 }), RangeError, "train must be an integer in 1..60000");
  assertThrows(() => loadMnist({ seed: 0, train: 60_001 }), RangeError, "train must be an integer in 1..60000");
  assertThrows(() => loadMnist({ seed: 0, train: 2.5 }), RangeError, "train");
  assertThrows(() => loadMnist({ seed: 0, test: -1 }), RangeError, "test must be an integer in 1..10000");
  assertThrows(() => loadMnist({ seed: 0, test: 10_001 }), RangeError, "test must be an integer in 1..10000");
  assertThrows(() => loadMnist({ seed: 0.5 }), RangeError, "seed");
});

Deno.test("checkMnistParts: the official files' sizes and test subsets, as UsageErrors naming the key", () => {
  checkMnistParts({ train_digits: 60_000, test_digits: 10_000 });
  assertThrows(
    () => checkMnistParts({ train_digits: 60_001, test_digits: 10_000 }),
    UsageError,
    "train_digits = 60001: the official MNIST training file has 60000 digits",
  );
  assertThrows(
    () => checkMnistParts({ train_digits: 100, test_digits: 10_001 }),
    UsageError,
    "test_digits = 10001: the official MNIST test file has 10000 digits",
  );
  assertThrows(
    () => checkMnistParts({ train_digits: 100, test_digits: 50, digits: 51 }, ["digits"]),
    UsageError,
    "digits = 51 exceeds test_digits = 50: allowed ≤ 50",
  );
});
