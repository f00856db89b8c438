/**
 * A procedural stand-in for Horse-30 / Horse-10 (Schneider2023
 * Ch. 5): 64×64 side views of a walking
 * quadruped with 8 keypoints, 30 identities that differ in coat colour and
 * pattern, limb thickness, neck/leg/body/head proportions and background, and
 * the paper's splits — 10 training identities (3 shuffles), 5 % or 50 % of
 * their frames for training, their other frames as the within-domain test and
 * the 20 unseen identities as out-of-domain test. Errors are normalised by the
 * frame's nose–eye distance.
 *
 * This file holds the identities, poses, skeleton and splits; the frames are
 * drawn by quadruped_render.ts. Coordinates are pixels, x to the right and y
 * down, with pixel (i, j) covering [j, j + 1) × [i, i + 1), so pixel centres
 * sit at j + 0.5. The animal faces right.
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

/** One of {@linkcode COAT_PATTERNS}. */
export type CoatPattern = (typeof COAT_PATTERNS)[number];
/** One of {@linkcode BACKGROUND_KINDS}. */
export type BackgroundKind = (typeof BACKGROUND_KINDS)[number];
/** A colour, channels in [0, 1]. */
export type Rgb = [number, number, number];

/** Geometry of a coat or background texture; plain numbers, drawn once per identity. */
export interface TextureGeometry {
  /** Period in pixels. */
  scale: number;
  /** Direction of the stripes or gradient, radians. */
  angle: number;
  /** Phase of the periodic textures, radians. */
  phase: number;
  /** 32-bit salt of the hashed lattices (spot positions, value noise). */
  salt: number;
}

/** Appearance and proportions of one identity; plain numbers, JSON-serialisable. Lengths in pixels, angles in radians. */
export interface QuadrupedIdentity {
  /** Identity index in [0, {@linkcode IDENTITY_COUNT}). */
  index: number;
  /** Seed it was drawn from, with `index`. */
  seed: number;
  /** Body ellipse semi-axis along the body. */
  bodyHalfLength: number;
  /** Body ellipse semi-axis across the body (vertical). */
  bodyHalfHeight: number;
  /** Leg segment shoulder/hip → knee/hock. */
  upperLegLength: number;
  /** Leg segment knee/hock → hoof. */
  lowerLegLength: number;
  /** Capsule radius of the legs. */
  limbRadius: number;
  /** Neck capsule length, neck base to poll. */
  neckLength: number;
  /** Neck capsule radius. */
  neckRadius: number;
  /** Neck elevation above horizontal at rest. */
  neckAngle: number;
  /** Poll → nose length. */
  headLength: number;
  /** Half the head's width across its axis. */
  headHalfWidth: number;
  /** Head direction below horizontal at rest. */
  headRestAngle: number;
  /** Tail capsule length. */
  tailLength: number;
  /** Tail capsule radius. */
  tailRadius: number;
  /** Tail angle from vertical, negative = backward. */
  tailAngle: number;
  /** Hoof lift in the swing phase, as a fraction of the leg length at the largest stride. */
  hoofLift: number;
  /** Main coat colour. */
  coat: Rgb;
  /** Colour of the coat pattern's marks. */
  coatSecond: Rgb;
  /** Mane and tail colour. */
  mane: Rgb;
  /** Hoof colour. */
  hoof: Rgb;
  /** Coat pattern. */
  pattern: CoatPattern;
  /** Coat pattern geometry; its period is the spots' cell size. */
  patternGeometry: TextureGeometry;
  /** Background texture. */
  background: BackgroundKind;
  /** Main background colour. */
  backgroundColour: Rgb;
  /** Second colour of the background texture. */
  backgroundSecond: Rgb;
  /** Ground colour. */
  ground: Rgb;
  /** Background geometry; the gradient has no period, the noise's is its lattice spacing. */
  backgroundGeometry: TextureGeometry;
  /** Column of the animal's local origin (on the ground under the body centre) in an unjittered frame. */
  originX: number;
  /** Row of that origin. */
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
  /** Horizontal camera jitter in [−4, 4] px: the whole scene moves. */
  jitterX: number;
  /** Vertical camera jitter in [−4, 4] px. */
  jitterY: number;
}

/** One frame of one identity. */
export interface PoseItem {
  /** Identity index. */
  identity: number;
  /** Frame index within the identity's frames. */
  frame: number;
}

