/**
 * Procedural dSprites (Higgins et al. 2017; Locatello2019 §4; Klindt2021;
 * Schott2022) and its Color, Noisy and Scream variants
 * (Locatello et al. 2019 App. D).
 *
 * Factors, as in the original: shape 3 (square, ellipse, heart), scale 6
 * (linspace 0.5–1), orientation 40 (linspace 0–2π, both ends included, so
 * the first and last angles coincide as in DeepMind's release), x and y 32
 * each (linspace 0–1). DeepMind's exact sprite outlines are not published,
 * so this is a "dSprites-like" rendering with these rules:
 * - the sprite centre moves over pixels 16 … 48 (x, y = 0 … 1), snapped to
 *   whole pixels so that 720 pre-rendered masks are placed by offset;
 * - square: side 19·scale px; ellipse: axes 22·scale × 11·scale px;
 *   heart: the curve (x² + y² − 1)³ = x²y³, 20·scale px wide, point down;
 * - orientation rotates the sprite counter-clockwise about its centre;
 * - the `orientation: "quarter"` option (dataset "dsprites-rot", Schott2022
 *   App. E's orientation ∈ [0°, 90°)) keeps the 40 orientation indices but
 *   draws index k at k·90°/40 (0°, 2.25°, …, 87.75°), so that the split
 *   indices of Schott2022 Table 2 stay valid; App. E does not say how its grid
 *   was made (filtering the full grid would leave about 10 angles);
 * - each pixel is 4×4 supersampled and set when at least half is covered,
 *   so images are binary, as the original's;
 * - 32×32 images are the 64×64 ones averaged over 2×2 blocks.
 *
 * @module
 */
import type { Rng } from "../core/rng.ts";
import { type Factors, FactorSpace, type GroundTruthDataset, type Observations } from "./ground_truth.ts";

/** Factor names in the original's order (its constant colour factor is dropped, as disentanglement_lib does). */
export const DSPRITES_FACTORS = ["shape", "scale", "orientation", "pos_x", "pos_y"] as const;
/** Values per factor. */
export const DSPRITES_SIZES = [3, 6, 40, 32, 32] as const;
const SHAPES = ["square", "ellipse", "heart"] as const;

const MASK_RADIUS = 15;
const MASK_SIDE = 2 * MASK_RADIUS + 1;
const SUPERSAMPLE = 4;

/** Whether point (x, y) in sprite units (y up) lies inside shape `shape` of the given scale. */
function inside(shape: number, scale: number, x: number, y: number): boolean {
  if (shape === 0) return Math.abs(x) <= 9.5 * scale && Math.abs(y) <= 9.5 * scale;
  if (shape === 1) return (x / (11 * scale)) ** 2 + (y / (5.5 * scale)) ** 2 <= 1;
  // Heart: the curve spans x ∈ [−1.14, 1.14], y ∈ [−1, 1.25]; 20 px wide, centred on its box.
  const unit = 20 * scale / 2.28;
  const u = x / unit, v = y / unit + 0.125;
  const r = u * u + v * v - 1;
  return r * r * r - u * u * v * v * v <= 0;
}

/**
 * The binary mask `[31 × 31]` of one sprite centred on the middle pixel,
 * rotated counter-clockwise by `angle` radians.
 */
export function renderSprite(shape: number, scale: number, angle: number): Uint8Array {
  const mask = new Uint8Array(MASK_SIDE * MASK_SIDE);
  const cos = Math.cos(angle), sin = Math.sin(angle);
  const half = SUPERSAMPLE * SUPERSAMPLE / 2;
  for (let row = 0; row < MASK_SIDE; row++) {
    for (let col = 0; col < MASK_SIDE; col++) {
      let covered = 0;
      for (let sy = 0; sy < SUPERSAMPLE; sy++) {
        for (let sx = 0; sx < SUPERSAMPLE; sx++) {
          const px = col - MASK_RADIUS + (sx + 0.5) / SUPERSAMPLE - 0.5;
          const py = MASK_RADIUS - row - (sy + 0.5) / SUPERSAMPLE + 0.5; // image rows grow downwards, y up
          // Rotating the sprite by +angle samples the unrotated shape at −angle.
          if (inside(shape, scale, cos * px + sin * py, -sin * px + cos * py)) covered++;
        }
      }
      mask[row * MASK_SIDE + col] = covered >= half ? 1 : 0;
    }
  }
  return mask;
}

/** Factor value of an index, as the original's latents_values. */
export function dspritesValue(factor: number, index: number): number {
  switch (factor) {
    case 0:
      return index + 1;
    case 1:
      return 0.5 + index * 0.1;
    case 2:
      return (2 * Math.PI * index) / 39;
    default:
      return index / 31;
  }
}

