import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  calibrate,
  type CccCalibration,
  CccStream,
  cccStream,
  type CccStreamOptions,
  checkCorruptions,
  checkSpeed,
  checkTarget,
  type CorruptAtFn,
  findPath,
  orderedPairs,
  pairKey,
  severityLevels,
} from "../../lib/data/ccc.ts";
import type { CorruptionName } from "../../lib/data/corruptions.ts";

interface PathCase {
  matrix: string;
  target: number;
  path: [number, number][];
  mean: number;
}
const reference = JSON.parse(
  Deno.readTextFileSync(new URL("./fixtures/reference_ccc_paths.json", import.meta.url)),
) as { matrices: Record<string, number[][]>; cases: PathCase[] };

Deno.test("findPath gives generate.py's find_path on fixed 21×21 matrices (smooth, rounded, uniform, constant)", () => {
  assertEquals(reference.cases.length, 16);
  for (const { matrix, target, path, mean } of reference.cases) {
    const found = findPath(reference.matrices[matrix], target, 0.25);
    assertEquals(found.map((p) => [p.s1 / 0.25, p.s2 / 0.25]), path, `${matrix}, target ${target}`);
    const accuracies = found.map((p) => p.accuracy);
    assertEquals(accuracies, path.map(([i, j]) => reference.matrices[matrix][i][j]));
    assertAlmostEquals(accuracies.reduce((a, b) => a + b, 0) / accuracies.length, mean, 1e-12);
  }
});

Deno.test("findPath: from (s1 > 0, 0) to s1 = 0, each step lowers s1 or raises s2 by one step", () => {
  const rng = new Rng(3);
  const grid = Array.from({ length: 11 }, () => Array.from({ length: 11 }, () => rng.uniform()));
  for (const target of [0.1, 0.3, 0.5, 0.9]) {
    const path = findPath(grid, target, 0.5);
    assert(path[0].s1 > 0 && path[0].s2 === 0);
    assertEquals(path.at(-1)!.s1, 0);
    for (let k = 1; k < path.length; k++) {
      const [ds1, ds2] = [path[k].s1 - path[k - 1].s1, path[k].s2 - path[k - 1].s2];
      assert((ds1 === -0.5 && ds2 === 0) || (ds1 === 0 && ds2 === 0.5), `step ${k}: ${ds1}, ${ds2}`);
    }
  }
});

Deno.test("findPath: a hand-checked 3×3 grid (step 2.5)", () => {
  // Rows s1 = 0, 2.5, 5; columns s2 = 0, 2.5, 5. From (1, 0): down gives (0.6 + 0.9)/2 = 0.75, right (1, 1) → …
  const grid = [
    [0.9, 0.6, 0.2],
    [0.6, 0.4, 0.1],
    [0.3, 0.2, 0.05],
  ];
  // (1, 2): only down is in the grid: path (1,2),(0,2), mean 0.15. (1, 1): down (0.4 + 0.6)/2 = 0.5, right
  // (0.4 + 0.3)/3 = 0.233: for target 0.2 right wins. (1, 0): down 0.75, right (0.6 + 0.7)/4 = 0.325 → right.
  // (2, 2): down (0.05 + 0.3)/3 = 0.117; right is past the grid → down. (2, 1): down (0.2 + 0.7)/4 = 0.225,
  // right (0.2 + 0.35)/4 = 0.1375 → |0.025| < |0.0625|: down. (2, 0): down (0.3 + 1.3)/5 = 0.32, right
  // (0.3 + 0.9)/5 = 0.24 → right. Starts: i = 1 mean 0.325, i = 2 mean 0.24 → start 2.
  const path = findPath(grid, 0.2, 2.5);
  assertEquals(path.map((p) => [p.s1, p.s2]), [[5, 0], [5, 2.5], [2.5, 2.5], [2.5, 5], [0, 5]]);
});

Deno.test("severityLevels: 0, step, …, 5 for steps that divide 5, else a UsageError", () => {
  assertEquals(severityLevels(0.5), [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5]);
  assertEquals(severityLevels(0.25).length, 21);
  assertEquals(severityLevels(5), [0, 5]);
  assertEquals(severityLevels(5 / 3).at(-1), 5);
  for (const bad of [0, -0.5, 0.3, 2, 7, NaN, Infinity]) {
    assertThrows(() => severityLevels(bad), UsageError, "divide 5");
  }
});

