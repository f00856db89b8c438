/**
 * A procedural stand-in for Horse-30 / Horse-10 (001_6f3482ea4494d2ce.md
 * §2.4, §3.1, §4.3, §5.4, §8 "§5 Pose"): 64×64 side views of a walking
 * quadruped with 8 keypoints, 30 identities that differ in coat colour and
 * pattern, limb thickness, neck/leg/body/head proportions and background, and
 * the paper's splits — 10 training identities (3 shuffles), 5 % or 50 % of
 * their frames for training, their other frames as the within-domain test and
 * the 20 unseen identities as out-of-domain test. Errors are normalised by the
 * frame's nose–eye distance (§4.3).
 *
 * Coordinates are pixels, x to the right and y down, with pixel (i, j) covering
 * [j, j + 1) × [i, i + 1), so pixel centres sit at j + 0.5. The animal faces
 * right. Shapes are drawn from their signed distances with one pixel of
 * anti-aliasing, into plain typed arrays (no tensors), bounding box by
 * bounding box, so one core renders thousands of frames per second.
 *
 * Head angle changes the nose–eye distance a little on purpose: the head turns
 * slightly toward the camera as it drops, so its projected length shrinks with
 * cos(0.6 · headAngle), as a real head segment changes length from frame to
 * frame.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { Rng } from "../core/rng.ts";

/** Image side in pixels. */
export const QUADRUPED_SIDE = 64;
/** Keypoint names, in the order of the `[8, 2]` keypoint rows. */
export const KEYPOINTS = [
  "nose",
  "eye",
  "withers",
  "tail_base",
  "front_near_hoof",
  "front_far_hoof",
  "hind_near_hoof",
  "hind_far_hoof",
] as const;
/** Number of identities (Horse-30). */
export const IDENTITY_COUNT = 30;
/** Coat patterns, one per identity (cycled by index so each appears 7–8 times). */
export const COAT_PATTERNS = ["plain", "spots", "stripes", "dapple"] as const;
/** Background kinds (cycled by index, offset from the coat so pairs vary). */
export const BACKGROUND_KINDS = ["gradient", "stripes", "checker", "noise"] as const;
/** Largest camera jitter in pixels, each axis. */
export const MAX_JITTER = 4;
/** Stride amplitude range (radians of leg swing). */
export const STRIDE_RANGE: readonly [number, number] = [0.15, 0.5];
/** Largest head angle (radians either way around the identity's resting angle). */
export const MAX_HEAD_ANGLE = 0.35;
/** Standard deviation of the per-frame sensor noise. */
export const SENSOR_NOISE = 0.02;

export type CoatPattern = (typeof COAT_PATTERNS)[number];
export type BackgroundKind = (typeof BACKGROUND_KINDS)[number];
type Rgb = [number, number, number];

/** Appearance and proportions of one identity; plain numbers, JSON-serialisable. Lengths in pixels, angles in radians. */
export interface QuadrupedIdentity {
  index: number;
  seed: number;
  /** Body ellipse semi-axes. */
  bodyHalfLength: number;
  bodyHalfHeight: number;
  /** Leg segments: shoulder/hip → knee/hock → hoof. */
  upperLegLength: number;
  lowerLegLength: number;
  /** Capsule radius of the legs. */
  limbRadius: number;
  neckLength: number;
  neckRadius: number;
  /** Neck elevation above horizontal at rest. */
  neckAngle: number;
  /** Poll → nose length. */
  headLength: number;
  headHalfWidth: number;
  /** Head direction below horizontal at rest. */
  headRestAngle: number;
  tailLength: number;
  tailRadius: number;
  /** Tail angle from vertical, negative = backward. */
  tailAngle: number;
  /** Hoof lift in the swing phase, as a fraction of the leg length at the largest stride. */
  hoofLift: number;
  coat: [number, number, number];
  coatSecond: [number, number, number];
  mane: [number, number, number];
  hoof: [number, number, number];
  pattern: CoatPattern;
  /** Pattern period (spots: cell size) in pixels. */
  patternScale: number;
  patternAngle: number;
  patternPhase: number;
  /** 32-bit salt of the spot positions. */
  patternSalt: number;
  background: BackgroundKind;
  backgroundColour: [number, number, number];
  backgroundSecond: [number, number, number];
  ground: [number, number, number];
  /** Background period (gradient: unused; noise: lattice spacing) in pixels. */
  backgroundScale: number;
  backgroundAngle: number;
  backgroundPhase: number;
  backgroundSalt: number;
  /** Where the animal's local origin (on the ground under the body centre) sits in an unjittered frame. */
  originX: number;
  originY: number;
}