/** Train, within-domain and out-of-domain frames of one shuffle. */
export interface PoseSplit {
  /** Identities whose frames train, ascending. */
  trainIdentities: number[];
  /** The other identities, ascending. */
  oodIdentities: number[];
  /** Training frames. */
  train: PoseItem[];
  /** The train identities' other frames: the within-domain test. */
  within: PoseItem[];
  /** Frames of the other identities: the out-of-domain test. */
  ood: PoseItem[];
}

const SIDE = QUADRUPED_SIDE;

function isInt(value: number): boolean {
  return Number.isSafeInteger(value);
}

/** Throws a UsageError naming `what` unless `index` is an identity index, an integer in [0, 30). */
export function checkIdentityIndex(index: number, what: string): void {
  if (!(isInt(index) && index >= 0 && index < IDENTITY_COUNT)) {
    throw new UsageError(`${what}: identity ${index}; allowed: an integer in [0, ${IDENTITY_COUNT})`);
  }
}

/** Throws a UsageError naming `what` unless `seed` is a safe integer. */
export function checkSeed(seed: number, what: string): void {
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

/** A texture's geometry: period uniform in [minScale, maxScale) px, angle in [0, π), phase in [0, 2π), a salt. */
function textureGeometry(rng: Rng, minScale: number, maxScale: number): TextureGeometry {
  return {
    scale: uniform(rng, minScale, maxScale),
    angle: uniform(rng, 0, Math.PI),
    phase: uniform(rng, 0, 2 * Math.PI),
    salt: rng.nextUint32(),
  };
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
    patternGeometry: textureGeometry(rng, 3.5, 7),
    background: BACKGROUND_KINDS[(index + Math.floor(index / 4)) % BACKGROUND_KINDS.length],
    backgroundColour: colourAt(backgroundHue, backgroundSat, backgroundLum + 0.07),
    backgroundSecond: colourAt(backgroundHue + uniform(rng, -0.15, 0.15), backgroundSat, backgroundLum - 0.07),
    ground: colourAt(uniform(rng, 0.05, 0.35), uniform(rng, 0.2, 0.5), backgroundLum + (darkBackground ? -0.05 : 0.05)),
    backgroundGeometry: textureGeometry(rng, 5, 13),
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

/** Joint positions of one pose in animal coordinates (pixels, y down, origin on the ground under the body centre). */
export interface Skeleton {
  /** Body centre, x. */
  bodyX: number;
  /** Body centre, y. */
  bodyY: number;
  /** Per leg (front near, front far, hind near, hind far): joint, knee, hoof as x, y. */
  legs: Float64Array;
  /** Withers (top of the shoulders), x. */
  withersX: number;
  /** Withers, y. */
  withersY: number;
  /** Tail base, x. */
  tailBaseX: number;
  /** Tail base, y. */
  tailBaseY: number;
  /** Tail tip, x. */
  tailTipX: number;
  /** Tail tip, y. */
  tailTipY: number;
  /** Neck base, x. */
  neckBaseX: number;
  /** Neck base, y. */
  neckBaseY: number;
  /** Poll (top of the head, where the neck ends), x. */
  pollX: number;
  /** Poll, y. */
  pollY: number;
  /** Unit head direction (poll → nose), x. */
  headDirX: number;
  /** Unit head direction, y. */
  headDirY: number;
  /** Projected poll → nose length. */
  headLength: number;
  /** Nose, x. */
  noseX: number;
  /** Nose, y. */
  noseY: number;
  /** Eye, x. */
  eyeX: number;
  /** Eye, y. */
  eyeY: number;
}

/** Leg phase offsets of a lateral-sequence walk: near/far in antiphase, hind a quarter cycle ahead of front. */
const LEG_PHASE = [0, Math.PI, -Math.PI / 2, Math.PI / 2];
/** Far legs hang from joints a little behind the near ones (upper right of them, seen from the near side). */
const FAR_OFFSET_X = 1, FAR_OFFSET_Y = -0.6;

/** The joints of identity `id` in `pose`: two-link legs by inverse kinematics, neck, head, eye and tail. */
export function skeleton(id: QuadrupedIdentity, pose: QuadrupedPose): Skeleton {
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

/** Throws a UsageError unless `pose` is inside the ranges {@linkcode samplePose} draws from. */
export function checkPose(pose: QuadrupedPose): void {
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