Deno.test("bad input: target ∉ (0, 1), speed < 1, unknown or too few corruptions, grid of the wrong size", () => {
  for (const bad of [0, 1, -0.1, 1.5, NaN]) assertThrows(() => checkTarget(bad), UsageError, "(0, 1)");
  for (const bad of [0, -1, 1.5]) assertThrows(() => checkSpeed(bad), UsageError, "speed");
  const unknown = assertThrows(() => checkCorruptions(["gaussian_noise", "fogg"]), UsageError, '"fogg"');
  assert(unknown.message.includes("gaussian_noise, shot_noise"), "the message lists the valid names");
  assertThrows(() => checkCorruptions(["contrast"]), UsageError, "at least 2");
  assertThrows(() => checkCorruptions(["contrast", "contrast"]), UsageError, "repeat");
  const grid = [[1, 1, 1], [1, 1, 1], [1, 1, 1]];
  assertThrows(() => findPath(grid, 0.5, 0.5), UsageError, "11×11");
  assertThrows(() => findPath(grid, 1, 2.5), UsageError, "(0, 1)");
  assertThrows(() => findPath([[1, 1, 1], [1, NaN, 1], [1, 1, 1]], 0.5, 2.5), UsageError, "finite");
});

/** Images whose every pixel is `value`, one per entry, 8×8. */
function flatDigits(values: number[]): { images: Float32Array; labels: Int32Array; n: number } {
  const images = new Float32Array(values.length * 64);
  values.forEach((v, k) => images.fill(v, k * 64, (k + 1) * 64));
  return { images, labels: Int32Array.from(values, (_, k) => k % 10), n: values.length };
}

/**
 * Two non-commuting stand-ins, exact in closed form: "contrast" scales by (1 − s/10), "brightness" adds s/10 and
 * clips at 1. Every call is recorded.
 */
function fakeCorruptions(calls: { name: string; severity: number; firstIndex: number; n: number; seed: number }[]) {
  const fake: CorruptAtFn = (images, name, severity, opts) => {
    calls.push({ name, severity, firstIndex: opts.firstIndex ?? 0, n: images.n, seed: opts.seed });
    const map = name === "contrast"
      ? (v: number) => v * (1 - severity / 10)
      : (v: number) => Math.min(1, v + severity / 10);
    return { ...images, values: images.values.map(map) };
  };
  return fake;
}

Deno.test("calibrate: per ordered pair, c1 at s1 then c2 at s2 (severity 0 skipped), accuracy per cell", async () => {
  const values = Array.from({ length: 20 }, (_, k) => (k + 0.5) / 20);
  const digits = flatDigits(values);
  const calls: { name: string; severity: number; firstIndex: number; n: number; seed: number }[] = [];
  // The classifier is right on an image exactly when its (constant) pixel value lies in (0.3, 0.8).
  const classify = (images: Float32Array, n: number) =>
    Int32Array.from({ length: n }, (_, t) => {
      const v = images[t * 64];
      return v > 0.3 && v < 0.8 ? digits.labels[t % digits.n] : (digits.labels[t % digits.n] + 1) % 10;
    });
  const calibration = await calibrate(classify, digits, {
    corruptions: ["contrast", "brightness"],
    step: 2.5,
    seed: 7,
    corrupt: fakeCorruptions(calls),
  });
  assertEquals(calibration.severities, [0, 2.5, 5]);
  assertEquals(Object.keys(calibration.grids).sort(), ["brightness/contrast", "contrast/brightness"]);
  const f = (name: string, s: number) => (v: number) =>
    name === "contrast" ? Math.fround(v * (1 - s / 10)) : Math.fround(Math.min(1, v + s / 10));
  for (const [c1, c2] of orderedPairs(["contrast", "brightness"])) {
    const grid = calibration.grids[pairKey(c1, c2)];
    calibration.severities.forEach((s1, i) =>
      calibration.severities.forEach((s2, j) => {
        const expected = values.filter((v0) => {
          let v = Math.fround(v0);
          if (s1 > 0) v = f(c1, s1)(v);
          if (s2 > 0) v = f(c2, s2)(v);
          return v > 0.3 && v < 0.8;
        }).length / values.length;
        assertEquals(grid[i][j], expected, `${c1} ${s1} → ${c2} ${s2}`);
      })
    );
  }
  assert(calls.every((c) => c.severity > 0), "severity 0 is the identity, not a call");
  // c1 at s1 once per (c1, s1); c2 at s2 once per (c1, c2, s1, s2 > 0); one seed per stage.
  assertEquals(calls.length, 2 * 2 + 2 * 3 * 2);
  assertEquals(new Set(calls.map((c) => c.seed)).size, 2);
});

