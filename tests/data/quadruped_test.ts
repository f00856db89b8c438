import { assert, assertAlmostEquals, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  BACKGROUND_KINDS,
  COAT_PATTERNS,
  IDENTITY_COUNT,
  KEYPOINTS,
  MAX_HEAD_ANGLE,
  MAX_JITTER,
  poseSplit,
  QUADRUPED_SIDE,
  type QuadrupedIdentity,
  quadrupedIdentity,
  type QuadrupedPose,
  samplePose,
  STRIDE_RANGE,
} from "../../lib/data/quadruped.ts";
import { renderFrames, renderQuadruped, SENSOR_NOISE } from "../../lib/data/quadruped_render.ts";

const SIDE = QUADRUPED_SIDE;
const IDENTITIES = Array.from({ length: IDENTITY_COUNT }, (_, i) => quadrupedIdentity(i));
const KP = Object.fromEntries(KEYPOINTS.map((name, j) => [name, j])) as Record<(typeof KEYPOINTS)[number], number>;

function point(keypoints: Float32Array, j: number, frame = 0): [number, number] {
  return [keypoints[frame * 16 + 2 * j], keypoints[frame * 16 + 2 * j + 1]];
}

/** Poses at the edges of the pose space: every eighth of the gait, both stride ends, both head ends, jitter corners. */
function extremePoses(): QuadrupedPose[] {
  const poses: QuadrupedPose[] = [];
  for (let k = 0; k < 16; k++) {
    for (const stride of STRIDE_RANGE) {
      for (const headAngle of [-MAX_HEAD_ANGLE, MAX_HEAD_ANGLE]) {
        for (const [jitterX, jitterY] of [[-1, -1], [1, 1], [-1, 1], [1, -1]]) {
          poses.push({
            phase: (k * Math.PI) / 8,
            stride,
            headAngle,
            jitterX: jitterX * MAX_JITTER,
            jitterY: jitterY * MAX_JITTER,
          });
        }
      }
    }
  }
  return poses;
}

Deno.test("identities: deterministic from (seed, index), JSON-serialisable, all different, every coat and background", () => {
  assertEquals(KEYPOINTS.length, 8);
  assertEquals(quadrupedIdentity(7), quadrupedIdentity(7, 0));
  assertEquals(JSON.parse(JSON.stringify(IDENTITIES[7])), IDENTITIES[7]);
  assertNotEquals(quadrupedIdentity(7, 1), IDENTITIES[7]);
  assertEquals(new Set(IDENTITIES.map((id) => JSON.stringify({ ...id, index: 0 }))).size, IDENTITY_COUNT);
  for (const pattern of COAT_PATTERNS) assert(IDENTITIES.filter((id) => id.pattern === pattern).length >= 7, pattern);
  for (const kind of BACKGROUND_KINDS) assert(IDENTITIES.filter((id) => id.background === kind).length >= 7, kind);
  for (const bad of [-1, 30, 1.5, NaN]) assertThrows(() => quadrupedIdentity(bad), UsageError, "[0, 30)");
  assertThrows(() => quadrupedIdentity(0, 0.5), UsageError, "seed");
});

