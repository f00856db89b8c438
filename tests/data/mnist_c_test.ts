import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import type { Observations } from "../../lib/data/ground_truth.ts";
import { loadMnist } from "../../lib/data/mnist.ts";
import { cannyEdges, MNIST_C_CORRUPTIONS, mnistC, type MnistCName, mnistCOverlay } from "../../lib/data/mnist_c.ts";

const SIDE = 28, PIXELS = SIDE * SIDE;

/** What make_mnist_c_reference.py computed with numpy/scipy ports of the reference and of skimage 0.15. */
const REFERENCE: {
  images: number[][];
  canny: number[][];
  warps: Record<string, number[][]>;
  overlays: { name: "dotted_line" | "zigzag"; r0: number; r1: number; values: number[] }[];
} = JSON.parse(Deno.readTextFileSync(new URL("./fixtures/reference_mnist_c.json", import.meta.url)));

function batch(images: ArrayLike<number>[]): Observations {
  const values = new Float32Array(images.length * PIXELS);
  images.forEach((image, i) => values.set(Float32Array.from(image), i * PIXELS));
  return { values, n: images.length, shape: [SIDE, SIDE, 1] };
}

function constant(value: number, n = 1): Observations {
  return { values: new Float32Array(n * PIXELS).fill(value), n, shape: [SIDE, SIDE, 1] };
}

function image(obs: Observations, i: number): Float32Array {
  return obs.values.subarray(i * PIXELS, (i + 1) * PIXELS);
}

/** The fixture's three synthetic digits (a ring, a seven, a noisy blob) and three blurred-noise fields. */
const fixtureImages = batch(REFERENCE.images.map((img) => img.map((v) => v / 255)));
const fixtureDigits: Observations = { values: fixtureImages.values.slice(0, 3 * PIXELS), n: 3, shape: [SIDE, SIDE, 1] };

Deno.test("brightness is clip(x + 0.5) and stripe inverts exactly columns 0–6 and 21–27", () => {
  const digits = fixtureDigits;
  const bright = mnistC(digits, "brightness", { seed: 1 });
  const striped = mnistC(digits, "stripe", { seed: 1 });
  for (let p = 0; p < digits.values.length; p++) {
    const x = digits.values[p], col = p % SIDE;
    // The half-grid sum x + 0.5 rounds either way: within half a grey level.
    assertAlmostEquals(bright.values[p], Math.min(1, x + 0.5), 0.5 / 255 + 1e-6);
    const level = Math.round(x * 255);
    assertEquals(striped.values[p], col < 7 || col >= 21 ? Math.fround((255 - level) / 255) : x);
  }
});

Deno.test("translate moves a single lit pixel by ±3 rows and ±3 columns", () => {
  const lit = new Float32Array(PIXELS);
  lit[13 * SIDE + 10] = 1;
  const n = 16;
  const out = mnistC(batch(Array.from({ length: n }, () => lit)), "translate", { seed: 7 });
  const offsets = new Set<string>();
  for (let i = 0; i < n; i++) {
    const moved = [...image(out, i).entries()].filter(([, v]) => v !== 0);
    assertEquals(moved.length, 1);
    const [p, v] = moved[0];
    assertEquals(v, 1);
    const dr = Math.floor(p / SIDE) - 13, dc = (p % SIDE) - 10;
    assert(Math.abs(dr) === 3 && Math.abs(dc) === 3, `offset ${dr}, ${dc}`);
    offsets.add(`${dr},${dc}`);
  }
  assert(offsets.size > 1, "the signs are random");
});

Deno.test("rotate, shear and scale keep a centred symmetric blob's centre of mass at (13.5, 13.5)", () => {
  const blob = Float32Array.from({ length: PIXELS }, (_, p) => {
    const r = Math.floor(p / SIDE) - 13.5, c = (p % SIDE) - 13.5;
    return Math.round(255 * Math.exp(-(r * r / 18 + c * c / 8))) / 255;
  });
  const n = 6;
  for (const name of ["rotate", "shear", "scale"] as const) {
    const out = mnistC(batch(Array.from({ length: n }, () => blob)), name, { seed: 3 });
    for (let i = 0; i < n; i++) {
      let mass = 0, rows = 0, cols = 0;
      image(out, i).forEach((v, p) => {
        mass += v;
        rows += v * Math.floor(p / SIDE);
        cols += v * (p % SIDE);
      });
      assertAlmostEquals(rows / mass, 13.5, 0.05, `${name} row centre`);
      assertAlmostEquals(cols / mass, 13.5, 0.05, `${name} column centre`);
    }
  }
});