/** A walking pose. */
export interface QuadrupedPose {
  /** Gait phase in [0, 2π). */
  phase: number;
  /** Leg swing amplitude in radians, within {@linkcode STRIDE_RANGE}. */
  stride: number;
  /** Head angle around the resting angle, |headAngle| ≤ {@linkcode MAX_HEAD_ANGLE}; positive lowers the head. */
  headAngle: number;
  /** Camera jitter in [−4, 4] px: the whole scene moves. */
  jitterX: number;
  jitterY: number;
}

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

/** One frame of one identity. */
export interface PoseItem {
  identity: number;
  frame: number;
}

/** Train, within-domain and out-of-domain frames of one shuffle. */
export interface PoseSplit {
  trainIdentities: number[];
  oodIdentities: number[];
  train: PoseItem[];
  within: PoseItem[];
  ood: PoseItem[];
}

const SIDE = QUADRUPED_SIDE;
const PIXELS = SIDE * SIDE;

function isInt(value: number): boolean {
  return Number.isSafeInteger(value);
}

function checkIdentityIndex(index: number, what: string): void {
  if (!(isInt(index) && index >= 0 && index < IDENTITY_COUNT)) {
    throw new UsageError(`${what}: identity ${index}; allowed: an integer in [0, ${IDENTITY_COUNT})`);
  }
}

function checkSeed(seed: number, what: string): void {
  if (!isInt(seed)) throw new UsageError(`${what}: seed ${seed}; allowed: an integer`);
}

function luminance(c: Rgb): number {
  return 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
}

/** A colour of hue `hue`, saturation `sat` and luminance `target` (scaled, then mixed with white if it cannot get bright enough). */
function colourAt(hue: number, sat: number, target: number): Rgb {
  const h = ((hue % 1) + 1) % 1 * 6, f = h - Math.floor(h);
  const p = 1 - sat, q = 1 - sat * f, t = 1 - sat * (1 - f);
  const rgb: Rgb = [[1, t, p], [q, 1, p], [p, 1, t], [p, q, 1], [t, p, 1], [1, p, q]][Math.floor(h) % 6] as Rgb;
  const scaled = rgb.map((v) => v * target / luminance(rgb)) as Rgb;
  const top = Math.max(...scaled);
  if (top <= 1) return scaled;
  const capped = scaled.map((v) => v / top) as Rgb;
  const lum = luminance(capped), w = (target - lum) / (1 - lum);
  return capped.map((v) => v + w * (1 - v)) as Rgb;
}

function uniform(rng: Rng, lo: number, hi: number): number {
  return lo + (hi - lo) * rng.uniform();
}

