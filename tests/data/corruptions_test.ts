import { assert, assertAlmostEquals, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  COMMON_CORRUPTIONS,
  corrupt,
  CORRUPTION_NAMES,
  CORRUPTION_TABLES,
  type CorruptionName,
  type CorruptionTableName,
  defaultTable,
  HOLDOUT_CORRUPTIONS,
  MNIST_C_CORRUPTIONS,
  mnistC,
  PROCEDURAL_SUBSTITUTES,
  type Severity,
} from "../../lib/data/corruptions.ts";
import type { Observations } from "../../lib/data/ground_truth.ts";
import { frostLayer } from "../../lib/data/image_corruptions.ts";

const SEVERITIES: Severity[] = [1, 2, 3, 4, 5];

function randomImages(n: number, h: number, w: number, c: number, seed: number): Observations {
  const rng = new Rng(seed);
  // On the 1/255 grid, like decoded uint8 images.
  const values = Float32Array.from({ length: n * h * w * c }, () => rng.int(256) / 255);
  return { values, n, shape: [h, w, c] };
}

function constantImages(n: number, h: number, w: number, c: number, value: number): Observations {
  return { values: new Float32Array(n * h * w * c).fill(value), n, shape: [h, w, c] };
}

function meanAndVariance(values: ArrayLike<number>): { mean: number; variance: number } {
  let mean = 0;
  for (let k = 0; k < values.length; k++) mean += values[k] / values.length;
  let variance = 0;
  for (let k = 0; k < values.length; k++) variance += (values[k] - mean) ** 2 / (values.length - 1);
  return { mean, variance };
}

Deno.test("the suite: 15 common corruptions in imagecorruptions order, 4 held out, frost flagged as procedural", () => {
  assertEquals(COMMON_CORRUPTIONS.length, 15);
  assertEquals(COMMON_CORRUPTIONS[0], "gaussian_noise");
  assertEquals(COMMON_CORRUPTIONS[14], "jpeg_compression");
  assertEquals([...HOLDOUT_CORRUPTIONS], ["speckle_noise", "gaussian_blur", "spatter", "saturate"]);
  assertEquals(PROCEDURAL_SUBSTITUTES, ["frost"]);
  // The σ rows the issue quotes from the two files.
  assertEquals([...CORRUPTION_TABLES.imagenet.gaussian_noise], [.08, .12, .18, .26, .38]);
  assertEquals([...CORRUPTION_TABLES.cifar.gaussian_noise], [.04, .06, .08, .09, .10]);
  for (const table of ["imagenet", "cifar"] as const) {
    for (const name of CORRUPTION_NAMES) assertEquals(CORRUPTION_TABLES[table][name].length, 5, `${table} ${name}`);
  }
  assertEquals(defaultTable(28, 28), "cifar");
  assertEquals(defaultTable(32, 63), "cifar");
  assertEquals(defaultTable(64, 64), "imagenet");
});

Deno.test("every corruption and severity gives finite values in [0, 1] on the 1/255 grid, gray and colour, both tables", () => {
  const shapes: [number, number, number][] = [[28, 28, 1], [32, 32, 3]];
  for (const [h, w, c] of shapes) {
    const images = randomImages(1, h, w, c, 11);
    for (const table of ["cifar", "imagenet"] as CorruptionTableName[]) {
      for (const name of CORRUPTION_NAMES) {
        for (const severity of SEVERITIES) {
          const out = corrupt(images, name, severity, { seed: 3, table });
          assertEquals(out.shape, [h, w, c]);
          assertEquals(out.values.length, h * w * c);
          for (const v of out.values) {
            assert(Number.isFinite(v) && v >= 0 && v <= 1, `${name} ${severity} ${table} ${h}×${w}×${c}: ${v}`);
            assertAlmostEquals(v * 255, Math.round(v * 255), 1e-3);
          }
        }
      }
    }
  }
});

Deno.test("the same bytes in any batch split, and the seed decides the draw", () => {
  const images = randomImages(4, 28, 28, 1, 12);
  const slice = (from: number, to: number): Observations => ({
    values: images.values.slice(from * 784, to * 784),
    n: to - from,
    shape: images.shape,
  });
  for (const name of CORRUPTION_NAMES) {
    const whole = corrupt(images, name, 3, { seed: 9 });
    const first = corrupt(slice(0, 2), name, 3, { seed: 9 });
    const second = corrupt(slice(2, 4), name, 3, { seed: 9, firstIndex: 2 });
    assertEquals(Array.from(whole.values), [...first.values, ...second.values], name);
  }
  const a = corrupt(images, "gaussian_noise", 3, { seed: 1 }), b = corrupt(images, "gaussian_noise", 3, { seed: 2 });
  assertNotEquals(Array.from(a.values), Array.from(b.values));
});