Deno.test("keypoints in [1, 63] and the animal inside the frame for sampled and extreme poses of all 30 identities", () => {
  for (const id of IDENTITIES) {
    const rng = Rng.derive(1, "poses", id.index);
    const poses = [...extremePoses(), ...Array.from({ length: 20 }, () => samplePose(rng))];
    for (const pose of poses) {
      const { image, keypoints, unit, mask } = renderQuadruped(id, pose, rng, { mask: true });
      assertEquals(keypoints.length, 16);
      for (const v of keypoints) assert(v >= 1 && v <= 63, `identity ${id.index}: keypoint coordinate ${v}`);
      // unit is the Euclidean nose–eye distance, up to float32 rounding of the keypoints.
      const [nx, ny] = point(keypoints, KP.nose), [ex, ey] = point(keypoints, KP.eye);
      assertAlmostEquals(unit, Math.hypot(nx - ex, ny - ey), 1e-5);
      assert(unit >= 4 && unit <= 7, `unit ${unit}`);
      let low = Infinity, high = -Infinity, rim = 0;
      for (let i = 0; i < image.length; i++) {
        if (image[i] < low) low = image[i];
        if (image[i] > high) high = image[i];
      }
      assert(low >= 0 && high <= 1, `values in [${low}, ${high}]`);
      // No animal coverage on the outermost pixel ring.
      for (let k = 0; k < SIDE; k++) {
        for (const p of [k, (SIDE - 1) * SIDE + k, k * SIDE, k * SIDE + SIDE - 1]) rim = Math.max(rim, mask![p]);
      }
      assertEquals(rim, 0);
    }
  }
});

Deno.test("samplePose stays in its documented ranges and covers them", () => {
  const rng = new Rng(4);
  const poses = Array.from({ length: 2000 }, () => samplePose(rng));
  const range = (
    key: keyof QuadrupedPose,
  ) => [Math.min(...poses.map((p) => p[key])), Math.max(...poses.map((p) => p[key]))];
  const [p0, p1] = range("phase"), [s0, s1] = range("stride"), [h0, h1] = range("headAngle");
  const [x0, x1] = range("jitterX"), [y0, y1] = range("jitterY");
  assert(p0 >= 0 && p0 < 0.01 && p1 < 2 * Math.PI && p1 > 2 * Math.PI - 0.01);
  assert(s0 >= STRIDE_RANGE[0] && s1 <= STRIDE_RANGE[1] && s1 - s0 > 0.99 * (STRIDE_RANGE[1] - STRIDE_RANGE[0]));
  assert(h0 >= -MAX_HEAD_ANGLE && h1 <= MAX_HEAD_ANGLE && h1 - h0 > 0.99 * 2 * MAX_HEAD_ANGLE);
  for (const [lo, hi] of [[x0, x1], [y0, y1]]) assert(lo >= -4 && hi <= 4 && hi - lo > 7.9);
});

Deno.test("gait: near and far legs in antiphase, hind legs a quarter cycle ahead of the front ones, period 2π", () => {
  const id = IDENTITIES[5];
  const at = (phase: number) =>
    renderQuadruped(id, { phase, stride: 0.4, headAngle: 0.1, jitterX: 0, jitterY: 0 }, new Rng(0)).keypoints;
  let hindMinusFront: [number, number] | undefined;
  for (let k = 0; k < 12; k++) {
    const phase = (k * Math.PI) / 6;
    const now = at(phase),
      half = at(phase + Math.PI),
      quarter = at(phase + Math.PI / 2),
      full = at(phase + 2 * Math.PI);
    for (let j = 0; j < 16; j++) assertAlmostEquals(full[j], now[j], 1e-4);
    // Half a cycle later the far leg is where the near one was, up to the constant far-side offset.
    for (const [near, far] of [[KP.front_near_hoof, KP.front_far_hoof], [KP.hind_near_hoof, KP.hind_far_hoof]]) {
      const a = point(now, near), b = point(half, far), c = point(now, far), d = point(half, near);
      assertAlmostEquals(b[0] - a[0], c[0] - d[0], 1e-4);
      assertAlmostEquals(b[1] - a[1], c[1] - d[1], 1e-4);
    }
    // A quarter cycle later the hind hoof repeats the front hoof's path, shifted by the constant shoulder–hip offset.
    const front = point(now, KP.front_near_hoof), hind = point(quarter, KP.hind_near_hoof);
    const diff: [number, number] = [hind[0] - front[0], hind[1] - front[1]];
    hindMinusFront ??= diff;
    assertAlmostEquals(diff[0], hindMinusFront[0], 1e-4);
    assertAlmostEquals(diff[1], 0, 1e-4);
  }
  assert(hindMinusFront![0] < -15, `hip behind shoulder: ${hindMinusFront![0]}`);
  // The hooves move: front near hoof x over the cycle spans at least half a leg swing.
  const xs = Array.from({ length: 12 }, (_, k) => point(at((k * Math.PI) / 6), KP.front_near_hoof)[0]);
  assert(Math.max(...xs) - Math.min(...xs) > 5);
});

