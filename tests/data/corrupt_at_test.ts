import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import {
  corrupt,
  corruptAt,
  CORRUPTION_NAMES,
  CORRUPTION_TABLES,
  type CorruptionName,
  type CorruptionTableName,
  interpolatedConstants,
  LEVEL_ZERO_CONSTANTS,
  type Severity,
} from "../../lib/data/corruptions.ts";
import type { Observations } from "../../lib/data/ground_truth.ts";
import { loadMnist } from "../../lib/data/mnist.ts";

const TABLES: CorruptionTableName[] = ["cifar", "imagenet"];

function digits(n: number): Observations {
  return { values: loadMnist({ seed: 4, train: n, test: 1 }).train.images, n, shape: [28, 28, 1] };
}

function gray(n: number, value: number): Observations {
  return { values: new Float32Array(n * 784).fill(value), n, shape: [28, 28, 1] };
}

Deno.test("corruptAt: an integer severity gives corrupt's bytes, for every corruption", () => {
  const batch = digits(3);
  for (const name of CORRUPTION_NAMES) {
    for (const severity of [2, 5] as Severity[]) {
      const opts = { seed: 9, firstIndex: 4 };
      assertEquals(corruptAt(batch, name, severity, opts), corrupt(batch, name, severity, opts), `${name} ${severity}`);
    }
  }
  const color: Observations = {
    values: Float32Array.from({ length: 32 * 32 * 3 }, (_, k) => (k * 37 % 256) / 255),
    n: 1,
    shape: [32, 32, 3],
  };
  for (const name of ["glass_blur", "snow", "spatter", "elastic_transform"] as CorruptionName[]) {
    const opts = { seed: 2, table: "imagenet" as const, quantize: false };
    assertEquals(corruptAt(color, name, 3, opts), corrupt(color, name, 3, opts), name);
  }
});

Deno.test("corruptAt: severity 0 returns a copy of the images, unquantized", () => {
  const batch = digits(2);
  for (const name of CORRUPTION_NAMES) {
    const out = corruptAt(batch, name, 0, { seed: 1 });
    assertEquals(out.values, batch.values, name);
    assert(out.values !== batch.values, `${name}: the result shares the input's buffer`);
    assertEquals(out.shape, batch.shape);
    assert(out.shape !== batch.shape);
  }
});

Deno.test("interpolatedConstants: table rows at integers, linear between, level 0 as the identity's", () => {
  for (const table of TABLES) {
    const sigmas = CORRUPTION_TABLES[table].gaussian_noise;
    assertAlmostEquals(
      interpolatedConstants("gaussian_noise", 2.5, table) as number,
      (sigmas[1] + sigmas[2]) / 2,
      1e-16,
    );
    assertAlmostEquals(interpolatedConstants("gaussian_noise", 0.25, table) as number, sigmas[0] / 4, 1e-16);
    assertAlmostEquals(
      interpolatedConstants("gaussian_noise", 4.75, table) as number,
      (sigmas[3] + 3 * sigmas[4]) / 4,
      1e-16,
    );
    for (const name of CORRUPTION_NAMES) {
      for (let level = 1; level <= 5; level++) {
        assertEquals(interpolatedConstants(name, level, table), CORRUPTION_TABLES[table][name][level - 1]);
      }
    }
    // Strength constants at level 0 are the identity's: contrast factor 1, added brightness 0, frost weight 0.
    assertEquals(LEVEL_ZERO_CONSTANTS[table].contrast, 1);
    assertEquals(LEVEL_ZERO_CONSTANTS[table].brightness, 0);
    assertEquals(LEVEL_ZERO_CONSTANTS[table].frost, [1, 0]);
    assertAlmostEquals(
      interpolatedConstants("contrast", 0.5, table) as number,
      (1 + CORRUPTION_TABLES[table].contrast[0]) / 2,
      1e-16,
    );
  }
  // Tuples interpolate element-wise (CCC's fog row at level 0 is (0, 2)).
  const fog = interpolatedConstants("fog", 0.5, "imagenet") as number[];
  assertAlmostEquals(fog[0], 0.75, 1e-16);
  assertAlmostEquals(fog[1], 2, 1e-16);
  // shot noise interpolates 1/c: at 2.5 (cifar c 250 and 100) c = 1/((1/250 + 1/100)/2).
  assertAlmostEquals(interpolatedConstants("shot_noise", 2.5, "cifar") as number, 1 / ((1 / 250 + 1 / 100) / 2), 1e-9);
  assertAlmostEquals(interpolatedConstants("shot_noise", 0.5, "imagenet") as number, 120, 1e-9);
  // Integer-valued constants round half to even, as Python's round().
  assertEquals(interpolatedConstants("jpeg_compression", 2.5, "imagenet"), 16); // 16.5
  assertEquals(interpolatedConstants("jpeg_compression", 0.5, "imagenet"), 55);
  assertEquals(interpolatedConstants("jpeg_compression", 0.5, "cifar"), 90);
  const glass = interpolatedConstants("glass_blur", 3.5, "cifar") as number[]; // (0.4, 1, 1) → (0.25, 1, 2)
  assertAlmostEquals(glass[0], 0.325, 1e-16);
  assertEquals(glass.slice(1), [1, 2]); // iterations 1.5 → 2
  assertEquals((interpolatedConstants("glass_blur", 0.5, "imagenet") as number[]).slice(1), [1, 1]); // δ 0.5 → 0 → 1
  assertEquals((interpolatedConstants("motion_blur", 4.5, "cifar") as number[])[0], 8); // 8.5
  assertEquals((interpolatedConstants("spatter", 3.5, "cifar") as number[])[5], 0); // water up to 3.5
  assertEquals((interpolatedConstants("spatter", 3.6, "cifar") as number[])[5], 1); // then mud
  assertEquals((interpolatedConstants("defocus_blur", 4.75, "imagenet") as number[])[0], 10); // 9.5 → 10
});