Deno.test("Gaussian noise on a constant 0.5: mean 0.5 and variance σ² (3 standard errors)", () => {
  const images = constantImages(20, 32, 32, 3, 0.5);
  const cases: [CorruptionTableName, Severity][] = [["cifar", 1], ["cifar", 3], ["cifar", 5], ["imagenet", 1]];
  for (const [table, severity] of cases) {
    const sigma = CORRUPTION_TABLES[table].gaussian_noise[severity - 1]; // ≥ 3.9σ from the clip: no visible bias
    const out = corrupt(images, "gaussian_noise", severity, { seed: 4, table, quantize: false });
    const { mean, variance } = meanAndVariance(out.values), n = out.values.length;
    assertAlmostEquals(mean, 0.5, 3 * sigma / Math.sqrt(n), `mean, ${table} ${severity}`);
    assertAlmostEquals(variance, sigma * sigma, 3 * sigma * sigma * Math.sqrt(2 / (n - 1)), `variance ${table}`);
  }
});

Deno.test("shot noise on a constant x: mean x and variance x/c (3 standard errors)", () => {
  const x = 0.4;
  const images = constantImages(20, 32, 32, 3, x);
  const cases: [CorruptionTableName, Severity][] = [["cifar", 1], ["cifar", 5], ["imagenet", 1]];
  for (const [table, severity] of cases) {
    const c = CORRUPTION_TABLES[table].shot_noise[severity - 1];
    const out = corrupt(images, "shot_noise", severity, { seed: 5, table, quantize: false });
    const { mean, variance } = meanAndVariance(out.values), n = out.values.length;
    const lambda = x * c; // counts: variance λ, fourth central moment λ + 3λ²
    assertAlmostEquals(mean, x, 3 * Math.sqrt(x / c / n), `mean, ${table} ${severity}`);
    const varianceError = Math.sqrt((lambda + 3 * lambda * lambda - lambda * lambda * (n - 3) / (n - 1)) / n) / c / c;
    assertAlmostEquals(variance, x / c, 3 * varianceError, `variance, ${table} ${severity}`);
  }
});

Deno.test("impulse noise changes a fraction `amount` of the values, half to 1 and half to 0", () => {
  const images = constantImages(20, 32, 32, 3, 0.5);
  for (const severity of [1, 5] as Severity[]) {
    const amount = CORRUPTION_TABLES.cifar.impulse_noise[severity - 1];
    const out = corrupt(images, "impulse_noise", severity, { seed: 6 });
    const n = out.values.length;
    let salt = 0, pepper = 0;
    for (const v of out.values) {
      if (v === 1) salt++;
      else if (v === 0) pepper++;
      else assertEquals(v, Math.fround(Math.round(0.5 * 255) / 255));
    }
    assertAlmostEquals((salt + pepper) / n, amount, 3 * Math.sqrt(amount * (1 - amount) / n));
    assertAlmostEquals(salt / n, amount / 2, 3 * Math.sqrt(amount / 2 * (1 - amount / 2) / n));
  }
});

Deno.test("speckle noise on a constant x: mean x and standard deviation x·σ", () => {
  const x = 0.5, images = constantImages(20, 32, 32, 3, x);
  const sigma = CORRUPTION_TABLES.cifar.speckle_noise[4];
  const { mean, variance } = meanAndVariance(corrupt(images, "speckle_noise", 5, { seed: 7, quantize: false }).values);
  const n = images.values.length, sd = x * sigma;
  assertAlmostEquals(mean, x, 3 * sd / Math.sqrt(n));
  assertAlmostEquals(variance, sd * sd, 3 * sd * sd * Math.sqrt(2 / (n - 1)));
});

Deno.test("contrast: (x − channel mean)·c + channel mean", () => {
  const images = randomImages(2, 32, 32, 3, 13);
  for (const table of ["cifar", "imagenet"] as CorruptionTableName[]) {
    const factor = CORRUPTION_TABLES[table].contrast[2];
    const out = corrupt(images, "contrast", 3, { seed: 0, table, quantize: false });
    for (let i = 0; i < 2; i++) {
      for (let ch = 0; ch < 3; ch++) {
        let mean = 0;
        for (let p = 0; p < 1024; p++) mean += images.values[(i * 1024 + p) * 3 + ch] / 1024;
        for (let p = 0; p < 1024; p++) {
          const k = (i * 1024 + p) * 3 + ch;
          assertAlmostEquals(out.values[k], (images.values[k] - mean) * factor + mean, 1e-6);
        }
      }
    }
  }
});