Deno.test("renderFrames: same seed same bytes, a frame's bytes independent of the other frames, seeds differ", () => {
  const items = [{ identity: 3, frame: 0 }, { identity: 17, frame: 5 }, { identity: 3, frame: 9 }];
  const a = renderFrames(items, 11), b = renderFrames(items, 11);
  assertEquals(a.n, 3);
  assertEquals(a.images.length, 3 * SIDE * SIDE * 3);
  assertEquals(a.images, b.images);
  assertEquals(a.keypoints, b.keypoints);
  assertEquals(a.units, b.units);
  assertEquals([...a.identities], [3, 17, 3]);
  const alone = renderFrames([items[1]], 11);
  assertEquals(alone.images, a.images.slice(SIDE * SIDE * 3, 2 * SIDE * SIDE * 3));
  assertEquals(alone.keypoints, a.keypoints.slice(16, 32));
  // The documented generator: pose then noise from Rng.derive(seed, "quadruped", identity, frame).
  const rng = Rng.derive(11, "quadruped", 17, 5);
  const direct = renderQuadruped(quadrupedIdentity(17), samplePose(rng), rng);
  assertEquals(direct.image, alone.images);
  assertEquals(Math.fround(direct.unit), alone.units[0]);
  assertNotEquals(renderFrames([items[1]], 12).images, alone.images);
  assertNotEquals(renderFrames([items[1]], 11, 1).images, alone.images);
  assertThrows(() => renderFrames([{ identity: 30, frame: 0 }], 0), UsageError, "identity 30");
  assertThrows(() => renderFrames([{ identity: 0, frame: 1.5 }], 0), UsageError, "frame 1.5");
  assertThrows(() => renderFrames([{ identity: 0, frame: -1 }], 0), UsageError, "frame -1");
});

Deno.test("rng drives sensor noise only: same geometry, noise difference has standard deviation √2 σ", () => {
  const id = IDENTITIES[12], pose = samplePose(new Rng(2));
  const a = renderQuadruped(id, pose, new Rng(100)), b = renderQuadruped(id, pose, new Rng(200));
  assertEquals(a.keypoints, b.keypoints);
  assertEquals(a.unit, b.unit);
  // Pixels away from the clip bounds: the difference is of two independent noise draws.
  let n = 0, sum = 0, square = 0;
  for (let i = 0; i < a.image.length; i++) {
    if (Math.min(a.image[i], b.image[i]) < 0.1 || Math.max(a.image[i], b.image[i]) > 0.9) continue;
    const d = a.image[i] - b.image[i];
    n++;
    sum += d;
    square += d * d;
  }
  assert(n > 10_000, `${n} unclipped values`);
  // Standard error of a variance estimate from n ≈ 12k near-Gaussian values: ≈ √(2/n) ≈ 1.3 % relative.
  assertAlmostEquals(Math.sqrt(square / n) / (Math.SQRT2 * SENSOR_NOISE), 1, 0.04);
  assertAlmostEquals(sum / n, 0, 0.001);
});