Deno.test("calibrate with corruptAt: clean cell = clean accuracy, row s1 = 0 is c2 alone whatever c1", async () => {
  const rng = new Rng(11);
  const n = 12;
  const digits = {
    images: Float32Array.from({ length: n * 28 * 28 }, () => rng.uniform()),
    labels: Int32Array.from({ length: n }, (_, k) => k % 10),
    n,
  };
  // A fixed nonlinear readout: class = ⌊10 · frac(Σ pixels · 0.37)⌋.
  const classify = (images: Float32Array, count: number) =>
    Int32Array.from({ length: count }, (_, t) => {
      let sum = 0;
      for (let p = 0; p < 784; p++) sum += images[t * 784 + p];
      return Math.floor(10 * ((sum * 0.37) % 1));
    });
  const corruptions: CorruptionName[] = ["gaussian_noise", "contrast", "impulse_noise"];
  const calibration = await calibrate(classify, digits, { corruptions, step: 2.5, seed: 5 });
  const clean = classify(digits.images, n).filter((c, k) => c === digits.labels[k]).length / n;
  for (const key of Object.keys(calibration.grids)) assertEquals(calibration.grids[key][0][0], clean);
  for (const c2 of corruptions) {
    const rows = corruptions.filter((c1) => c1 !== c2).map((c1) => calibration.grids[pairKey(c1, c2)][0]);
    assertEquals(rows[0], rows[1]);
  }
  for (const grid of Object.values(calibration.grids)) {
    for (const v of grid.flat()) assert(v >= 0 && v <= 1 && Math.abs(v * n - Math.round(v * n)) < 1e-9);
  }
});

/** A calibration of two or three stand-in corruptions whose grids fall with both severities. */
function syntheticCalibration(corruptions: CorruptionName[], step = 1): CccCalibration {
  const severities = severityLevels(step);
  const grids: Record<string, number[][]> = {};
  orderedPairs(corruptions).forEach(([c1, c2], k) => {
    grids[pairKey(c1, c2)] = severities.map((s1) => severities.map((s2) => 1 / (1 + 0.1 * (k + 1) * (s1 + 2 * s2))));
  });
  return { corruptions, step, severities, digits: 100, grids };
}

function streamOptions(
  calls: { name: string; severity: number; firstIndex: number; n: number; seed: number }[],
  extra: Partial<CccStreamOptions> = {},
): CccStreamOptions {
  const rng = new Rng(21);
  const n = 30;
  const pool = {
    images: Float32Array.from({ length: n * 64 }, () => Math.round(rng.uniform() * 255) / 255),
    labels: Int32Array.from({ length: n }, (_, k) => k % 10),
    n,
  };
  return {
    calibration: syntheticCalibration(["contrast", "brightness", "gaussian_noise"]),
    target: 0.3,
    speed: 10,
    pool,
    seed: 4,
    batchSize: 16,
    maxShift: 0,
    corrupt: fakeCorruptions(calls),
    ...extra,
  };
}

Deno.test("cccStream: speed images per path point, c1 ← c2 and c2 ≠ c1 between paths, paths as findPath", () => {
  const stream = new CccStream(streamOptions([]));
  const points = Array.from({ length: 400 }, (_, k) => stream.point(k));
  const batches = Array.from({ length: 25 }, (_, b) => stream.batch(b));
  const perImage = batches.flatMap((batch) => batch.points);
  // Image g sits at point ⌊g / speed⌋.
  perImage.forEach((point, g) => assertEquals(point.index, Math.floor(g / 10)));
  const segments = new Map<number, typeof points>();
  for (const p of points) segments.set(p.segment, [...(segments.get(p.segment) ?? []), p]);
  const ordered = [...segments.values()];
  assert(ordered.length > 10, `${ordered.length} paths in 400 points`);
  ordered.forEach((segment, k) => {
    const { c1, c2 } = segment[0];
    assert(c1 !== c2);
    const expected = findPath(streamOptions([]).calibration.grids[pairKey(c1, c2)], 0.3, 1);
    if (k < ordered.length - 1) {
      assertEquals(segment.map((p) => [p.s1, p.s2]), expected.map((p) => [p.s1, p.s2]));
      assertEquals(ordered[k + 1][0].c1, c2);
    }
  });
});

Deno.test("cccStream: corruptions applied per run of a point, c1 at s1 then c2 at s2, firstIndex = image index", () => {
  const calls: { name: string; severity: number; firstIndex: number; n: number; seed: number }[] = [];
  const stream = new CccStream(streamOptions(calls));
  const batch = stream.batch(3); // images 48..63: points 4, 5, 6
  let k = 0;
  for (let g = 48; g < 64;) {
    const point = batch.points[g - 48];
    const end = Math.min(64, (point.index + 1) * 10);
    for (const [name, severity] of [[point.c1, point.s1], [point.c2, point.s2]] as const) {
      if (severity === 0) continue;
      const call = calls[k++];
      assertEquals([call.name, call.severity, call.firstIndex, call.n], [name, severity, g, end - g]);
    }
    g = end;
  }
  assertEquals(k, calls.length);
});