/** How the 40 orientation indices map to angles: "full" 0…2π (the original), "quarter" k·90°/40 (dsprites-rot). */
export type DspritesOrientation = "full" | "quarter";
/** The orientation grids {@linkcode dsprites} accepts. */
export const DSPRITES_ORIENTATIONS: readonly DspritesOrientation[] = ["full", "quarter"];

/** The rotation in radians of orientation index `index` (0..39) on the given grid. */
export function orientationAngle(index: number, orientation: DspritesOrientation = "full"): number {
  return orientation === "quarter" ? (index * Math.PI / 2) / 40 : dspritesValue(2, index);
}

const masks = new Map<number, Uint8Array>();

function spriteMask(shape: number, scale: number, orientation: number, grid: DspritesOrientation): Uint8Array {
  // The grid is part of the key: index k is a different angle on each.
  const key = ((grid === "quarter" ? 3 : 0) + shape) * 240 + scale * 40 + orientation;
  let mask = masks.get(key);
  if (!mask) {
    mask = renderSprite(shape, dspritesValue(1, scale), orientationAngle(orientation, grid));
    masks.set(key, mask);
  }
  return mask;
}

/** The sprite's pixel centre for a position index 0..31. */
export function spriteCentre(position: number): number {
  return Math.round(16 + (32 * position) / 31);
}

/**
 * Binary 64×64 sprite images of factor tuples `[n, 5]` into `out`
 * (`[n, 64, 64]`, zeroed here), orientation indices read on `orientation`'s grid.
 */
export function drawSprites(factors: Factors, out: Float32Array, orientation: DspritesOrientation = "full"): void {
  out.fill(0);
  for (let r = 0; r < factors.n; r++) {
    const f = factors.values.subarray(r * 5, r * 5 + 5);
    const mask = spriteMask(f[0], f[1], f[2], orientation);
    const left = spriteCentre(f[3]) - MASK_RADIUS, top = spriteCentre(f[4]) - MASK_RADIUS;
    const base = r * 4096;
    for (let row = 0; row < MASK_SIDE; row++) {
      const y = top + row;
      if (y < 0 || y >= 64) continue;
      for (let col = 0; col < MASK_SIDE; col++) {
        const x = left + col;
        if (x >= 0 && x < 64 && mask[row * MASK_SIDE + col]) out[base + y * 64 + x] = 1;
      }
    }
  }
}

/** Averages `[n, 64, 64, c]` over 2×2 blocks into `[n, 32, 32, c]` (area averaging, not nearest). */
export function halve(values: Float32Array, n: number, channels: number): Float32Array {
  const out = new Float32Array(n * 32 * 32 * channels);
  for (let b = 0; b < n; b++) {
    for (let y = 0; y < 32; y++) {
      for (let x = 0; x < 32; x++) {
        for (let c = 0; c < channels; c++) {
          const at = (row: number, col: number) => values[((b * 64 + row) * 64 + col) * channels + c];
          out[((b * 32 + y) * 32 + x) * channels + c] = 0.25 *
            (at(2 * y, 2 * x) + at(2 * y, 2 * x + 1) + at(2 * y + 1, 2 * x) + at(2 * y + 1, 2 * x + 1));
        }
      }
    }
  }
  return out;
}

/** The dSprites variants. */
export type DspritesVariant = "dsprites" | "color" | "noisy" | "scream";

/** Options of {@linkcode dsprites}. */
export interface DspritesOptions {
  /** Which variant (default "dsprites", the original). */
  variant?: DspritesVariant;
  /** Image side: 64 (the original) or 32 (2×2 area-averaged, for CPU runs). */
  size?: 64 | 32;
  /** Orientation grid: "full" (default, the original's 0…2π) or "quarter" ([0°, 90°), named "…-rot"). */
  orientation?: DspritesOrientation;
}

const DESCRIPTIONS: Record<DspritesVariant, string> = {
  dsprites: "dSprites-like: procedurally rendered square, ellipse and heart on the original 737,280-image factor grid",
  color: "Color-dSprites: the sprite coloured by a random RGB scale in [0.5, 1]³ per image, black background",
  noisy: "Noisy-dSprites: a white sprite on i.i.d. uniform noise",
  scream:
    "Scream-like-dSprites: background from a procedural painterly texture (a stand-in for Munch's The Scream), recoloured per image; the sprite inverts it",
};

const QUARTER_DESCRIPTION =
  ", orientation restricted to [0°, 90°) (Schott2022 App. E): index k drawn at k·90°/40, so Table 2's split indices stay valid";

/**
 * A procedural painterly texture `[274, 350, 3]` in [0, 1], a stand-in for
 * the thumbnail of The Scream: swirled bands in the painting's sky and
 * water palette over smooth multi-octave noise. Fixed seed: the same
 * texture every time.
 */
