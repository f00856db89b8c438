/**
 * Colours of runs and seed groups, assigned rather than hashed: each key
 * gets the next colour of a palette of distinct colours the first time it is
 * seen, and keeps it for the life of the page, so a run keeps its colour when
 * others are selected or created, and the first 20 lines are pairwise distinct
 * (hashed hues collided for one pair in a handful of runs).
 *
 * @module
 */

/**
 * The 10 Tableau colours, then 10 more chosen to stay apart from them and
 * from each other (CIELAB ΔE ≥ 17 between any two of the 20) and readable on
 * the light and the dark background alike.
 */
export const PALETTE: readonly string[] = [
  "#4e79a7",
  "#f28e2b",
  "#e15759",
  "#76b7b2",
  "#59a14f",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#bab0ac",
  "#17becf",
  "#7b4fd6",
  "#e7298a",
  "#a0c814",
  "#8c6d1f",
  "#1b7a3a",
  "#b3123a",
  "#5fa8ff",
  "#9ad0f5",
  "#00796b",
];

/**
 * The `n`-th colour past the palette: hues a golden angle apart (no two
 * nearby indices land on nearby hues), lightness alternating between two
 * levels so that hues that do come close still differ.
 *
 * @example
 * ```ts
 * extraColor(0); // "#b12525": hue 0°, the darker level
 * ```
 */
export function extraColor(n: number): string {
  const hue = (n * 137.508) % 360, light = n % 2 ? 0.6 : 0.42, sat = 0.65;
  const channel = (offset: number) => {
    const k = (offset + hue / 30) % 12;
    const value = light - sat * Math.min(light, 1 - light) * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(value * 255).toString(16).padStart(2, "0");
  };
  return `#${channel(0)}${channel(8)}${channel(4)}`;
}

/** The `i`-th colour handed out: the palette's, then {@linkcode extraColor}s. */
export function nthColor(i: number): string {
  return i < PALETTE.length ? PALETTE[i] : extraColor(i - PALETTE.length);
}

/** Colours handed out to keys in the order the keys are first seen; a key's colour never changes. */
export class ColorRegistry {
  #byKey = new Map<string, string>();

  /** Gives each key of `keys` not seen before the next colour, in the order given. */
  assign(keys: Iterable<string>): void {
    for (const key of keys) this.colorOf(key);
  }

  /** The colour of `key` (`#rrggbb`), handing it the next colour when it is new. */
  colorOf(key: string): string {
    let color = this.#byKey.get(key);
    if (color === undefined) {
      color = nthColor(this.#byKey.size);
      this.#byKey.set(key, color);
    }
    return color;
  }
}

/** The page's registry: every chart and view of the page draws a run in the same colour. */
export const lineColors = new ColorRegistry();

/** The colour of the run (or seed group) named `key` in this page (see {@linkcode ColorRegistry}). */
export function lineColor(key: string): string {
  return lineColors.colorOf(key);
}