Deno.test("cccStream: the same batches from any start, by random access and for the same seed", () => {
  const options = streamOptions([], { maxShift: 2 });
  const sequential = cccStream(options);
  const first = Array.from({ length: 12 }, () => sequential.next().value);
  const resumed = cccStream(options, 7);
  for (let b = 7; b < 12; b++) {
    const batch = resumed.next().value;
    assertEquals(batch.index, b);
    assertEquals(batch.images, first[b].images);
    assertEquals(batch.labels, first[b].labels);
    assertEquals(batch.points, first[b].points);
  }
  const fresh = new CccStream(options);
  assertEquals(fresh.batch(11).images, first[11].images);
  const other = new CccStream({ ...options, seed: 5 });
  assert(other.batch(0).labels.some((label, i) => label !== first[0].labels[i]), "another seed, other digits");
});

Deno.test("cccStream: digits from the pool with their labels, shifted by at most maxShift pixels, zero filled", () => {
  const options = streamOptions([], { maxShift: 2, corrupt: (images) => images });
  const { pool } = options;
  const stream = new CccStream(options);
  const shifts = new Set<string>();
  for (let b = 0; b < 20; b++) {
    const batch = stream.batch(b);
    for (let i = 0; i < 16; i++) {
      const image = batch.images.subarray(i * 64, (i + 1) * 64);
      let found = false;
      for (let d = 0; d < pool.n && !found; d++) {
        if (pool.labels[d] !== batch.labels[i]) continue;
        for (let dy = -2; dy <= 2 && !found; dy++) {
          for (let dx = -2; dx <= 2 && !found; dx++) {
            let same = true;
            for (let y = 0; y < 8 && same; y++) {
              for (let x = 0; x < 8 && same; x++) {
                const [sy, sx] = [y - dy, x - dx];
                const v = sy >= 0 && sy < 8 && sx >= 0 && sx < 8 ? pool.images[d * 64 + sy * 8 + sx] : 0;
                same = image[y * 8 + x] === v;
              }
            }
            if (same) {
              found = true;
              shifts.add(`${dy},${dx}`);
            }
          }
        }
      }
      assert(found, `image ${i} of batch ${b} is no shift of a pool digit of its label`);
    }
  }
  assert(shifts.size >= 20, `only ${shifts.size} of the 25 shifts seen in 320 images`);
});

Deno.test("cccStream with corruptAt: an image is the same whatever the batch size; values in [0, 1]", () => {
  const options = streamOptions([], { corrupt: undefined, maxShift: 2 });
  options.calibration = syntheticCalibration(["gaussian_noise", "contrast"], 2.5);
  const wide = new CccStream(options), narrow = new CccStream({ ...options, batchSize: 8 });
  for (let b = 0; b < 4; b++) {
    const batch = wide.batch(b);
    assert(batch.images.every((v) => v >= 0 && v <= 1));
    assertEquals(batch.images, Float32Array.from([...narrow.batch(2 * b).images, ...narrow.batch(2 * b + 1).images]));
    assertEquals(batch.labels, Int32Array.from([...narrow.batch(2 * b).labels, ...narrow.batch(2 * b + 1).labels]));
  }
  const noisy = wide.batch(0).points.some((p) => p.s1 + p.s2 > 0);
  assert(noisy, "the first batch is corrupted");
});

Deno.test("cccStream: bad options are refused before the first batch", () => {
  const options = streamOptions([]);
  assertThrows(() => new CccStream({ ...options, target: 1 }), UsageError, "(0, 1)");
  assertThrows(() => new CccStream({ ...options, speed: 0 }), UsageError, "speed");
  assertThrows(() => cccStream({ ...options, speed: 0 }), UsageError, "speed");
  const calibration = options.calibration;
  const unknown = ["gaussian_noise", "fogg"] as CorruptionName[];
  assertThrows(
    () => new CccStream({ ...options, calibration: { ...calibration, corruptions: unknown } }),
    UsageError,
    "fogg",
  );
  assertThrows(() => new CccStream({ ...options, calibration: { ...calibration, step: 0.3 } }), UsageError, "divide 5");
  assertThrows(
    () => new CccStream({ ...options, calibration: { ...calibration, grids: {} } }),
    UsageError,
    "lacks the pairs",
  );
  assertThrows(() => new CccStream({ ...options, maxShift: 8 }), UsageError, "maxShift");
});