export function screamTexture(): Float32Array {
  const height = 274, width = 350;
  const palette = [[0.08, 0.12, 0.3], [0.2, 0.35, 0.55], [0.85, 0.45, 0.12], [0.9, 0.25, 0.1], [0.95, 0.8, 0.3]];
  const out = new Float32Array(height * width * 3);
  // Sums of sinusoids with irrational-ish frequencies: smooth "noise" without a random table.
  const noise = (x: number, y: number) =>
    Math.sin(x * 0.031 + y * 0.017) + 0.5 * Math.sin(x * 0.071 - y * 0.053 + 1.3) +
    0.25 * Math.sin(x * 0.149 + y * 0.131 + 2.1) + 0.125 * Math.sin(x * 0.29 - y * 0.33 + 0.4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const swirl = y / height * 6 + 1.2 * noise(x, y) + 0.8 * Math.sin(x / width * 9 + y / height * 4);
      const t = (Math.sin(swirl) + 1) / 2 * (palette.length - 1);
      const i = Math.min(palette.length - 2, Math.floor(t)), f = t - i;
      for (let c = 0; c < 3; c++) {
        const value = palette[i][c] * (1 - f) + palette[i + 1][c] * f + 0.06 * noise(y * 3, x * 3);
        out[(y * width + x) * 3 + c] = Math.min(1, Math.max(0, value));
      }
    }
  }
  return out;
}

let scream: Float32Array | null = null;

/** Colours binary sprites `[n, 64, 64]` into `[n, 64, 64, 3]` per the variant's recipe. */
function colour(
  variant: Exclude<DspritesVariant, "dsprites">,
  sprites: Float32Array,
  n: number,
  rng: Rng,
): Float32Array {
  const out = new Float32Array(n * 4096 * 3);
  for (let b = 0; b < n; b++) {
    if (variant === "color") {
      const rgb = [0.5 + 0.5 * rng.uniform(), 0.5 + 0.5 * rng.uniform(), 0.5 + 0.5 * rng.uniform()];
      for (let p = 0; p < 4096; p++) {
        for (let c = 0; c < 3; c++) out[(b * 4096 + p) * 3 + c] = sprites[b * 4096 + p] * rgb[c];
      }
    } else if (variant === "noisy") {
      for (let p = 0; p < 4096; p++) {
        for (let c = 0; c < 3; c++) out[(b * 4096 + p) * 3 + c] = Math.min(1, sprites[b * 4096 + p] + rng.uniform());
      }
    } else {
      scream ??= screamTexture();
      const top = rng.int(274 - 64), left = rng.int(350 - 64);
      const shift = [rng.uniform(), rng.uniform(), rng.uniform()];
      for (let y = 0; y < 64; y++) {
        for (let x = 0; x < 64; x++) {
          const p = y * 64 + x, s = sprites[b * 4096 + p];
          for (let c = 0; c < 3; c++) {
            const background = (scream[((top + y) * 350 + left + x) * 3 + c] + shift[c]) / 2;
            out[(b * 4096 + p) * 3 + c] = s ? 1 - background : background;
          }
        }
      }
    }
  }
  return out;
}

/** dSprites or one of its variants as a {@linkcode GroundTruthDataset}. */
export function dsprites(options: DspritesOptions = {}): GroundTruthDataset {
  const variant = options.variant ?? "dsprites";
  const size = options.size ?? 64;
  const orientation = options.orientation ?? "full";
  if (!DSPRITES_ORIENTATIONS.includes(orientation)) {
    throw new Error(`unknown dSprites orientation "${orientation}"; valid: ${DSPRITES_ORIENTATIONS.join(", ")}`);
  }
  const base = variant === "dsprites" ? "dsprites" : `${variant}-dsprites`;
  const channels = variant === "dsprites" ? 1 : 3;
  const space = new FactorSpace(DSPRITES_SIZES);
  return {
    name: orientation === "quarter" ? `${base}-rot` : base,
    description: `${DESCRIPTIONS[variant]}${orientation === "quarter" ? QUARTER_DESCRIPTION : ""}${
      size === 32 ? " (32×32, 2×2 area-averaged)" : ""
    }`,
    factorNames: DSPRITES_FACTORS,
    factorSizes: DSPRITES_SIZES,
    imageShape: [size, size, channels],
    categorical: [0],
    sampleFactors: (n, rng) => space.sample(n, rng),
    observations(factors: Factors, rng: Rng): Observations {
      const sprites = new Float32Array(factors.n * 4096);
      drawSprites(factors, sprites, orientation);
      const full = variant === "dsprites" ? sprites : colour(variant, sprites, factors.n, rng);
      const values = size === 64 ? full : halve(full, factors.n, channels);
      return { values, n: factors.n, shape: [size, size, channels] };
    },
  };
}

/** The shape names, by factor index. */
export const DSPRITES_SHAPES: readonly ["square", "ellipse", "heart"] = SHAPES;
