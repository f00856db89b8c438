/**
 * "KITTI-Masks-like" pairs (Klindt2021 §4, App. D.5, G.1): binary single-channel
 * pedestrian silhouettes whose centre x, y and area follow the random walk of
 * {@linkcode naturalSequences} with the generalized-Laplace increments fitted
 * to KITTI-MOTS (Klindt2021 Tables 11–13), sampled as pairs (frame s, frame s+Δ)
 * of one sequence with Δ ~ U{1..maxDelta} clipped at the sequence end.
 *
 * The real KITTI Masks are measured pedestrian masks; this procedural
 * stand-in differs as follows:
 * - the silhouette is a fixed walking figure (head circle, torso ellipse, two
 *   leg strokes in a stride, about 1:2.5 wide to high) scaled to the area;
 *   no pose change, occlusion, camera ego-motion or segmentation noise;
 * - Δx, Δy, Δarea are independent draws (the natural dependencies between
 *   them are lost, which Klindt2021 Tables 21–22 found does not hurt SlowVAE);
 * - all sequences have one length (the real ones have 2–710 frames, 40 on
 *   average), and positions cover the whole frame, so a silhouette near a
 *   border is cut by it (as at KITTI's window borders), while its factors
 *   keep describing the whole silhouette.
 *
 * Factors are the silhouette's area centroid x, y in pixels of the 64-px
 * frame (continuous, pixel p covers [p, p+1)) and its area in pixels of
 * the 64-px frame. x and y are taken after augmentation, since augmentation
 * moves the object and the factors should describe the image (the real
 * dataset's factors are the x, y, area measured on the masks before
 * augmentation). 32×32 images are the 64×64 ones averaged over 2×2 blocks;
 * the factors stay in 64-px units.
 *
 * @module
 */
import type { Image } from "../core/png.ts";
import type { Rng } from "../core/rng.ts";
import { halve } from "./dsprites.ts";
import { NATURAL_FRAME, naturalSequences } from "./pair_samplers.ts";
import { imageGrid } from "./preview.ts";

/** Factor names, in the order of the factor columns. */
export const KITTI_FACTORS = ["x", "y", "area"] as const;

/**
 * Default area range in pixels of the 64-px frame: KITTI Masks drops masks
 * under 30 px; at 600 px the figure is about 50 px high, three quarters of the frame.
 */
export const KITTI_AREA_RANGE: readonly [number, number] = [30, 600];

/** Augmentation limits of Klindt2021 App. D.5 (translation in pixels of the 64-px frame). */
export const KITTI_AUGMENTATION = { shift: 5, degrees: 2 } as const;

// The silhouette in units of its height: u to the right (the walking direction), v downwards,
// v ∈ [−0.5, 0.5]; before centring on its area centroid.
const HEAD = { u: 0.03, v: -0.425, r: 0.075 };
const TORSO = { v: -0.13, a: 0.19, b: 0.25 };
const LEG_RADIUS = 0.05;
/** Legs as segments [u0, v0, u1, v1]: the rear one nearly vertical, the front one striding forward. */
const LEGS = [[-0.04, 0.05, -0.07, 0.45], [0.04, 0.05, 0.15, 0.45]] as const;
const BOX = { u0: -0.2, u1: 0.21, v0: -0.5, v1: 0.5 };

function insideLeg(leg: readonly number[], u: number, v: number): boolean {
  const du = leg[2] - leg[0], dv = leg[3] - leg[1];
  const t = Math.max(0, Math.min(1, ((u - leg[0]) * du + (v - leg[1]) * dv) / (du * du + dv * dv)));
  const eu = u - leg[0] - t * du, ev = v - leg[1] - t * dv;
  return eu * eu + ev * ev <= LEG_RADIUS * LEG_RADIUS;
}

/** Whether the point (u, v), in units of the silhouette height, lies inside the uncentred silhouette. */
function insideSilhouette(u: number, v: number): boolean {
  const hu = u - HEAD.u, hv = v - HEAD.v;
  if (hu * hu + hv * hv <= HEAD.r * HEAD.r) return true;
  const tu = u / TORSO.a, tv = (v - TORSO.v) / TORSO.b;
  if (tu * tu + tv * tv <= 1) return true;
  return v >= LEGS[0][1] - LEG_RADIUS && (insideLeg(LEGS[0], u, v) || insideLeg(LEGS[1], u, v));
}

/** Area (in height²) and centroid of the silhouette, by the midpoint rule on a fine grid. */
function silhouetteMoments(): { area: number; u: number; v: number } {
  const step = 1 / 1024;
  let count = 0, su = 0, sv = 0;
  for (let v = BOX.v0 + step / 2; v < BOX.v1; v += step) {
    for (let u = BOX.u0 + step / 2; u < BOX.u1; u += step) {
      if (!insideSilhouette(u, v)) continue;
      count++;
      su += u;
      sv += v;
    }
  }
  return { area: count * step * step, u: su / count, v: sv / count };
}

