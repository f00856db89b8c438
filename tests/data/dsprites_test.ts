import { zipSync } from "fflate";
import { join } from "node:path";
import { assert, assertAlmostEquals, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { formatNpy } from "../../lib/core/npy.ts";
import { Rng } from "../../lib/core/rng.ts";
import { dsprites, orientationAngle, renderSprite } from "../../lib/data/dsprites.ts";
import { FactorSpace, sampleBatch } from "../../lib/data/ground_truth.ts";
import {
  DatasetFileError,
  dspritesFromFile,
  findOriginalFiles,
  MPI3D_FILE,
  mpi3dFromFile,
  readNpz,
} from "../../lib/data/original_files.ts";
import { loadDataset } from "../../lib/data/registry.ts";

const one = (tuple: number[]) => ({ values: Int32Array.from(tuple), n: 1 });
const image = (tuple: number[]) => dsprites().observations(one(tuple), new Rng(0)).values;

function centroid(values: Float32Array): [number, number, number] {
  let sx = 0, sy = 0, area = 0;
  for (let p = 0; p < values.length; p++) {
    if (!values[p]) continue;
    sx += p % 64;
    sy += Math.floor(p / 64);
    area++;
  }
  return [sx / area, sy / area, area];
}

Deno.test("factor tuples and flat indices are a bijection over the whole dSprites grid", () => {
  const space = new FactorSpace([3, 6, 40, 32, 32]);
  assertEquals(space.total, 737_280);
  const seen = new Uint8Array(space.total);
  for (let index = 0; index < space.total; index++) {
    const tuple = space.tupleOf(index);
    assertEquals(space.indexOf(tuple), index);
    seen[index]++;
  }
  assert(seen.every((v) => v === 1));
  assertEquals([...space.tupleOf(737_279)], [2, 5, 39, 31, 31]);
  assertThrows(() => space.indexOf([3, 0, 0, 0, 0]), RangeError, "factor 0 = 3");
});

Deno.test("the same seed gives the same batch; images are binary and the right shape", () => {
  const a = sampleBatch(dsprites(), 16, new Rng(5)), b = sampleBatch(dsprites(), 16, new Rng(5));
  assertEquals(a.factors.values, b.factors.values);
  assertEquals(a.observations.values, b.observations.values);
  assertEquals(a.observations.shape, [64, 64, 1]);
  assert(a.observations.values.every((v) => v === 0 || v === 1));
  const noisy = dsprites({ variant: "noisy", size: 32 });
  const c = sampleBatch(noisy, 4, new Rng(6)), d = sampleBatch(noisy, 4, new Rng(6));
  assertEquals(c.observations.values, d.observations.values);
  assertEquals(c.observations.shape, [32, 32, 3]);
});

Deno.test("the sprite centroid moves monotonically with x and y, and area grows with scale²", () => {
  let lastX = -1, lastY = -1;
  for (let p = 0; p < 32; p++) {
    const [x] = centroid(image([1, 5, 0, p, 10]));
    const [, y] = centroid(image([1, 5, 0, 10, p]));
    assert(x > lastX && y > lastY, `position ${p}: ${x}, ${y}`);
    lastX = x;
    lastY = y;
  }
  for (const shape of [0, 1, 2]) {
    const area = (scale: number) => centroid(image([shape, scale, 0, 16, 16]))[2];
    for (let s = 1; s < 6; s++) {
      const expected = ((0.5 + s * 0.1) / 0.5) ** 2;
      assertAlmostEquals(area(s) / area(0), expected, 0.12 * expected, `shape ${shape} scale ${s}`);
    }
  }
});

Deno.test("a square turned by a quarter turn is the same image; a heart is not its vertical mirror", () => {
  assertEquals(renderSprite(0, 1, Math.PI / 2), renderSprite(0, 1, 0));
  assertNotEquals(renderSprite(1, 1, Math.PI / 2), renderSprite(1, 1, 0));
  const heart = renderSprite(2, 1, 0);
  const side = Math.sqrt(heart.length);
  const mirrored = new Uint8Array(heart.length);
  for (let r = 0; r < side; r++) mirrored.set(heart.subarray((side - 1 - r) * side, (side - r) * side), r * side);
  assertNotEquals(mirrored, heart);
  // Left-right the heart is symmetric, as a heart is.
  const flipped = heart.map((_, i) => heart[Math.floor(i / side) * side + (side - 1 - (i % side))]);
  assertEquals(flipped, heart);
});

Deno.test("32×32 images are 2×2 area averages of the 64×64 ones", () => {
  const factors = one([2, 3, 7, 12, 20]);
  const big = dsprites().observations(factors, new Rng(0)).values;
  const small = dsprites({ size: 32 }).observations(factors, new Rng(0)).values;
  for (let y = 0; y < 32; y++) {
    for (let x = 0; x < 32; x++) {
      const mean = (big[2 * y * 64 + 2 * x] + big[2 * y * 64 + 2 * x + 1] + big[(2 * y + 1) * 64 + 2 * x] +
        big[(2 * y + 1) * 64 + 2 * x + 1]) / 4;
      assertEquals(small[y * 32 + x], mean);
    }
  }
});

Deno.test("variants follow their recipes", () => {
  const factors = one([0, 5, 0, 16, 16]);
  const sprite = image([0, 5, 0, 16, 16]);
  const color = dsprites({ variant: "color" }).observations(factors, new Rng(1)).values;
  const noisy = dsprites({ variant: "noisy" }).observations(factors, new Rng(1)).values;
  const scream = dsprites({ variant: "scream" }).observations(factors, new Rng(1)).values;
  const rgb = [color[(32 * 64 + 32) * 3], color[(32 * 64 + 32) * 3 + 1], color[(32 * 64 + 32) * 3 + 2]];
  for (let p = 0; p < 4096; p++) {
    for (let c = 0; c < 3; c++) {
      assertEquals(color[p * 3 + c], sprite[p] * rgb[c]);
      if (sprite[p]) assertEquals(noisy[p * 3 + c], 1);
      assert(scream[p * 3 + c] >= 0 && scream[p * 3 + c] <= 1);
    }
  }
  assert(rgb.every((v) => v >= 0.5 && v <= 1));
});

function fixtureNpz(): Uint8Array {
  const space = new FactorSpace([3, 6, 40, 32, 32]);
  const tuples = [[0, 0, 0, 0, 0], [2, 5, 39, 31, 31], [1, 3, 10, 5, 7]];
  const imgs = new Uint8Array(tuples.length * 4096);
  const classes = new BigInt64Array(tuples.length * 6);
  tuples.forEach((t, r) => {
    imgs.fill(r + 1, r * 4096, r * 4096 + 100); // a distinct pattern per row
    classes.set([0n, ...t.map(BigInt)], r * 6);
    assertEquals(space.tupleOf(space.indexOf(t)).length, 5);
  });
  return zipSync({
    "imgs.npy": formatNpy(imgs, [tuples.length, 64, 64]),
    "latents_classes.npy": formatNpy(classes, [tuples.length, 6]),
  });
}

Deno.test("dSprites loads from an npz file, looking images up by their factors", () => {
  const folder = Deno.makeTempDirSync();
  const path = join(folder, "dsprites_ndarray_co1sh3sc6or40x32y32_64x64.npz");
  Deno.writeFileSync(path, fixtureNpz());
  assertEquals(findOriginalFiles(folder).dsprites, path);
  const dataset = dspritesFromFile(path);
  const { values } = dataset.observations(
    { values: Int32Array.from([1, 3, 10, 5, 7, 2, 5, 39, 31, 31]), n: 2 },
    new Rng(0),
  );
  assertEquals([values[0], values[99], values[100], values[4096]], [3, 3, 0, 2]);
  assertThrows(
    () => dataset.observations(one([0, 0, 0, 0, 1]), new Rng(0)),
    DatasetFileError,
    "holds no image for factors [0,0,0,0,1]",
  );
});

Deno.test("a corrupt or incomplete npz gives an error naming the file and the problem", () => {
  assertThrows(
    () => readNpz(Uint8Array.from([1, 2, 3, 4]), "bad.npz", ["imgs"]),
    DatasetFileError,
    "bad.npz: not a readable",
  );
  const missing = zipSync({ "other.npy": formatNpy(Float32Array.of(1), [1]) });
  assertThrows(() => readNpz(missing, "x.npz", ["imgs"]), DatasetFileError, 'x.npz: has no array "imgs"');
  const truncated = fixtureNpz().slice(0, 200);
  assertThrows(() => readNpz(truncated, "t.npz", ["imgs"]), DatasetFileError, "t.npz");
  const folder = Deno.makeTempDirSync();
  Deno.writeFileSync(join(folder, "3dshapes.h5"), Uint8Array.of(0));
  assertThrows(() => findOriginalFiles(folder), DatasetFileError, "np.savez('3dshapes.npz'");
});

Deno.test("dsprites-rot draws orientation index k at k·90°/40; the grid is part of the sprite cache key", () => {
  const full = dsprites(), quarter = dsprites({ orientation: "quarter" });
  assertEquals(quarter.name, "dsprites-rot");
  assertEquals(dsprites({ variant: "color", orientation: "quarter" }).name, "color-dsprites-rot");
  assert(quarter.description.includes("[0°, 90°)"));
  assertEquals(quarter.factorSizes, full.factorSizes);
  const draw = (dataset: typeof full, tuple: number[]) => dataset.observations(one(tuple), new Rng(0)).values;
  // Index 0 is 0° on both grids; index 20 is 45° on the quarter grid, 184.6° on the full one (drawn first, cached).
  assertEquals(draw(quarter, [1, 5, 0, 16, 16]), draw(full, [1, 5, 0, 16, 16]));
  const fullTwenty = draw(full, [1, 5, 20, 16, 16]), quarterTwenty = draw(quarter, [1, 5, 20, 16, 16]);
  assertNotEquals(quarterTwenty, fullTwenty);
  assertEquals(orientationAngle(20, "quarter"), Math.PI / 4);
  assertAlmostEquals(orientationAngle(39, "quarter") * 180 / Math.PI, 87.75, 1e-12);
  assertEquals(orientationAngle(20), 2 * Math.PI * 20 / 39);
  // The ellipse at 45° is symmetric about the diagonal: its image equals its transpose.
  for (let y = 0; y < 64; y++) {
    for (let x = 0; x < 64; x++) assertEquals(quarterTwenty[y * 64 + x], quarterTwenty[x * 64 + y]);
  }
  assertThrows(() => dsprites({ orientation: "half" as "full" }), Error, 'unknown dSprites orientation "half"');
});

Deno.test("the registry serves dsprites-rot and refuses an orientation for a dataset without one", () => {
  const folder = Deno.makeTempDirSync();
  assertEquals(loadDataset("dsprites-rot", { folder, size: 32 }).name, "dsprites-rot");
  assertEquals(loadDataset("dsprites", { folder, orientation: "quarter" }).name, "dsprites-rot");
  assertThrows(
    () => loadDataset("shapes3d", { folder, orientation: "quarter" }),
    Error,
    "orientation applies to the dSprites datasets only, not shapes3d",
  );
  assertThrows(() => loadDataset("dsprites-rot", { folder, orientation: "full" }), Error, "quarter orientation grid");
});

Deno.test("MPI3D-real: a missing file, another array or shape or dtype names the path and the expected shape", () => {
  const folder = Deno.makeTempDirSync();
  const path = join(folder, MPI3D_FILE);
  const expected = "[1036800, 64, 64, 3]";
  let error = assertThrows(() => mpi3dFromFile(path), DatasetFileError, path);
  assert(error.message.includes(expected), error.message);
  assertEquals(findOriginalFiles(folder).mpi3d, null);
  const cases: [Record<string, Uint8Array>, string][] = [
    [
      { "images.npy": formatNpy(new Uint8Array(2 * 12288), [2, 64, 64, 3]) },
      "has shape [2,64,64,3], expected [1036800",
    ],
    [{ "arr_0.npy": formatNpy(new Uint8Array(64 * 64 * 3), [64, 64, 3]) }, '"arr_0" has shape [64,64,3]'],
    [{ "images.npy": formatNpy(new Float32Array(4), [4]) }, '"images" is f4, expected images uint8 [1036800'],
    [{ "a.npy": formatNpy(new Uint8Array(1), [1]), "b.npy": formatNpy(new Uint8Array(1), [1]) }, "arrays [a, b]"],
  ];
  for (const [arrays, message] of cases) {
    Deno.writeFileSync(path, zipSync(arrays));
    error = assertThrows(() => mpi3dFromFile(path), DatasetFileError, message);
    assert(error.message.startsWith(path), error.message);
  }
  assertEquals(findOriginalFiles(folder).mpi3d, path);
  Deno.writeFileSync(path, Uint8Array.of(1, 2, 3));
  assertThrows(() => mpi3dFromFile(path), DatasetFileError, "not a readable .npz");
});