Deno.test("corruptAt: the noise at a real severity has the interpolated σ; contrast the interpolated factor", () => {
  const batch = gray(4, 0.5);
  for (const severity of [0.5, 2.5, 4.5]) {
    const sigma = interpolatedConstants("gaussian_noise", severity, "cifar") as number;
    const out = corruptAt(batch, "gaussian_noise", severity, { seed: 3, quantize: false }).values;
    let sum = 0, squares = 0;
    for (const v of out) {
      sum += v - 0.5;
      squares += (v - 0.5) ** 2;
    }
    const sd = Math.sqrt(squares / out.length - (sum / out.length) ** 2);
    // 3,136 draws: the sample sd is within 4 % of σ (about 3 standard errors); far from clipping at 0.5 ± 0.1.
    assertAlmostEquals(sd, sigma, 0.04 * sigma, `severity ${severity}`);
  }
  const images = digits(2);
  const factor = interpolatedConstants("contrast", 2.5, "cifar") as number;
  const out = corruptAt(images, "contrast", 2.5, { seed: 0, quantize: false }).values;
  for (let i = 0; i < 2; i++) {
    const image = images.values.subarray(i * 784, (i + 1) * 784);
    const mean = image.reduce((a, b) => a + b, 0) / 784;
    for (let k = 0; k < 784; k++) assertAlmostEquals(out[i * 784 + k], (image[k] - mean) * factor + mean, 1e-6);
  }
});

Deno.test("corruptAt: every corruption gives finite values in [0, 1] at real severities, independent of batching", () => {
  const batch = digits(4);
  for (const name of CORRUPTION_NAMES) {
    for (const table of TABLES) {
      for (const severity of [0.05, 0.5, 2.5, 3.5, 3.6, 4.95]) {
        const out = corruptAt(batch, name, severity, { seed: 7, table }).values;
        assert(out.every((v) => v >= 0 && v <= 1), `${name} ${table} ${severity}`);
      }
    }
    const whole = corruptAt(batch, name, 1.7, { seed: 7 }).values;
    const head: Observations = { values: batch.values.subarray(0, 2 * 784), n: 2, shape: [28, 28, 1] };
    const tail: Observations = { values: batch.values.subarray(2 * 784), n: 2, shape: [28, 28, 1] };
    const parts = [
      ...corruptAt(head, name, 1.7, { seed: 7 }).values,
      ...corruptAt(tail, name, 1.7, { seed: 7, firstIndex: 2 }).values,
    ];
    assertEquals(Array.from(whole), parts, name);
  }
});

Deno.test("corruptAt and interpolatedConstants: refuse severities outside [0, 5], NaN, unknown names and tables", () => {
  const batch = digits(1);
  for (const severity of [-0.1, 5.01, NaN, Infinity, -Infinity]) {
    assertThrows(() => corruptAt(batch, "gaussian_noise", severity, { seed: 0 }), UsageError, "[0, 5]");
    assertThrows(() => interpolatedConstants("gaussian_noise", severity, "cifar"), UsageError, "[0, 5]");
  }
  assertThrows(() => corruptAt(batch, "gaussian_noise", "2" as unknown as number, { seed: 0 }), UsageError);
  assertThrows(() => corruptAt(batch, "blur" as CorruptionName, 1, { seed: 0 }), UsageError, "unknown corruption");
  assertThrows(() => corruptAt(batch, "blur" as CorruptionName, 0, { seed: 0 }), UsageError, "unknown corruption");
  assertThrows(
    () => corruptAt(batch, "contrast", 1.5, { seed: 0, table: "svhn" as CorruptionTableName }),
    UsageError,
    "table",
  );
  assertThrows(() => interpolatedConstants("contrast", 1.5, "svhn" as CorruptionTableName), UsageError, "table");
  assertThrows(() => corruptAt(gray(1, 1.5), "contrast", 1.5, { seed: 0 }), UsageError, "[0, 1]");
  assertThrows(() => corruptAt(batch, "contrast", 1.5, { seed: 0.5 }), UsageError, "seed");
  // corrupt itself still takes integer severities only.
  assertThrows(() => corrupt(batch, "contrast", 2.5 as Severity, { seed: 0 }), UsageError, "1, 2, 3, 4 or 5");
});