const MOMENTS = silhouetteMoments();
/** Silhouette area in units of its height squared: a figure of height h covers `SILHOUETTE_AREA`·h² pixels. */
export const SILHOUETTE_AREA: number = MOMENTS.area;

/**
 * Draws one binary silhouette into a 64×64 single-channel image at
 * `out[offset .. offset + 4096)` (pixels are set, never cleared): area
 * centroid at (x, y) in pixels (pixel p covers [p, p+1)), `area` pixels,
 * rotated by `angle` radians (clockwise on screen, as image rows grow
 * downwards), facing left when `flipped`. A pixel is set when its centre
 * lies inside, so the pixel count matches `area` up to the rasterisation
 * of the outline. Only the figure's bounding box is visited.
 */
export function drawSilhouette(
  out: Float32Array,
  offset: number,
  x: number,
  y: number,
  area: number,
  angle: number,
  flipped: boolean,
): void {
  const height = Math.sqrt(area / SILHOUETTE_AREA);
  const cos = Math.cos(angle), sin = Math.sin(angle), f = flipped ? -1 : 1;
  // Bounding box: the centred unit box's corners mapped to pixels.
  let left = Infinity, right = -Infinity, top = Infinity, bottom = -Infinity;
  for (const bu of [BOX.u0, BOX.u1]) {
    for (const bv of [BOX.v0, BOX.v1]) {
      const u = f * (bu - MOMENTS.u) * height, v = (bv - MOMENTS.v) * height;
      const px = x + cos * u - sin * v, py = y + sin * u + cos * v;
      left = Math.min(left, px);
      right = Math.max(right, px);
      top = Math.min(top, py);
      bottom = Math.max(bottom, py);
    }
  }
  const col0 = Math.max(0, Math.floor(left)), col1 = Math.min(NATURAL_FRAME - 1, Math.ceil(right));
  const row0 = Math.max(0, Math.floor(top)), row1 = Math.min(NATURAL_FRAME - 1, Math.ceil(bottom));
  const inv = 1 / height;
  for (let row = row0; row <= row1; row++) {
    const dy = row + 0.5 - y;
    for (let col = col0; col <= col1; col++) {
      const dx = col + 0.5 - x;
      // The inverse map: rotate back by −angle, undo the flip, scale to height units.
      const u = f * (cos * dx + sin * dy) * inv + MOMENTS.u;
      const v = (-sin * dx + cos * dy) * inv + MOMENTS.v;
      if (insideSilhouette(u, v)) out[offset + row * NATURAL_FRAME + col] = 1;
    }
  }
}

/** One augmentation: a horizontal flip, then a rotation about the frame centre, then a shift. */
export interface Augmentation {
  /** Mirrored left–right about the frame centre. */
  flipped: boolean;
  /** Radians, clockwise on screen. */
  angle: number;
  /** Pixels of the 64-px frame. */
  dx: number;
  /** Pixels of the 64-px frame, downwards. */
  dy: number;
}

const IDENTITY: Augmentation = { flipped: false, angle: 0, dx: 0, dy: 0 };

/** Flip with probability ½, rotation U[−2°, 2°], shifts U[−5, 5] px (Klindt2021 App. D.5). */
export function drawAugmentation(rng: Rng): Augmentation {
  const flipped = rng.uniform() < 0.5;
  const angle = (2 * rng.uniform() - 1) * KITTI_AUGMENTATION.degrees * Math.PI / 180;
  const dx = (2 * rng.uniform() - 1) * KITTI_AUGMENTATION.shift;
  const dy = (2 * rng.uniform() - 1) * KITTI_AUGMENTATION.shift;
  return { flipped, angle, dx, dy };
}

/** Where the augmentation moves the point (x, y) of the 64-px frame. */
export function augmentPoint(aug: Augmentation, x: number, y: number): [number, number] {
  const c = NATURAL_FRAME / 2;
  const fx = (aug.flipped ? NATURAL_FRAME - x : x) - c, fy = y - c;
  const cos = Math.cos(aug.angle), sin = Math.sin(aug.angle);
  return [c + cos * fx - sin * fy + aug.dx, c + sin * fx + cos * fy + aug.dy];
}