Deno.test("keypoint pixels belong to the animal: recolouring the animal changes them, and the mask covers them", () => {
  const recolour = (id: QuadrupedIdentity, rgb: [number, number, number]): QuadrupedIdentity => ({
    ...id,
    coat: rgb,
    coatSecond: rgb,
    mane: rgb,
    hoof: rgb,
  });
  const changed = new Array(KEYPOINTS.length).fill(0);
  let frames = 0;
  for (const id of IDENTITIES) {
    const magenta = recolour(id, [1, 0, 1]), green = recolour(id, [0, 1, 0]);
    for (let f = 0; f < 20; f++) {
      const pose = samplePose(Rng.derive(5, "pose", id.index, f));
      const frame = renderQuadruped(id, pose, new Rng(f), { mask: true });
      const m = renderQuadruped(magenta, pose, new Rng(f)).image, g = renderQuadruped(green, pose, new Rng(f)).image;
      frames++;
      KEYPOINTS.forEach((_, j) => {
        const [x, y] = point(frame.keypoints, j);
        const p = Math.floor(y) * SIDE + Math.floor(x);
        assert(frame.mask![p] >= 0.5, `identity ${id.index} frame ${f}: ${KEYPOINTS[j]} coverage ${frame.mask![p]}`);
        // The eye is a fixed dark dot, so only the other keypoints are checked by recolouring.
        if (m[3 * p + 1] - g[3 * p + 1] < -0.5) changed[j]++;
      });
    }
  }
  for (const name of KEYPOINTS.filter((name) => name !== "eye")) {
    assert(changed[KP[name]] >= 0.98 * frames, `${name}: ${changed[KP[name]]}/${frames}`);
  }
});

/** Per-frame coat statistics: mean RGB and mean |discrete Laplacian| over interior animal pixels; background luminance. */
function coatStatistics(id: QuadrupedIdentity, frames: number, label: string): { coat: number[][]; contrast: number } {
  const coat: number[][] = [];
  let contrast = 0;
  for (let f = 0; f < frames; f++) {
    const rng = Rng.derive(9, label, id.index, f);
    const { image, mask } = renderQuadruped(id, samplePose(rng), rng, { mask: true });
    const full = (p: number) => mask![p] > 0.999;
    const mean = [0, 0, 0], back = [0, 0, 0];
    let n = 0, nBack = 0, energy = 0;
    for (let y = 1; y < SIDE - 1; y++) {
      for (let x = 1; x < SIDE - 1; x++) {
        const p = y * SIDE + x;
        if (full(p) && full(p - 1) && full(p + 1) && full(p - SIDE) && full(p + SIDE)) {
          n++;
          for (let c = 0; c < 3; c++) {
            const v = image[3 * p + c];
            mean[c] += v;
            energy += Math.abs(
              4 * v - image[3 * (p - 1) + c] - image[3 * (p + 1) + c] - image[3 * (p - SIDE) + c] -
                image[3 * (p + SIDE) + c],
            );
          }
        } else if (mask![p] === 0) {
          nBack++;
          for (let c = 0; c < 3; c++) back[c] += image[3 * p + c];
        }
      }
    }
    coat.push([...mean.map((v) => v / n), energy / (3 * n)]);
    const lum = (c: number[]) => 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
    contrast += Math.abs(lum(mean.map((v) => v / n)) - lum(back.map((v) => v / nBack))) / frames;
  }
  return { coat, contrast };
}

Deno.test("identities differ in coat statistics beyond per-frame variation, and the coat stands out from the background", () => {
  const frames = 8;
  const fit = IDENTITIES.map((id) => coatStatistics(id, frames, "fit"));
  const held = IDENTITIES.map((id) => coatStatistics(id, frames, "held"));
  const means = fit.map(({ coat }) => coat[0].map((_, k) => coat.reduce((a, row) => a + row[k], 0) / frames));
  let spread = 0;
  fit.forEach(({ coat }, i) =>
    coat.forEach((row) => row.forEach((v, k) => spread = Math.max(spread, Math.abs(v - means[i][k]))))
  );
  let closest = Infinity;
  for (let i = 0; i < IDENTITY_COUNT; i++) {
    for (let j = i + 1; j < IDENTITY_COUNT; j++) {
      closest = Math.min(
        closest,
        Math.hypot(...means[i].map((v, k) => v - means[j][k])),
      );
    }
  }
  // Identity means are further apart than three times the largest per-frame deviation from them.
  assert(closest > 3 * spread, `closest identities ${closest}, largest per-frame deviation ${spread}`);
  // Held-out frames are all assigned to their own identity by the nearest mean.
  held.forEach(({ coat }, i) =>
    coat.forEach((row) => {
      const distances = means.map((m) => Math.hypot(...m.map((v, k) => v - row[k])));
      assertEquals(distances.indexOf(Math.min(...distances)), i);
    })
  );
  // Texture: every striped coat has more high-frequency energy than every plain one (sensor noise alone).
  const energy = (pattern: string) => means.filter((_, i) => IDENTITIES[i].pattern === pattern).map((m) => m[3]);
  assert(Math.min(...energy("stripes")) > Math.max(...energy("plain")));
  for (const { contrast } of fit) assert(contrast > 0.2, `coat–background luminance contrast ${contrast}`);
});