Deno.test("the affine warps are within rounding of scipy's port of skimage warp for one of the random signs", () => {
  const n = fixtureDigits.n;
  const candidates: Record<string, string[]> = {
    shear: ["shear-1", "shear+1"],
    rotate: ["rotate-1", "rotate+1"],
    scale: ["scale"],
    translate: ["translate-1-1", "translate-1+1", "translate+1-1", "translate+1+1"],
  };
  for (const [name, cases] of Object.entries(candidates)) {
    const seen = new Set<string>();
    for (let seed = 0; seed < 4; seed++) {
      const out = mnistC(fixtureDigits, name as MnistCName, { seed });
      for (let i = 0; i < n; i++) {
        // Half-grid values (scale samples at half pixels) round either way: half a grey level + the fixture's 0.005.
        const got = image(out, i);
        const match = cases.find((key) =>
          REFERENCE.warps[key][i].every((v, p) => Math.abs(got[p] * 255 - v / 100) <= 0.5 + 0.006)
        );
        assert(match !== undefined, `${name} of digit ${i} (seed ${seed}) matches none of ${cases.join(", ")}`);
        seen.add(match);
      }
    }
    assert(seen.size >= Math.min(cases.length, 2), `${name}: only ${[...seen]} drawn; the signs are random`);
  }
});

Deno.test("shot noise on a constant image has the clipped Poisson(3x)/3 mean and variance", () => {
  const x = 0.2, c = 3, n = 24;
  const out = mnistC(constant(x, n), "shot_noise", { seed: 11 });
  // E and Var of min(K, c)/c for K ~ Poisson(cx), from the probability mass function.
  let mean = 0, second = 0, pmf = Math.exp(-c * x);
  for (let k = 0; k < 40; k++) {
    const v = Math.min(k, c) / c;
    mean += pmf * v;
    second += pmf * v * v;
    pmf *= (c * x) / (k + 1);
  }
  const variance = second - mean * mean, count = out.values.length;
  let sampleMean = 0, sampleSecond = 0;
  for (const v of out.values) {
    sampleMean += v / count;
    sampleSecond += (v * v) / count;
  }
  assertAlmostEquals(sampleMean, mean, 3 * Math.sqrt(variance / count));
  assertAlmostEquals(sampleSecond - sampleMean ** 2, variance, 0.05 * variance);
  for (const v of out.values) assertAlmostEquals(v * 3, Math.round(v * 3), 1e-6, "multiples of 1/3");
});

Deno.test("impulse noise flips 17% of the pixels, half to 1 and half to 0", () => {
  const n = 24, count = n * PIXELS, amount = 0.17;
  const out = mnistC(constant(0.4, n), "impulse_noise", { seed: 5 });
  let salt = 0, pepper = 0;
  for (const v of out.values) {
    if (v === 1) salt++;
    else if (v === 0) pepper++;
    else assertAlmostEquals(v, 0.4, 1e-7);
  }
  assertAlmostEquals((salt + pepper) / count, amount, 3 * Math.sqrt((amount * (1 - amount)) / count));
  assertAlmostEquals(salt / (salt + pepper), 0.5, 3 * Math.sqrt(0.25 / (salt + pepper)));
});

Deno.test("canny marks both columns of a step edge in every interior row and nothing on a constant image", () => {
  const step = Float32Array.from({ length: PIXELS }, (_, p) => (p % SIDE >= 14 ? 1 : 0));
  const edges = cannyEdges(step, SIDE, SIDE);
  for (let p = 0; p < PIXELS; p++) {
    const row = Math.floor(p / SIDE), col = p % SIDE;
    assertEquals(edges[p], row >= 1 && row <= 26 && (col === 13 || col === 14) ? 1 : 0, `pixel ${row}, ${col}`);
  }
  assertEquals(cannyEdges(new Float32Array(PIXELS).fill(0.7), SIDE, SIDE).every((v) => v === 0), true);
  assertEquals(Array.from(edges), REFERENCE.canny[REFERENCE.canny.length - 1]);
});

Deno.test("canny_edges matches the scipy port of skimage.feature.canny on the fixture images", () => {
  const out = mnistC(fixtureImages, "canny_edges", { seed: 0 });
  for (let i = 0; i < fixtureImages.n; i++) {
    assertEquals(Array.from(image(out, i)), REFERENCE.canny[i], `image ${i}`);
  }
});