Deno.test("brightness: gray x + c clipped; colour scaled by min(1, v + c)/v, v the channel maximum", () => {
  const gray = randomImages(1, 28, 28, 1, 14);
  const shift = CORRUPTION_TABLES.cifar.brightness[4];
  const grayOut = corrupt(gray, "brightness", 5, { seed: 0, quantize: false });
  for (let k = 0; k < gray.values.length; k++) {
    assertAlmostEquals(grayOut.values[k], Math.min(1, gray.values[k] + shift), 1e-6);
  }
  const colour = randomImages(1, 32, 32, 3, 15);
  const out = corrupt(colour, "brightness", 5, { seed: 0, quantize: false });
  for (let p = 0; p < 1024; p++) {
    const rgb = colour.values.slice(3 * p, 3 * p + 3), v = Math.max(...rgb);
    for (let ch = 0; ch < 3; ch++) {
      const expected = v === 0 ? Math.min(1, shift) : rgb[ch] * Math.min(1, v + shift) / v;
      assertAlmostEquals(out.values[3 * p + ch], expected, 1e-6);
    }
  }
});

Deno.test("saturate leaves gray pixels as they are (imagecorruptions' grayscale branch) and keeps the value", () => {
  const gray = randomImages(1, 28, 28, 1, 16);
  assertEquals(Array.from(corrupt(gray, "saturate", 5, { seed: 0 }).values), Array.from(gray.values));
  const colour = randomImages(1, 32, 32, 3, 17);
  const out = corrupt(colour, "saturate", 1, { seed: 0, quantize: false });
  for (let p = 0; p < 1024; p++) {
    const before = Math.max(...colour.values.slice(3 * p, 3 * p + 3));
    assertAlmostEquals(Math.max(...out.values.slice(3 * p, 3 * p + 3)), before, 1e-6);
  }
});

Deno.test("blurs, pixelate and elastic keep constant images", () => {
  const names: CorruptionName[] = [
    "gaussian_blur",
    "glass_blur",
    "defocus_blur",
    "motion_blur",
    "zoom_blur",
    "pixelate",
    "elastic_transform",
  ];
  const value = 153 / 255;
  for (const [h, w, c] of [[28, 28, 1], [32, 32, 3]]) {
    const images = constantImages(1, h, w, c, value);
    for (const name of names) {
      for (const severity of SEVERITIES) {
        const out = corrupt(images, name, severity, { seed: 2, table: "cifar" });
        for (const v of out.values) assertAlmostEquals(v, value, 1e-6, `${name} ${severity} ${h}×${w}×${c}`);
      }
    }
  }
});

Deno.test("fog never lifts the image above its maximum; frost's layer lies in [0, 1]", () => {
  const images = randomImages(3, 32, 32, 3, 18);
  for (const severity of SEVERITIES) {
    const out = corrupt(images, "fog", severity, { seed: 3, quantize: false });
    for (let i = 0; i < 3; i++) {
      const max = Math.max(...images.values.slice(i * 3072, (i + 1) * 3072));
      assert(Math.max(...out.values.slice(i * 3072, (i + 1) * 3072)) <= max + 1e-6);
    }
  }
  const layer = frostLayer(28, 30, new Rng(1));
  assertEquals(layer.length, 28 * 30 * 3);
  for (const v of layer) assert(v >= 0 && v <= 1);
});

Deno.test("bad input: unknown name, severity outside 1–5, channels, values outside [0, 1] or NaN", () => {
  const images = randomImages(1, 28, 28, 1, 19);
  assertThrows(() => corrupt(images, "fogg" as CorruptionName, 3, { seed: 0 }), UsageError, "valid: gaussian_noise");
  assertThrows(() => corrupt(images, "fog", 6 as Severity, { seed: 0 }), UsageError, "severity");
  assertThrows(() => corrupt(images, "fog", 0 as Severity, { seed: 0 }), UsageError, "severity");
  assertThrows(() => corrupt({ ...images, shape: [28, 14, 2] }, "fog", 1, { seed: 0 }), UsageError, "channels");
  const bright = { ...images, values: images.values.map((v, k) => (k === 5 ? 1.5 : v)) };
  assertThrows(() => corrupt(bright, "fog", 1, { seed: 0 }), UsageError, "[0, 1]");
  const nan = { ...images, values: images.values.map((v, k) => (k === 5 ? NaN : v)) };
  assertThrows(() => corrupt(nan, "fog", 1, { seed: 0 }), UsageError, "[0, 1]");
});