Deno.test("renderQuadruped rejects poses outside their ranges", () => {
  const id = IDENTITIES[0], ok: QuadrupedPose = { phase: 1, stride: 0.3, headAngle: 0, jitterX: 0, jitterY: 0 };
  renderQuadruped(id, ok, new Rng(0));
  assertThrows(() => renderQuadruped(id, { ...ok, jitterX: 4.5 }, new Rng(0)), UsageError, "jitter");
  assertThrows(() => renderQuadruped(id, { ...ok, stride: 0.9 }, new Rng(0)), UsageError, "stride");
  assertThrows(() => renderQuadruped(id, { ...ok, headAngle: -1 }, new Rng(0)), UsageError, "headAngle");
  assertThrows(() => renderQuadruped(id, { ...ok, phase: NaN }, new Rng(0)), UsageError, "phase");
  assertThrows(() => renderQuadruped({ ...id, index: 31 }, ok, new Rng(0)), UsageError, "identity 31");
});

/** The paper's split: 10 of the 30 identities train on 5 % of their 150 frames; 40 frames of each other one are OOD. */
const PAPER_SPLIT = {
  trainIdentities: 10,
  framesPerIdentity: 150,
  trainFraction: 0.05,
  oodFramesPerIdentity: 40,
  shuffle: 0,
  seed: 0,
};

Deno.test("poseSplit: the paper's 10 of 30 identities, 5 % of 150 frames → round(7.5) = 8, disjoint, three shuffles", () => {
  const base = { ...PAPER_SPLIT, seed: 3 };
  const splits = [0, 1, 2].map((shuffle) => poseSplit({ ...base, shuffle }));
  for (const [shuffle, split] of splits.entries()) {
    assertEquals(split.trainIdentities.length, 10);
    assertEquals(split.oodIdentities.length, 20);
    assertEquals([...split.trainIdentities, ...split.oodIdentities].sort((a, b) => a - b), [...Array(30).keys()]);
    // The documented draw: the first 10 of Rng.derive(seed, "split", shuffle).permutation(30), listed ascending.
    const permutation = Array.from(Rng.derive(3, "split", shuffle).permutation(30));
    assertEquals(split.trainIdentities, permutation.slice(0, 10).sort((a, b) => a - b));
    assertEquals(split.train.length, 10 * 8);
    assertEquals(split.within.length, 10 * 142);
    assertEquals(split.ood.length, 20 * 40);
    const key = ({ identity, frame }: { identity: number; frame: number }) => `${identity}/${frame}`;
    const train = new Set(split.train.map(key)), within = new Set(split.within.map(key));
    assertEquals(train.size, 80);
    assert(split.within.every((item) => !train.has(key(item))));
    // Train ∪ within is every frame of every train identity, once.
    assertEquals(new Set([...train, ...within]).size, 10 * 150);
    for (const { identity, frame } of [...split.train, ...split.within]) {
      assert(split.trainIdentities.includes(identity) && frame >= 0 && frame < 150);
    }
    for (const identity of split.trainIdentities) {
      assertEquals(split.train.filter((t) => t.identity === identity).length, 8);
    }
    assert(split.ood.every(({ identity, frame }) => split.oodIdentities.includes(identity) && frame < 40));
  }
  assertNotEquals(splits[0].trainIdentities, splits[1].trainIdentities);
  assertNotEquals(splits[1].trainIdentities, splits[2].trainIdentities);
  assertNotEquals(splits[0].trainIdentities, splits[2].trainIdentities);
  assertEquals(poseSplit({ ...base, shuffle: 1 }), splits[1]);
  assertNotEquals(poseSplit({ ...base, shuffle: 0, seed: 4 }).train, splits[0].train);
});