/** Options of {@linkcode KittiMasksPairs}; every field has a default. */
export interface KittiMasksOptions {
  /** Image side: 64 (as KITTI Masks) or 32 (2×2 area-averaged, for CPU runs). Default 64. */
  size?: 32 | 64;
  /** Number of sequences (pedestrians). Default 2120, as KITTI Masks. */
  sequences?: number;
  /** Frames per sequence, ≥ 2. Default 40, KITTI Masks' mean (84,626 frames / 2,120 sequences). */
  length?: number;
  /** Largest frame gap Δ of a pair (Klindt2021 uses 1 and 5). Default 1. */
  maxDelta?: number;
  /** Flip, rotate and shift each pair (identically for both frames). Default true. */
  augment?: boolean;
  /** Area range of the walk in pixels of the 64-px frame. Default {@linkcode KITTI_AREA_RANGE}. */
  areaRange?: readonly [number, number];
}

/** `n` pairs: images `[n, size, size, 1]` and factors `[n, 3]` (x, y, area; see the module notes). */
export interface KittiPairBatch {
  /** First frames, row-major `[n, size, size, 1]` in {0, 1} (area-averaged at size 32). */
  x0: Float32Array;
  /** Second frames, as `x0`. */
  x1: Float32Array;
  /** Factors of the first frames `[n, 3]`: x, y and area in pixels of the 64-px frame, after augmentation. */
  factors0: Float32Array;
  /** Factors of the second frames, as `factors0`. */
  factors1: Float32Array;
  /** Number of pairs. */
  n: number;
  /** Image shape `[size, size, 1]`. */
  shape: [number, number, number];
  /** Sequence of each pair, and the frame indices of its two elements. */
  sequence: Int32Array;
  /** Frame index of each first element `[n]`. */
  frame0: Int32Array;
  /** Frame index of each second element `[n]`. */
  frame1: Int32Array;
}

/** `n` single frames: images `[n, size, size, 1]` and continuous factors `[n, 3]` (x, y, area). */
export interface KittiFrameBatch {
  /** Row-major `[n, size, size, 1]`. */
  observations: Float32Array;
  /** `[n, 3]`: x, y and area in pixels of the 64-px frame, after augmentation. */
  factors: Float64Array;
  /** Number of frames. */
  n: number;
  /** Image shape `[size, size, 1]`. */
  shape: [number, number, number];
  /** Sequence of each frame `[n]`. */
  sequence: Int32Array;
  /** Frame index of each frame within its sequence `[n]`. */
  frame: Int32Array;
}

function positiveInteger(name: string, value: number, min = 1): void {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`KittiMasksPairs: ${name} must be an integer ≥ ${min}, got ${value}`);
  }
}

/**
 * The KITTI-Masks-like pair dataset. The factor sequences (`sequences` ×
 * `length` × 3 floats) are drawn once from the constructor's `rng`; images
 * are rendered per batch, so memory beyond them is O(batch).
 */
export class KittiMasksPairs {
  /** Dataset name. */
  readonly name = "kitti-masks";
  /** x, y and area. */
  readonly factorNames: readonly string[] = KITTI_FACTORS;
  /** Image shape `[height, width, channels]`. */
  readonly imageShape: [number, number, number];
  /** One line: what it is and how it departs from KITTI Masks. */
  readonly description: string;
  /** Image side, pixels. */
  readonly size: 32 | 64;
  /** Number of sequences (pedestrians). */
  readonly sequences: number;
  /** Frames per sequence. */
  readonly length: number;
  /** Largest frame gap Δ of a pair. */
  readonly maxDelta: number;
  /** Whether each pair is flipped, rotated and shifted. */
  readonly augment: boolean;
  /** `[sequences, length, 3]` of (x/64, y/64, √area/64) from {@linkcode naturalSequences}. */
  #walks: Float32Array;

