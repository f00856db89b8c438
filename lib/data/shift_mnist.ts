/**
 * A shiftMNIST stand-in (ours: Jacobsen2019 — the document
 * has no shiftMNIST construction, so no number of the paper applies to it).
 * Each digit carries a label-predictive artificial cue: during training the
 * cue of its own class, in the shifted test the cue of another class, so a
 * classifier that relies on the cue fails under the shift.
 *
 * - `background`: an oriented grating behind the digit,
 *   x = max(digit, 0.3·(1 + sin(2π(i cos θ_c + j sin θ_c)/8))/2), θ_c = 18°·c
 *   (row i, column j; values in [0, 0.3]).
 * - `binary`: a 2×2 block of ones at rows 0–1, columns 2 + 2c and 3 + 2c, in
 *   the border the centred MNIST digits leave empty; after 2×2 average
 *   pooling it is exactly pooled pixel (0, 1 + c).
 *
 * Train mode puts the cue of the true class y; shifted mode that of class
 * (y + 1 + k) mod 10 with k ~ U{0…8}, so it is never y and uniform over the
 * other nine classes.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { Rng } from "../core/rng.ts";
import { MNIST_CLASSES, MNIST_SIDE, type MnistSplit } from "./mnist.ts";

/** The two cue kinds. */
export type ShiftVariant = "background" | "binary";
/** `train`: the cue of the true class; `shifted`: the cue of a random other class. */
export type ShiftMode = "train" | "shifted";

/** The variants, for config validation and listings. */
export const SHIFT_VARIANTS: readonly ShiftVariant[] = ["background", "binary"];
/** The modes. */
export const SHIFT_MODES: readonly ShiftMode[] = ["train", "shifted"];

/** A split with cues added: the images carry them, `cues` says whose class each one is. */
export interface ShiftMnistSplit extends MnistSplit {
  /** `[n]` class whose cue the image carries (= `labels` in train mode, never equal in shifted mode). */
  cues: Int32Array;
}

function checkVariant(variant: string): asserts variant is ShiftVariant {
  if (!SHIFT_VARIANTS.includes(variant as ShiftVariant)) {
    throw new UsageError(`shiftMnist: unknown variant "${variant}"; allowed: ${SHIFT_VARIANTS.join(", ")}`);
  }
}

const cueCache = new Map<string, Float32Array>();

/**
 * The cue of class `c` (0..9) as a 28×28 row-major image in [0, 1]; an
 * image carries it as max(digit, cue). Exported so that tests and figures
 * can probe the cue alone. The returned array is shared: do not modify it.
 */
export function shiftCue(variant: ShiftVariant, c: number): Float32Array {
  checkVariant(variant);
  if (!(Number.isInteger(c) && c >= 0 && c < MNIST_CLASSES)) {
    throw new UsageError(`shiftCue: class ${c}; allowed: an integer 0..${MNIST_CLASSES - 1}`);
  }
  const key = `${variant}:${c}`;
  const cached = cueCache.get(key);
  if (cached) return cached;
  const cue = new Float32Array(MNIST_SIDE * MNIST_SIDE);
  if (variant === "background") {
    const theta = (18 * c * Math.PI) / 180;
    const [cos, sin] = [Math.cos(theta), Math.sin(theta)];
    for (let i = 0; i < MNIST_SIDE; i++) {
      for (let j = 0; j < MNIST_SIDE; j++) {
        cue[i * MNIST_SIDE + j] = (0.3 * (1 + Math.sin((2 * Math.PI * (i * cos + j * sin)) / 8))) / 2;
      }
    }
  } else {
    for (let i = 0; i < 2; i++) for (let j = 2 + 2 * c; j < 4 + 2 * c; j++) cue[i * MNIST_SIDE + j] = 1;
  }
  cueCache.set(key, cue);
  return cue;
}

/**
 * The split's digits with cues: in `train` mode each image gets the cue of
 * its own class (a shortcut to the label), in `shifted` mode that of class
 * (y + 1 + k) mod 10, k ~ U{0…8} drawn from `rng` (unused in train mode).
 * Labels and indices are copied; the input split is not modified.
 */
export function shiftMnist(split: MnistSplit, variant: ShiftVariant, mode: ShiftMode, rng: Rng): ShiftMnistSplit {
  checkVariant(variant);
  if (!SHIFT_MODES.includes(mode)) {
    throw new UsageError(`shiftMnist: unknown mode "${mode}"; allowed: ${SHIFT_MODES.join(", ")}`);
  }
  const size = MNIST_SIDE * MNIST_SIDE;
  if (split.images.length !== split.n * size || split.labels.length !== split.n) {
    throw new UsageError(
      `shiftMnist: a split of ${split.n} images needs ${split.n * size} pixels and ${split.n} labels`,
    );
  }
  const cues = Int32Array.from(
    split.labels,
    (y) => mode === "train" ? y : (y + 1 + rng.int(MNIST_CLASSES - 1)) % MNIST_CLASSES,
  );
  const images = new Float32Array(split.images.length);
  for (let r = 0; r < split.n; r++) {
    const cue = shiftCue(variant, cues[r]);
    for (let p = 0; p < size; p++) images[r * size + p] = Math.max(split.images[r * size + p], cue[p]);
  }
  return { images, labels: Int32Array.from(split.labels), indices: Int32Array.from(split.indices), n: split.n, cues };
}