Deno.test("dotted_line and zigzag patterns match the numpy port of the reference", () => {
  for (const { name, r0, r1, values } of REFERENCE.overlays) {
    const overlay = mnistCOverlay(name, r0, r1);
    for (let p = 0; p < PIXELS; p++) {
      assertAlmostEquals(overlay[p], values[p] / 1e6, 6e-7, `${name} ${r0} ${r1} at ${p}`);
    }
  }
  // On a blank digit the dashes lie only in columns 2–3, 6–7, …, 26.
  const dotted = mnistC(constant(0, 8), "dotted_line", { seed: 2 });
  dotted.values.forEach((v, p) => {
    const col = p % SIDE;
    if (Math.floor(col / 2) % 2 === 0 || col === 27) assertEquals(v, 0);
  });
});

Deno.test("blurs, spatter and fog keep the constant images they must", () => {
  for (const name of ["glass_blur", "motion_blur"] as const) {
    const out = mnistC(constant(0.6, 3), name, { seed: 4 });
    for (const v of out.values) assertAlmostEquals(v, 0.6, 1e-7, name);
  }
  const mud = mnistC(constant(63 / 255, 3), "spatter", { seed: 4 });
  for (const v of mud.values) assertAlmostEquals(v, 63 / 255, 1e-7, "spatter");
  // fog scales by max x / (max x + 3): a blank digit stays blank.
  assertEquals(mnistC(constant(0, 2), "fog", { seed: 4 }).values.every((v) => v === 0), true);
});

Deno.test("every corruption gives the same bytes for any batch split", () => {
  const digits = loadMnist({ seed: 0, train: 1, test: 5 }).test;
  const all: Observations = { values: digits.images, n: digits.n, shape: [SIDE, SIDE, 1] };
  const head: Observations = { values: digits.images.slice(0, 2 * PIXELS), n: 2, shape: [SIDE, SIDE, 1] };
  const tail: Observations = { values: digits.images.slice(2 * PIXELS), n: 3, shape: [SIDE, SIDE, 1] };
  for (const name of MNIST_C_CORRUPTIONS) {
    const whole = mnistC(all, name, { seed: 9 });
    const parts = [mnistC(head, name, { seed: 9 }), mnistC(tail, name, { seed: 9, firstIndex: 2 })];
    assertEquals(whole.values, Float32Array.from([...parts[0].values, ...parts[1].values]), name);
  }
});

Deno.test("every corruption of real digits is finite, in [0, 1], on the 1/255 grid and differs from the digit", () => {
  const digits = loadMnist({ seed: 1, train: 1, test: 4 }).test;
  const input: Observations = { values: digits.images, n: digits.n, shape: [SIDE, SIDE, 1] };
  for (const name of MNIST_C_CORRUPTIONS) {
    const out = mnistC(input, name, { seed: 12 });
    assertEquals(out.n, input.n);
    assertEquals(out.shape, [SIDE, SIDE, 1]);
    for (const v of out.values) {
      assert(Number.isFinite(v) && v >= 0 && v <= 1, `${name}: ${v}`);
      assertAlmostEquals(v * 255, Math.round(v * 255), 1e-4, `${name}: ${v} is off the 1/255 grid`);
    }
    for (let i = 0; i < input.n; i++) {
      assert(image(out, i).some((v, p) => Math.abs(v - input.values[i * PIXELS + p]) > 1e-6), `${name} digit ${i}`);
    }
  }
});

Deno.test("mnistC rejects unknown names, wrong shapes, values outside [0, 1] and bad seeds", () => {
  const ok = constant(0.5);
  assertThrows(() => mnistC(ok, "frost" as MnistCName, { seed: 0 }), UsageError, "canny_edges");
  assertThrows(() => mnistC({ ...ok, shape: [28, 28, 3] }, "stripe", { seed: 0 }), UsageError, "[n, 28, 28, 1]");
  assertThrows(() => mnistC(constant(1.5), "stripe", { seed: 0 }), UsageError, "[0, 1]");
  assertThrows(() => mnistC(constant(NaN), "stripe", { seed: 0 }), UsageError, "[0, 1]");
  assertThrows(() => mnistC(ok, "stripe", { seed: 0.5 }), UsageError, "seed");
  assertThrows(() => mnistC(ok, "stripe", { seed: 0, firstIndex: -1 }), UsageError, "firstIndex");
});