  /** Draws every sequence's walk from `rng`; throws a RangeError on bad options. */
  constructor(options: KittiMasksOptions, rng: Rng) {
    const { size = 64, sequences = 2120, length = 40, maxDelta = 1, augment = true } = options;
    if (size !== 32 && size !== 64) throw new RangeError(`KittiMasksPairs: size must be 32 or 64, got ${size}`);
    positiveInteger("sequences", sequences);
    positiveInteger("length", length, 2);
    positiveInteger("maxDelta", maxDelta);
    if (typeof augment !== "boolean") {
      throw new RangeError(`KittiMasksPairs: augment must be a boolean, got ${augment}`);
    }
    this.size = size;
    this.sequences = sequences;
    this.length = length;
    this.maxDelta = maxDelta;
    this.augment = augment;
    this.imageShape = [size, size, 1];
    this.#walks = naturalSequences(sequences, length, rng, {
      source: "kitti",
      areaRange: options.areaRange ?? KITTI_AREA_RANGE,
    });
    this.description = "KITTI-Masks-like: procedural binary pedestrian silhouettes whose x, y and area follow " +
      "KITTI's fitted generalized-Laplace walks; unlike KITTI Masks one rigid figure, independent increments, " +
      `fixed-length sequences, no occlusion or ego-motion (${size}×${size}, max Δframes ${maxDelta}` +
      `${augment ? ", flip/±2°/±5 px augmentation" : ""})`;
  }

  /** Un-augmented factors (x px, y px, area px) of frame `frame` of sequence `sequence`. */
  factorsAt(sequence: number, frame: number): [number, number, number] {
    if (!(sequence >= 0 && sequence < this.sequences && frame >= 0 && frame < this.length)) {
      throw new RangeError(`frame (${sequence}, ${frame}) is outside ${this.sequences} × ${this.length}`);
    }
    const o = (sequence * this.length + frame) * 3;
    const w = this.#walks;
    const r = w[o + 2] * NATURAL_FRAME;
    return [w[o] * NATURAL_FRAME, w[o + 1] * NATURAL_FRAME, r * r];
  }

  /** Renders one frame with `aug` into `out` at image `index` of a 64-px batch; writes its factors to `factors`. */
  #render(
    sequence: number,
    frame: number,
    aug: Augmentation,
    out: Float32Array,
    factors: Float32Array | Float64Array,
    index: number,
  ): void {
    const [x, y, area] = this.factorsAt(sequence, frame);
    const [ax, ay] = augmentPoint(aug, x, y);
    drawSilhouette(out, index * NATURAL_FRAME * NATURAL_FRAME, ax, ay, area, aug.angle, aug.flipped);
    factors[index * 3] = ax;
    factors[index * 3 + 1] = ay;
    factors[index * 3 + 2] = area;
  }

  #finish(images: Float32Array, n: number): Float32Array {
    return this.size === 64 ? images : halve(images, n, 1);
  }

  /**
   * `n` pairs (frame s, frame s+Δ) of a uniformly chosen sequence: s ~ U{0..length−2},
   * Δ ~ U{1..maxDelta}, the second frame clipped to the sequence's last. With `augment`,
   * one flip/rotation/shift per pair, applied to both frames.
   */
  samplePairs(n: number, rng: Rng): KittiPairBatch {
    positiveInteger("n", n, 0);
    const pixels = NATURAL_FRAME * NATURAL_FRAME;
    const x0 = new Float32Array(n * pixels), x1 = new Float32Array(n * pixels);
    const factors0 = new Float32Array(n * 3), factors1 = new Float32Array(n * 3);
    const sequence = new Int32Array(n), frame0 = new Int32Array(n), frame1 = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const s = rng.int(this.sequences);
      const t0 = rng.int(this.length - 1);
      const t1 = Math.min(t0 + 1 + rng.int(this.maxDelta), this.length - 1);
      const aug = this.augment ? drawAugmentation(rng) : IDENTITY;
      this.#render(s, t0, aug, x0, factors0, i);
      this.#render(s, t1, aug, x1, factors1, i);
      sequence[i] = s;
      frame0[i] = t0;
      frame1[i] = t1;
    }
    return {
      x0: this.#finish(x0, n),
      x1: this.#finish(x1, n),
      factors0,
      factors1,
      n,
      shape: this.imageShape,
      sequence,
      frame0,
      frame1,
    };
  }

  /**
   * `n` frames drawn uniformly over all sequences and frames, for evaluation
   * (e.g. MCC against the continuous x, y, area); with `augment`, each frame
   * gets its own augmentation, so the factors cover the training distribution.
   */
  sampleFrames(n: number, rng: Rng): KittiFrameBatch {
    positiveInteger("n", n, 0);
    const images = new Float32Array(n * NATURAL_FRAME * NATURAL_FRAME);
    const factors = new Float64Array(n * 3);
    const sequence = new Int32Array(n), frame = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const s = rng.int(this.sequences), t = rng.int(this.length);
      this.#render(s, t, this.augment ? drawAugmentation(rng) : IDENTITY, images, factors, i);
      sequence[i] = s;
      frame[i] = t;
    }
    return { observations: this.#finish(images, n), factors, n, shape: this.imageShape, sequence, frame };
  }
}

/** A preview: `pairs` random pairs, each first frame followed by its second, `columns` images a row. */
export function kittiMasksPreview(dataset: KittiMasksPairs, rng: Rng, pairs = 20, columns = 10): Image {
  const batch = dataset.samplePairs(pairs, rng);
  const pixels = dataset.size * dataset.size;
  const both = new Float32Array(2 * pairs * pixels);
  for (let i = 0; i < pairs; i++) {
    both.set(batch.x0.subarray(i * pixels, (i + 1) * pixels), 2 * i * pixels);
    both.set(batch.x1.subarray(i * pixels, (i + 1) * pixels), (2 * i + 1) * pixels);
  }
  return imageGrid(both, 2 * pairs, batch.shape, columns);
}