Deno.test("poseSplit rounds halves up (Math.round) with at least one train frame; 50 % and 100 % splits", () => {
  /** The paper's split (shuffle 0, seed 0) at other sizes. */
  const sized = (trainIdentities: number, framesPerIdentity: number, trainFraction: number, oodFrames: number) =>
    poseSplit({ ...PAPER_SPLIT, trainIdentities, framesPerIdentity, trainFraction, oodFramesPerIdentity: oodFrames });
  const count = (framesPerIdentity: number, trainFraction: number) =>
    sized(1, framesPerIdentity, trainFraction, 1).train.length;
  assertEquals(count(150, 0.05), 8); // 7.5 → 8
  assertEquals(count(10, 0.25), 3); // 2.5 → 3 (half to even would give 2)
  assertEquals(count(10, 0.05), 1); // 0.5 → 1
  assertEquals(count(30, 0.01), 1); // 0.3 → 0 → at least 1
  assertEquals(count(150, 0.5), 75);
  assertEquals(count(151, 0.5), 76); // 75.5 → 76
  const all = sized(3, 7, 1, 2);
  assertEquals(all.train.length, 21);
  assertEquals(all.within.length, 0);
  assertEquals(all.ood.length, 27 * 2);
  const small = poseSplit({
    identities: 5,
    trainIdentities: 2,
    framesPerIdentity: 4,
    trainFraction: 0.5,
    oodFramesPerIdentity: 3,
    shuffle: 2,
    seed: 1,
  });
  assertEquals(small.oodIdentities.length, 3);
  assertEquals(small.ood.length, 9);
});

Deno.test("poseSplit rejects bad input with UsageError", () => {
  const ok = PAPER_SPLIT;
  poseSplit(ok);
  for (const trainFraction of [0, -0.1, 1.01, NaN]) {
    assertThrows(() => poseSplit({ ...ok, trainFraction }), UsageError, "trainFraction");
  }
  for (const trainIdentities of [30, 31, 0, 2.5]) {
    assertThrows(() => poseSplit({ ...ok, trainIdentities }), UsageError, "trainIdentities");
  }
  assertThrows(() => poseSplit({ ...ok, identities: 10, trainIdentities: 10 }), UsageError, "fewer than identities");
  assertThrows(() => poseSplit({ ...ok, identities: 31 }), UsageError, "identities 31");
  assertThrows(() => poseSplit({ ...ok, identities: 12.5 }), UsageError, "identities 12.5");
  assertThrows(() => poseSplit({ ...ok, framesPerIdentity: 0 }), UsageError, "framesPerIdentity");
  assertThrows(() => poseSplit({ ...ok, framesPerIdentity: 10.5 }), UsageError, "framesPerIdentity");
  assertThrows(() => poseSplit({ ...ok, oodFramesPerIdentity: 0 }), UsageError, "oodFramesPerIdentity");
  assertThrows(() => poseSplit({ ...ok, shuffle: -1 }), UsageError, "shuffle");
  assertThrows(() => poseSplit({ ...ok, shuffle: 0.5 }), UsageError, "shuffle");
  assertThrows(() => poseSplit({ ...ok, seed: 0.5 }), UsageError, "seed");
});