/** FNV-1a (32-bit) of a Float32Array's bytes, as 8 hex digits. */
function bytesHash(values: Float32Array): string {
  const bytes = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/**
 * Output hashes recorded before the corruptions were made faster, which must not change any value: MNIST-C of four
 * fixture digits (seed 5), and per common corruption at severity 3 (seed 5) the digits with table cifar (quantized,
 * then not), imagenet (same), and two random 32×32 colour images with table cifar (same).
 */
const PINNED = {
  mnistC: {
    shot_noise: "082c918b",
    impulse_noise: "12f69912",
    glass_blur: "33f5d328",
    motion_blur: "52c3d906",
    shear: "47b2f462",
    scale: "5a6e6a11",
    rotate: "65664925",
    brightness: "c694b398",
    translate: "f2bc7007",
    stripe: "3842ace1",
    fog: "2125f0a3",
    spatter: "37352239",
    dotted_line: "ebafb945",
    zigzag: "75ef66a2",
    canny_edges: "3234e318",
  },
  common: {
    gaussian_noise: ["a2807ce5", "addf55cd", "9b3102fa", "8583782e", "1705579a", "a071752d"],
    shot_noise: ["8c5c6812", "6bfac7bd", "d90c43b9", "5d9fc7f1", "2cd6bdfd", "1b780ffb"],
    impulse_noise: ["f42ab0d8", "f42ab0d8", "1a86b7f7", "1a86b7f7", "926b4d18", "926b4d18"],
    defocus_blur: ["6a5b54d0", "d524c01f", "ee2c6217", "2d4f3864", "47005838", "9cac7e5e"],
    glass_blur: ["c1f2bd94", "99bb47a4", "0e59e406", "93d13f12", "a8f2ec4c", "e6a53325"],
    motion_blur: ["ba707f4f", "4c32a322", "eaf617d7", "122c861d", "038880bf", "307f77a0"],
    zoom_blur: ["26fbc1a2", "296f6ecb", "0cd56f33", "071b3b96", "ed5d4333", "f1dca8a9"],
    snow: ["4933059e", "05bca966", "e7411431", "987bfbcd", "4e26c273", "480dbc02"],
    frost: ["d6676a9f", "7255fbe2", "50b1901b", "c59998f3", "98324035", "ee764d06"],
    fog: ["2811d0ae", "db4283f1", "50b4aa16", "b11aad80", "4d1bc467", "8b3fb75c"],
    brightness: ["64d63975", "c271f29e", "7b1a233d", "cc44d39f", "917d3cd8", "93916106"],
    contrast: ["16dad036", "7b98a211", "8bdab111", "a8b9997d", "1fa7f9d6", "7d956a20"],
    elastic_transform: ["92b74107", "1d579c7e", "ebf40dd5", "e6a39cee", "a69a9b46", "14745cbe"],
    pixelate: ["b826f251", "f8989ca5", "3f8e4e77", "19a78b59", "8725f53d", "9d441c91"],
    jpeg_compression: ["8b9bac9d", "8b9bac9d", "208478a6", "208478a6", "e1c40f6b", "e1c40f6b"],
    speckle_noise: ["549e3c82", "d77116d4", "145dbc7b", "8d01d9eb", "204c2ae4", "358e5bf1"],
    gaussian_blur: ["5c9c2f88", "493dcbdf", "0d758b3b", "d61e0717", "28658d95", "7923e558"],
    spatter: ["16246726", "26aa0cc5", "49eea54d", "31c21fdc", "14ce2f80", "d23298d1"],
    saturate: ["74073485", "74073485", "74073485", "74073485", "681e1012", "c0c12720"],
  },
} as const;

Deno.test("pinned output bytes of every corruption, both suites, gray and colour, quantized or not", () => {
  const fixture: { images: number[][] } = JSON.parse(
    Deno.readTextFileSync(new URL("./fixtures/reference_mnist_c.json", import.meta.url)),
  );
  const digits: Observations = {
    values: Float32Array.from(fixture.images.slice(0, 4).flat(), (v) => v / 255),
    n: 4,
    shape: [28, 28, 1],
  };
  const colour = randomImages(2, 32, 32, 3, 3);
  for (const name of MNIST_C_CORRUPTIONS) {
    assertEquals(bytesHash(mnistC(digits, name, { seed: 5 }).values), PINNED.mnistC[name], `mnist_c ${name}`);
  }
  for (const name of CORRUPTION_NAMES) {
    const hashes = [];
    for (const [images, table] of [[digits, "cifar"], [digits, "imagenet"], [colour, "cifar"]] as const) {
      for (const quantize of [true, false]) {
        hashes.push(bytesHash(corrupt(images, name, 3, { seed: 5, table, quantize }).values));
      }
    }
    assertEquals(hashes, [...PINNED.common[name]], name);
  }
});
