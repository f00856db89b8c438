/**
 * Rendering of the procedural quadruped (lib/data/quadruped.ts): each frame is drawn from the shapes' signed
 * distances with one pixel of anti-aliasing, into plain typed arrays (no tensors), bounding box by bounding box, so
 * one core renders thousands of frames per second. Coordinates are pixels, x to the right and y down, pixel (i, j)
 * covering [j, j + 1) × [i, i + 1).
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";
import {
  BACKGROUND_KINDS,
  checkIdentityIndex,
  checkPose,
  checkSeed,
  COAT_PATTERNS,
  KEYPOINTS,
  type PoseItem,
  QUADRUPED_SIDE,
  type QuadrupedIdentity,
  quadrupedIdentity,
  type QuadrupedPose,
  type Rgb,
  samplePose,
  skeleton,
} from "./quadruped.ts";

/** Standard deviation of the per-frame sensor noise. */
export const SENSOR_NOISE = 0.02;

/** One rendered frame. */
export interface QuadrupedFrame {
  /** `[64, 64, 3]` HWC, values in [0, 1]. */
  image: Float32Array;
  /** `[8, 2]` (x, y) pixel coordinates in {@linkcode KEYPOINTS} order; pixel centres at i + 0.5. */
  keypoints: Float32Array;
  /** Nose–eye distance of this frame in pixels (the normalising unit). */
  unit: number;
  /** `[64, 64]` animal coverage in [0, 1], only when asked for with `{ mask: true }`. */
  mask?: Float32Array;
}

/** Frames of several identities, stacked. */
export interface PoseFrames {
  /** Number of frames. */
  n: number;
  /** `[n, 64, 64, 3]`. */
  images: Float32Array;
  /** `[n, 8, 2]`. */
  keypoints: Float32Array;
  /** `[n]` nose–eye distances. */
  units: Float32Array;
  /** `[n]` identity indices. */
  identities: Int32Array;
}

const SIDE = QUADRUPED_SIDE;
const PIXELS = SIDE * SIDE;