/** 32-bit integer hash of a lattice cell, for spots and value noise. */
function hashCell(i: number, j: number, salt: number): number {
  let h = Math.imul(i, 0x27d4eb2d) ^ Math.imul(j, 0x165667b1) ^ salt;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Identity `index` ∈ [0, 30): deterministic from (seed, index), default seed 0.
 * Pattern and background kind cycle with the index and the coat hue steps by
 * the golden ratio, so the 30 identities spread over all kinds and hues; the
 * coat is kept at least 0.3 in luminance away from the background.
 */
export function quadrupedIdentity(index: number, seed = 0): QuadrupedIdentity {
  checkIdentityIndex(index, "quadrupedIdentity");
  checkSeed(seed, "quadrupedIdentity");
  const rng = Rng.derive(seed, "quadruped/identity", index);
  const hueOffset = Rng.derive(seed, "quadruped/hue").uniform();
  const darkBackground = rng.uniform() < 0.5;
  const backgroundLum = darkBackground ? uniform(rng, 0.15, 0.32) : uniform(rng, 0.62, 0.82);
  const coatLum = darkBackground
    ? uniform(rng, backgroundLum + 0.32, Math.min(0.9, backgroundLum + 0.6))
    : uniform(rng, Math.max(0.1, backgroundLum - 0.6), backgroundLum - 0.32);
  const away = darkBackground ? 1 : -1;
  const coatHue = hueOffset + index * 0.6180339887;
  const coatSat = uniform(rng, 0.3, 0.75);
  // The pattern's second colour moves away from the background, or toward it when that would leave [0.06, 0.94].
  let secondLum = coatLum + away * uniform(rng, 0.15, 0.25);
  if (secondLum > 0.94 || secondLum < 0.06) secondLum = coatLum - away * uniform(rng, 0.12, 0.16);
  const backgroundHue = rng.uniform(), backgroundSat = uniform(rng, 0.15, 0.55);
  const identity: QuadrupedIdentity = {
    index,
    seed,
    bodyHalfLength: uniform(rng, 12, 14.5),
    bodyHalfHeight: uniform(rng, 4.8, 6.8),
    upperLegLength: uniform(rng, 6.5, 8.5),
    lowerLegLength: uniform(rng, 6.5, 8.5),
    limbRadius: uniform(rng, 1.05, 1.9),
    neckLength: uniform(rng, 10, 13),
    neckRadius: uniform(rng, 2, 3),
    neckAngle: uniform(rng, 0.75, 1.05),
    headLength: uniform(rng, 6.2, 9),
    headHalfWidth: uniform(rng, 1.7, 2.4),
    headRestAngle: uniform(rng, 0.7, 1.0),
    tailLength: uniform(rng, 7.5, 10.5),
    tailRadius: uniform(rng, 0.8, 1.3),
    tailAngle: uniform(rng, -0.95, -0.55),
    hoofLift: uniform(rng, 0.12, 0.22),
    coat: colourAt(coatHue, coatSat, coatLum),
    coatSecond: colourAt(coatHue + uniform(rng, -0.08, 0.08), coatSat, secondLum),
    mane: colourAt(coatHue + 0.5 * rng.uniform(), uniform(rng, 0.2, 0.6), coatLum + away * 0.12),
    hoof: colourAt(rng.uniform(), 0.2, darkBackground ? Math.min(0.95, coatLum + 0.05) : Math.max(0.05, coatLum - 0.1)),
    pattern: COAT_PATTERNS[index % COAT_PATTERNS.length],
    patternScale: uniform(rng, 3.5, 7),
    patternAngle: uniform(rng, 0, Math.PI),
    patternPhase: uniform(rng, 0, 2 * Math.PI),
    patternSalt: rng.nextUint32(),
    background: BACKGROUND_KINDS[(index + Math.floor(index / 4)) % BACKGROUND_KINDS.length],
    backgroundColour: colourAt(backgroundHue, backgroundSat, backgroundLum + 0.07),
    backgroundSecond: colourAt(backgroundHue + uniform(rng, -0.15, 0.15), backgroundSat, backgroundLum - 0.07),
    ground: colourAt(uniform(rng, 0.05, 0.35), uniform(rng, 0.2, 0.5), backgroundLum + (darkBackground ? -0.05 : 0.05)),
    backgroundScale: uniform(rng, 5, 13),
    backgroundAngle: uniform(rng, 0, Math.PI),
    backgroundPhase: uniform(rng, 0, 2 * Math.PI),
    backgroundSalt: rng.nextUint32(),
    originX: 0,
    originY: 0,
  };
  // Centre the union of the drawn extents over the gait cycle, strides and head angles.
  const box = [Infinity, Infinity, -Infinity, -Infinity];
  for (let k = 0; k < 16; k++) {
    for (const stride of STRIDE_RANGE) {
      for (const headAngle of [-MAX_HEAD_ANGLE, 0, MAX_HEAD_ANGLE]) {
        const pose = { phase: (k * Math.PI) / 8, stride, headAngle, jitterX: 0, jitterY: 0 };
        extendBox(box, skeleton(identity, pose), identity);
      }
    }
  }
  identity.originX = SIDE / 2 - (box[0] + box[2]) / 2;
  identity.originY = SIDE / 2 - (box[1] + box[3]) / 2;
  return identity;
}

/** A walking pose: phase ∈ [0, 2π), stride amplitude, head angle, camera jitter in [−4, 4] px each. */
export function samplePose(rng: Rng): QuadrupedPose {
  return {
    phase: 2 * Math.PI * rng.uniform(),
    stride: uniform(rng, STRIDE_RANGE[0], STRIDE_RANGE[1]),
    headAngle: uniform(rng, -MAX_HEAD_ANGLE, MAX_HEAD_ANGLE),
    jitterX: uniform(rng, -MAX_JITTER, MAX_JITTER),
    jitterY: uniform(rng, -MAX_JITTER, MAX_JITTER),
  };
}

/** Joint positions of one pose in animal coordinates (origin on the ground under the body centre). */
interface Skeleton {
  bodyX: number;
  bodyY: number;
  /** Per leg (front near, front far, hind near, hind far): joint, knee, hoof as x, y. */
  legs: Float64Array;
  withersX: number;
  withersY: number;
  tailBaseX: number;
  tailBaseY: number;
  tailTipX: number;
  tailTipY: number;
  neckBaseX: number;
  neckBaseY: number;
  pollX: number;
  pollY: number;
  /** Unit head direction (poll → nose) and its projected length. */
  headDirX: number;
  headDirY: number;
  headLength: number;
  noseX: number;
  noseY: number;
  eyeX: number;
  eyeY: number;
}

/** Leg phase offsets of a lateral-sequence walk: near/far in antiphase, hind a quarter cycle ahead of front. */
const LEG_PHASE = [0, Math.PI, -Math.PI / 2, Math.PI / 2];
/** Far legs hang from joints a little behind the near ones (upper right of them, seen from the near side). */
const FAR_OFFSET_X = 1, FAR_OFFSET_Y = -0.6;

function skeleton(id: QuadrupedIdentity, pose: QuadrupedPose): Skeleton {
  const a = id.bodyHalfLength, b = id.bodyHalfHeight;
  const legLength = id.upperLegLength + id.lowerLegLength;
  // Joints at 94 % of the leg length above ground: a planted leg bends a little mid-stance and reaches the ground.
  const jointY = -0.94 * legLength;
  const bodyY = jointY - 0.4 * b;
  const legs = new Float64Array(24);
  const reach = legLength * Math.sin(pose.stride);
  const lift = id.hoofLift * legLength * (pose.stride / STRIDE_RANGE[1]);
  for (let leg = 0; leg < 4; leg++) {
    const front = leg < 2, far = leg % 2 === 1;
    const jx = (front ? 0.62 * a : -0.62 * a) + (far ? FAR_OFFSET_X : 0);
    const jy = jointY + (far ? FAR_OFFSET_Y : 0);
    const phi = pose.phase + LEG_PHASE[leg];
    // The hoof moves forward (lifted) while cos φ > 0 and backward on the ground otherwise.
    const hx = jx + reach * Math.sin(phi);
    const hy = -lift * Math.max(0, Math.cos(phi)) + (far ? FAR_OFFSET_Y : 0);
    const l1 = id.upperLegLength, l2 = id.lowerLegLength;
    let dx = hx - jx, dy = hy - jy;
    let d = Math.hypot(dx, dy);
    dx /= d;
    dy /= d;
    d = Math.min(d, 0.999 * (l1 + l2));
    // Two-link inverse kinematics; the front knee bends forward, the hind hock backward.
    const cosAlpha = Math.max(-1, Math.min(1, (l1 * l1 + d * d - l2 * l2) / (2 * l1 * d)));
    const alpha = Math.acos(cosAlpha) * (front ? 1 : -1);
    const c = Math.cos(alpha), s = Math.sin(alpha);
    // Rotating (dx, dy) by −α in y-down coordinates turns a downward leg's knee toward +x.
    const kx = jx + l1 * (dx * c + dy * s), ky = jy + l1 * (-dx * s + dy * c);
    const o = leg * 6;
    legs[o] = jx;
    legs[o + 1] = jy;
    legs[o + 2] = kx;
    legs[o + 3] = ky;
    legs[o + 4] = jx + d * dx;
    legs[o + 5] = jy + d * dy;
  }
  const withersX = 0.5 * a;
  const withersY = bodyY - b * Math.sqrt(1 - 0.25) + 1;
  const tailBaseX = -0.85 * a, tailBaseY = bodyY - 0.38 * b;
  const tailAngle = id.tailAngle + 0.12 * Math.sin(pose.phase * 2);
  const neckBaseX = 0.72 * a, neckBaseY = bodyY - 0.3 * b;
  const neckAngle = id.neckAngle - 0.5 * pose.headAngle;
  const pollX = neckBaseX + id.neckLength * Math.cos(neckAngle);
  const pollY = neckBaseY - id.neckLength * Math.sin(neckAngle);
  const headAngle = id.headRestAngle + pose.headAngle;
  const headDirX = Math.cos(headAngle), headDirY = Math.sin(headAngle);
  const headLength = id.headLength * Math.cos(0.6 * pose.headAngle);
  // The eye sits a quarter down the head, on its upper (forehead) side.
  const eyeAlong = 0.25 * headLength, eyeAcross = 0.4 * id.headHalfWidth;
  return {
    bodyX: 0,
    bodyY,
    legs,
    withersX,
    withersY,
    tailBaseX,
    tailBaseY,
    tailTipX: tailBaseX + id.tailLength * Math.sin(tailAngle),
    tailTipY: tailBaseY + id.tailLength * Math.cos(tailAngle),
    neckBaseX,
    neckBaseY,
    pollX,
    pollY,
    headDirX,
    headDirY,
    headLength,
    noseX: pollX + headLength * headDirX,
    noseY: pollY + headLength * headDirY,
    eyeX: pollX + eyeAlong * headDirX + eyeAcross * headDirY,
    eyeY: pollY + eyeAlong * headDirY - eyeAcross * headDirX,
  };
}

/** Grows `box` ([minX, minY, maxX, maxY]) by everything drawn for skeleton `s` (capsule ends padded by their radii). */
function extendBox(box: number[], s: Skeleton, id: QuadrupedIdentity): void {
  const add = (x: number, y: number, r: number) => {
    box[0] = Math.min(box[0], x - r);
    box[1] = Math.min(box[1], y - r);
    box[2] = Math.max(box[2], x + r);
    box[3] = Math.max(box[3], y + r);
  };
  for (let i = 0; i < 12; i++) add(s.legs[2 * i], s.legs[2 * i + 1], 2);
  add(s.tailTipX, s.tailTipY, 1.5);
  add(s.noseX, s.noseY, 1.5);
  add(s.pollX, s.pollY, 3.5);
  add(s.bodyX - id.bodyHalfLength, s.bodyY, id.bodyHalfHeight);
  add(s.bodyX + id.bodyHalfLength, s.bodyY, id.bodyHalfHeight);
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
  const id = cv.id, f = (2 * Math.PI) / id.patternScale;
  const cos = Math.cos(id.patternAngle), sin = Math.sin(id.patternAngle);
  if (cv.pattern === 2) fillTables(f * cos, f * sin, id.patternPhase, cv.ox, cv.oy);
  else if (cv.pattern === 3) {
    fillTables(0.9 * f * cos, 0.9 * f * sin, 0, cv.ox, cv.oy);
    for (let i = 0; i < SIDE; i++) {
      X2[i] = Math.sin(f * (i + 0.5 - cv.ox) + id.patternPhase);
      Y2[i] = Math.sin(f * (i + 0.5 - cv.oy) - id.patternPhase);
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
      const s = id.patternScale, ci = Math.floor(u / s), cj = Math.floor(v / s);
      const h = hashCell(ci, cj, id.patternSalt);
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
  const cos = Math.cos(id.backgroundAngle), sin = Math.sin(id.backgroundAngle);
  const scale = id.backgroundScale, salt = id.backgroundSalt;
  const kind = BACKGROUND_KINDS.indexOf(id.background);
  // Scene point of a pixel centre: (x + 0.5 − jx, y + 0.5 − jy).
  const jx = cv.ox - id.originX, jy = cv.oy - id.originY;
  if (kind === 1) fillTables((2 * Math.PI * cos) / scale, (2 * Math.PI * sin) / scale, id.backgroundPhase, jx, jy);
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

function checkPose(pose: QuadrupedPose): void {
  const { phase, stride, headAngle, jitterX, jitterY } = pose;
  if (!Number.isFinite(phase)) throw new UsageError(`renderQuadruped: phase ${phase}; allowed: a finite number`);
  if (!(stride >= STRIDE_RANGE[0] && stride <= STRIDE_RANGE[1])) {
    throw new UsageError(`renderQuadruped: stride ${stride}; allowed: [${STRIDE_RANGE[0]}, ${STRIDE_RANGE[1]}]`);
  }
  if (!(Math.abs(headAngle) <= MAX_HEAD_ANGLE)) {
    throw new UsageError(`renderQuadruped: headAngle ${headAngle}; allowed: [−${MAX_HEAD_ANGLE}, ${MAX_HEAD_ANGLE}]`);
  }
  if (!(Math.abs(jitterX) <= MAX_JITTER && Math.abs(jitterY) <= MAX_JITTER)) {
    throw new UsageError(
      `renderQuadruped: jitter (${jitterX}, ${jitterY}); allowed: each in [−${MAX_JITTER}, ${MAX_JITTER}]`,
    );
  }
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
    if (!(isInt(frame) && frame >= 0)) throw new UsageError(`renderFrames: frame ${frame}; allowed: an integer ≥ 0`);
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

/**
 * Shuffle `shuffle` (0, 1, 2, …) picks `trainIdentities` of `identities` by
 * Rng.derive(seed, "split", shuffle).permutation; each train identity's
 * `framesPerIdentity` frames are permuted and the first
 * round(fraction · framesPerIdentity) (at least 1) train, the rest are the
 * within-domain test; every other identity contributes frames
 * 0..oodFramesPerIdentity−1 to OOD. Rounding is Math.round, halves up
 * (0.05 · 150 = 7.5 → 8). Identity lists are ascending; the frame
 * permutations continue the same generator, identity by identity in
 * ascending order.
 */
export function poseSplit(options: {
  identities?: number;
  trainIdentities: number;
  framesPerIdentity: number;
  trainFraction: number;
  oodFramesPerIdentity: number;
  shuffle: number;
  seed: number;
}): PoseSplit {
  const { identities = IDENTITY_COUNT, trainIdentities, framesPerIdentity, trainFraction } = options;
  const { oodFramesPerIdentity, shuffle, seed } = options;
  if (!(isInt(identities) && identities >= 2 && identities <= IDENTITY_COUNT)) {
    throw new UsageError(`poseSplit: identities ${identities}; allowed: an integer in [2, ${IDENTITY_COUNT}]`);
  }
  if (!(isInt(trainIdentities) && trainIdentities >= 1 && trainIdentities < identities)) {
    throw new UsageError(
      `poseSplit: trainIdentities ${trainIdentities}; allowed: an integer in [1, ${
        identities - 1
      }] (fewer than identities = ${identities})`,
    );
  }
  if (!(isInt(framesPerIdentity) && framesPerIdentity >= 1)) {
    throw new UsageError(`poseSplit: framesPerIdentity ${framesPerIdentity}; allowed: an integer ≥ 1`);
  }
  if (!(trainFraction > 0 && trainFraction <= 1)) {
    throw new UsageError(`poseSplit: trainFraction ${trainFraction}; allowed: (0, 1]`);
  }
  if (!(isInt(oodFramesPerIdentity) && oodFramesPerIdentity >= 1)) {
    throw new UsageError(`poseSplit: oodFramesPerIdentity ${oodFramesPerIdentity}; allowed: an integer ≥ 1`);
  }
  if (!(isInt(shuffle) && shuffle >= 0)) throw new UsageError(`poseSplit: shuffle ${shuffle}; allowed: an integer ≥ 0`);
  checkSeed(seed, "poseSplit");
  const rng = Rng.derive(seed, "split", shuffle);
  const order = Array.from(rng.permutation(identities));
  const train = order.slice(0, trainIdentities).sort((a, b) => a - b);
  const ood = order.slice(trainIdentities).sort((a, b) => a - b);
  const nTrain = Math.max(1, Math.round(trainFraction * framesPerIdentity));
  const split: PoseSplit = { trainIdentities: train, oodIdentities: ood, train: [], within: [], ood: [] };
  for (const identity of train) {
    const frames = rng.permutation(framesPerIdentity);
    frames.forEach((frame, k) => (k < nTrain ? split.train : split.within).push({ identity, frame }));
  }
  for (const identity of ood) {
    for (let frame = 0; frame < oodFramesPerIdentity; frame++) split.ood.push({ identity, frame });
  }
  return split;
}