/** 32-bit integer hash of a lattice cell, for spots and value noise. */
function hashCell(i: number, j: number, salt: number): number {
  let h = Math.imul(i, 0x27d4eb2d) ^ Math.imul(j, 0x165667b1) ^ salt;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Drawing state of one frame: target arrays, scene offset, the identity's pattern constants. */
interface Canvas {
  image: Float32Array;
  offset: number;
  coverage: Float32Array;
  /** Image position of the animal origin (identity origin plus jitter). */
  ox: number;
  oy: number;
  id: QuadrupedIdentity;
  pattern: number;
}

const colour = new Float64Array(3);
// Periodic patterns are sums of sin(A(x) + B(y)) = sin A cos B + cos A sin B, so per-column and per-row tables
// built once a frame replace per-pixel sines: pattern(x, y) = X0·Y1 + X1·Y0 + X2·Y2.
const X0 = new Float64Array(SIDE), X1 = new Float64Array(SIDE), X2 = new Float64Array(SIDE);
const Y0 = new Float64Array(SIDE), Y1 = new Float64Array(SIDE), Y2 = new Float64Array(SIDE);

/** Fills the tables for sin(a·x + b·y + c) over pixel centres shifted by (dx, dy), plus X2·Y2 = `product` terms. */
function fillTables(a: number, b: number, c: number, dx: number, dy: number): void {
  for (let i = 0; i < SIDE; i++) {
    const ax = a * (i + 0.5 - dx) + c, by = b * (i + 0.5 - dy);
    X0[i] = Math.sin(ax);
    X1[i] = Math.cos(ax);
    Y0[i] = Math.sin(by);
    Y1[i] = Math.cos(by);
    X2[i] = 0;
    Y2[i] = 0;
  }
}

/** Sets up the coat tables of one frame (stripes: one grating; dapple: a grating plus a product of sines). */
function prepareCoat(cv: Canvas): void {
  const { scale, angle, phase } = cv.id.patternGeometry, f = (2 * Math.PI) / scale;
  const cos = Math.cos(angle), sin = Math.sin(angle);
  if (cv.pattern === 2) fillTables(f * cos, f * sin, phase, cv.ox, cv.oy);
  else if (cv.pattern === 3) {
    fillTables(0.9 * f * cos, 0.9 * f * sin, 0, cv.ox, cv.oy);
    for (let i = 0; i < SIDE; i++) {
      X2[i] = Math.sin(f * (i + 0.5 - cv.ox) + phase);
      Y2[i] = Math.sin(f * (i + 0.5 - cv.oy) - phase);
    }
  }
}

/** Coat colour at pixel (x, y) into `colour`, times `shade`; the pattern is fixed to the animal, not the image. */
function coatAt(cv: Canvas, x: number, y: number, shade: number): void {
  const id = cv.id;
  let w = 0;
  switch (cv.pattern) {
    case 1: {
      // Spots: one disc per lattice cell, fully inside it, at a hashed position with a hashed radius.
      const u = x + 0.5 - cv.ox, v = y + 0.5 - cv.oy;
      const s = id.patternGeometry.scale, ci = Math.floor(u / s), cj = Math.floor(v / s);
      const h = hashCell(ci, cj, id.patternGeometry.salt);
      const cx = (ci + 0.3 + 0.4 * ((h & 0xff) / 255)) * s, cy = (cj + 0.3 + 0.4 * (((h >>> 8) & 0xff) / 255)) * s;
      const r = s * (0.16 + 0.14 * (((h >>> 16) & 0xff) / 255));
      w = Math.max(0, Math.min(1, r + 0.5 - Math.sqrt((u - cx) * (u - cx) + (v - cy) * (v - cy))));
      break;
    }
    case 2:
      w = Math.max(0, Math.min(1, (X0[x] * Y1[y] + X1[x] * Y0[y] - 0.1) * 2.5));
      break;
    case 3:
      w = Math.max(0, Math.min(1, 0.5 + 0.9 * (X0[x] * Y1[y] + X1[x] * Y0[y] + X2[x] * Y2[y])));
      break;
  }
  const c1 = id.coat, c2 = id.coatSecond;
  colour[0] = (c1[0] + w * (c2[0] - c1[0])) * shade;
  colour[1] = (c1[1] + w * (c2[1] - c1[1])) * shade;
  colour[2] = (c1[2] + w * (c2[2] - c1[2])) * shade;
}

/** Blends `solid` (or the coat when it is null) into pixel (x, y) with coverage `alpha`. */
function paint(cv: Canvas, x: number, y: number, alpha: number, solid: Rgb | null, shade: number): void {
  if (solid === null) coatAt(cv, x, y, shade);
  else {
    colour[0] = solid[0] * shade;
    colour[1] = solid[1] * shade;
    colour[2] = solid[2] * shade;
  }
  const p = y * SIDE + x, o = cv.offset + 3 * p, img = cv.image;
  img[o] += alpha * (colour[0] - img[o]);
  img[o + 1] += alpha * (colour[1] - img[o + 1]);
  img[o + 2] += alpha * (colour[2] - img[o + 2]);
  cv.coverage[p] += alpha * (1 - cv.coverage[p]);
}

/** Capsule from (ax, ay) to (bx, by) of radius r, in image coordinates. */
function capsule(
  cv: Canvas,
  ax: number,
  ay: number,
  bx: number,
  by: number,
  r: number,
  solid: Rgb | null,
  shade: number,
): void {
  const x0 = Math.max(0, Math.floor(Math.min(ax, bx) - r - 1)),
    x1 = Math.min(SIDE - 1, Math.ceil(Math.max(ax, bx) + r));
  const y0 = Math.max(0, Math.floor(Math.min(ay, by) - r - 1)),
    y1 = Math.min(SIDE - 1, Math.ceil(Math.max(ay, by) + r));
  const ex = bx - ax, ey = by - ay, len2 = ex * ex + ey * ey, outer2 = (r + 0.5) * (r + 0.5);
  for (let y = y0; y <= y1; y++) {
    const py = y + 0.5;
    for (let x = x0; x <= x1; x++) {
      const px = x + 0.5;
      const t = len2 > 0 ? Math.max(0, Math.min(1, ((px - ax) * ex + (py - ay) * ey) / len2)) : 0;
      const qx = px - ax - t * ex, qy = py - ay - t * ey, q2 = qx * qx + qy * qy;
      if (q2 >= outer2) continue;
      paint(cv, x, y, Math.min(1, r + 0.5 - Math.sqrt(q2)), solid, shade);
    }
  }
}

/** Ellipse centred at (cx, cy), semi-axis `major` along (cos, sin) and `minor` across, in image coordinates. */
function ellipse(
  cv: Canvas,
  cx: number,
  cy: number,
  major: number,
  minor: number,
  cos: number,
  sin: number,
  solid: Rgb | null,
  shade: number,
): void {
  const hx = Math.hypot(major * cos, minor * sin) + 1, hy = Math.hypot(major * sin, minor * cos) + 1;
  const x0 = Math.max(0, Math.floor(cx - hx)), x1 = Math.min(SIDE - 1, Math.ceil(cx + hx));
  const y0 = Math.max(0, Math.floor(cy - hy)), y1 = Math.min(SIDE - 1, Math.ceil(cy + hy));
  const ia = 1 / major, ib = 1 / minor;
  for (let y = y0; y <= y1; y++) {
    const dy = y + 0.5 - cy;
    for (let x = x0; x <= x1; x++) {
      const dx = x + 0.5 - cx;
      const u = (dx * cos + dy * sin) * ia, v = (dy * cos - dx * sin) * ib;
      const k = Math.sqrt(u * u + v * v);
      // Signed distance to first order: (k − 1) / |∇k|.
      let alpha = 1;
      if (k > 0.5) {
        const g = Math.sqrt(u * u * ia * ia + v * v * ib * ib) / k;
        alpha = Math.min(1, 0.5 - (k - 1) / g);
      }
      if (alpha > 0) paint(cv, x, y, alpha, solid, shade);
    }
  }
}

/** Lattice values of the noise background for the cells one frame touches. */
const lattice = new Float64Array(32 * 32);

/** Background (scene coordinates, so it moves with the camera jitter) into `image` at `offset`. */
function drawBackground(cv: Canvas): void {
  const id = cv.id, img = cv.image;
  const a = id.backgroundColour, b = id.backgroundSecond, g = id.ground;
  const { scale, angle, phase, salt } = id.backgroundGeometry;
  const cos = Math.cos(angle), sin = Math.sin(angle);
  const kind = BACKGROUND_KINDS.indexOf(id.background);
  // Scene point of a pixel centre: (x + 0.5 − jx, y + 0.5 − jy).
  const jx = cv.ox - id.originX, jy = cv.oy - id.originY;
  if (kind === 1) fillTables((2 * Math.PI * cos) / scale, (2 * Math.PI * sin) / scale, phase, jx, jy);
  // Value noise: lattice cells from ⌊(0.5 − j)/scale⌋ + 1, at most ⌈64/scale⌉ + 2 of them per axis (scale ≥ 5).
  const i0 = Math.floor((0.5 - jx) / scale) + 1, j0 = Math.floor((0.5 - jy) / scale) + 1;
  const cells = Math.ceil(SIDE / scale) + 2;
  if (kind === 3) {
    for (let j = 0; j < cells; j++) {
      for (let i = 0; i < cells; i++) lattice[j * 32 + i] = hashCell(i0 + i, j0 + j, salt) / 4294967296;
    }
  }
  for (let y = 0; y < SIDE; y++) {
    const sy = y + 0.5 - jy;
    // The ground is 70 % ground colour below the hoof line, with a one-pixel soft edge.
    const groundW = 0.7 * Math.max(0, Math.min(1, y + 1 - cv.oy));
    const gy = sy / scale + 1, cj = Math.floor(gy), fy = gy - cj, row = (cj - j0) * 32;
    for (let x = 0; x < SIDE; x++) {
      const sx = x + 0.5 - jx;
      let w: number;
      if (kind === 0) w = Math.max(0, Math.min(1, 0.5 + ((sx - 32) * cos + (sy - 32) * sin) / 64));
      else if (kind === 1) w = 0.5 + 0.5 * (X0[x] * Y1[y] + X1[x] * Y0[y]);
      else if (kind === 2) w = (Math.floor(sx / scale) + Math.floor(sy / scale)) & 1;
      else {
        const gx = sx / scale + 1, ci = Math.floor(gx), fx = gx - ci, k = row + ci - i0;
        const v00 = lattice[k], v10 = lattice[k + 1], v01 = lattice[k + 32], v11 = lattice[k + 33];
        w = (v00 + fx * (v10 - v00)) * (1 - fy) + (v01 + fx * (v11 - v01)) * fy;
      }
      const o = cv.offset + 3 * (y * SIDE + x);
      for (let c = 0; c < 3; c++) {
        const bg = a[c] + w * (b[c] - a[c]);
        img[o + c] = bg + groundW * (g[c] - bg);
      }
    }
  }
}

const FAR_SHADE = 0.68;

/** Draws one frame into `image` at `offset` and its keypoints into `keypoints` at `kpOffset`; returns the nose–eye distance. */
function drawFrame(
  id: QuadrupedIdentity,
  pose: QuadrupedPose,
  rng: Rng,
  image: Float32Array,
  offset: number,
  keypoints: Float32Array,
  kpOffset: number,
  coverage: Float32Array,
): number {
  const ox = id.originX + pose.jitterX, oy = id.originY + pose.jitterY;
  const cv: Canvas = { image, offset, coverage, ox, oy, id, pattern: COAT_PATTERNS.indexOf(id.pattern) };
  coverage.fill(0);
  drawBackground(cv);
  prepareCoat(cv);
  const s = skeleton(id, pose);
  const L = s.legs, lr = id.limbRadius;
  const drawLeg = (leg: number, shade: number) => {
    const o = leg * 6;
    const jx = L[o] + ox, jy = L[o + 1] + oy, kx = L[o + 2] + ox, ky = L[o + 3] + oy;
    const hx = L[o + 4] + ox, hy = L[o + 5] + oy;
    capsule(cv, jx, jy, kx, ky, lr * 1.25, null, shade);
    capsule(cv, kx, ky, hx, hy, lr, null, shade);
    // A darker hoof: the last pixel or so of the leg.
    const dx = hx - kx, dy = hy - ky, n = Math.hypot(dx, dy) || 1;
    capsule(cv, hx - (dx / n) * 0.6, hy - (dy / n) * 0.6, hx, hy, lr, id.hoof, shade);
  };
  // Far side first, darker; then tail, body, neck, head; near legs last.
  drawLeg(1, FAR_SHADE);
  drawLeg(3, FAR_SHADE);
  capsule(cv, s.tailBaseX + ox, s.tailBaseY + oy, s.tailTipX + ox, s.tailTipY + oy, id.tailRadius, id.mane, 1);
  ellipse(cv, s.bodyX + ox, s.bodyY + oy, id.bodyHalfLength, id.bodyHalfHeight, 1, 0, null, 1);
  const px = s.pollX + ox, py = s.pollY + oy;
  capsule(cv, s.neckBaseX + ox, s.neckBaseY + oy, px, py, id.neckRadius, null, 1);
  // Mane along the top of the neck, on the side away from the head.
  const nx = px - s.neckBaseX - ox, ny = py - s.neckBaseY - oy, nl = Math.hypot(nx, ny);
  const mx = (ny / nl) * id.neckRadius * 0.75, my = (-nx / nl) * id.neckRadius * 0.75;
  capsule(cv, s.withersX + ox + mx * 0.5, s.withersY + oy, px + mx * 0.6, py + my * 0.6, 0.8, id.mane, 1);
  const hl = s.headLength, hdx = s.headDirX, hdy = s.headDirY, hw = id.headHalfWidth;
  // Ear, pointing up and back from the poll.
  capsule(cv, px, py, px - hdy * 2.6 - hdx * 0.6, py + hdx * 2.6 - hdy * 0.6, 0.7, null, 0.85);
  ellipse(cv, px + 0.3 * hl * hdx, py + 0.3 * hl * hdy, 0.42 * hl, hw, hdx, hdy, null, 1);
  const nose = [s.noseX + ox, s.noseY + oy];
  const muzzle = 0.55 * hw;
  capsule(cv, px + 0.45 * hl * hdx, py + 0.45 * hl * hdy, nose[0], nose[1], muzzle, null, 1);
  const eye = [s.eyeX + ox, s.eyeY + oy];
  ellipse(cv, eye[0], eye[1], 0.6, 0.6, 1, 0, [0.05, 0.04, 0.04], 1);
  drawLeg(2, 1);
  drawLeg(0, 1);

  const kp = [
    nose[0],
    nose[1],
    eye[0],
    eye[1],
    s.withersX + ox,
    s.withersY + oy,
    s.tailBaseX + ox,
    s.tailBaseY + oy,
  ];
  // Hooves in KEYPOINTS order: front near, front far, hind near, hind far = legs 0, 1, 2, 3.
  for (let leg = 0; leg < 4; leg++) kp.push(L[leg * 6 + 4] + ox, L[leg * 6 + 5] + oy);
  keypoints.set(kp, kpOffset);

  // Sensor noise: the sum of the four bytes of one 32-bit draw (mean 510, variance 4·(256² − 1)/12), a near-Gaussian
  // far cheaper than Box–Muller.
  const scale = SENSOR_NOISE / Math.sqrt((4 * (256 * 256 - 1)) / 12);
  for (let i = offset, end = offset + 3 * PIXELS; i < end; i++) {
    const r = rng.nextUint32();
    const sum = (r & 0xff) + ((r >>> 8) & 0xff) + ((r >>> 16) & 0xff) + (r >>> 24) - 510;
    const v = image[i] + sum * scale;
    image[i] = v < 0 ? 0 : v > 1 ? 1 : v;
  }
  return Math.hypot(nose[0] - eye[0], nose[1] - eye[1]);
}

/**
 * One frame. `rng` drives per-frame texture noise only (grain/sensor noise);
 * geometry comes from identity and pose. `{ mask: true }` adds the animal's
 * coverage.
 */
export function renderQuadruped(
  identity: QuadrupedIdentity,
  pose: QuadrupedPose,
  rng: Rng,
  options: { mask?: boolean } = {},
): QuadrupedFrame {
  checkIdentityIndex(identity.index, "renderQuadruped");
  checkPose(pose);
  const image = new Float32Array(3 * PIXELS), keypoints = new Float32Array(2 * KEYPOINTS.length);
  const coverage = new Float32Array(PIXELS);
  const unit = drawFrame(identity, pose, rng, image, 0, keypoints, 0, coverage);
  return options.mask ? { image, keypoints, unit, mask: coverage } : { image, keypoints, unit };
}

/**
 * Frames `frames[k]` of identity `identities[k]`: frame f of identity i uses
 * pose and noise from Rng.derive(seed, "quadruped", i, f), so a frame's bytes
 * do not depend on which other frames are rendered.
 */
export function renderFrames(items: readonly PoseItem[], seed: number, identitySeed = 0): PoseFrames {
  checkSeed(seed, "renderFrames");
  checkSeed(identitySeed, "renderFrames");
  for (const { identity, frame } of items) {
    checkIdentityIndex(identity, "renderFrames");
    if (!(Number.isSafeInteger(frame) && frame >= 0)) {
      throw new UsageError(`renderFrames: frame ${frame}; allowed: an integer ≥ 0`);
    }
  }
  const n = items.length;
  const out: PoseFrames = {
    n,
    images: new Float32Array(n * 3 * PIXELS),
    keypoints: new Float32Array(n * 2 * KEYPOINTS.length),
    units: new Float32Array(n),
    identities: new Int32Array(n),
  };
  const cache = new Map<number, QuadrupedIdentity>();
  const coverage = new Float32Array(PIXELS);
  items.forEach(({ identity, frame }, k) => {
    let id = cache.get(identity);
    if (!id) cache.set(identity, id = quadrupedIdentity(identity, identitySeed));
    const rng = Rng.derive(seed, "quadruped", identity, frame);
    const pose = samplePose(rng);
    out.units[k] = drawFrame(
      id,
      pose,
      rng,
      out.images,
      k * 3 * PIXELS,
      out.keypoints,
      k * 2 * KEYPOINTS.length,
      coverage,
    );
    out.identities[k] = identity;
  });
  return out;
}
