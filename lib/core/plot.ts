/**
 * Tiny raster plots for run media, drawn straight into pixels so that
 * experiments without images still show what they learned.
 *
 * @module
 */
import type { Image } from "./png.ts";

/**
 * Scatter panels side by side, one per (x, y) series, each `size`×`size`
 * pixels, white background, dark points, axes scaled to each series' 1st–99th
 * percentile range.
 */
export function scatterPanels(series: { x: ArrayLike<number>; y: ArrayLike<number> }[], size = 96): Image {
  const gap = 4;
  const width = series.length * size + (series.length - 1) * gap;
  const data = new Uint8Array(width * size).fill(255);
  const range = (values: ArrayLike<number>) => {
    const sorted = Float64Array.from(values).sort();
    const lo = sorted[Math.floor(0.01 * (sorted.length - 1))];
    const hi = sorted[Math.ceil(0.99 * (sorted.length - 1))];
    return [lo, hi > lo ? hi : lo + 1];
  };
  series.forEach(({ x, y }, panel) => {
    const [x0, x1] = range(x);
    const [y0, y1] = range(y);
    const left = panel * (size + gap);
    for (let i = 0; i < size; i++) {
      data[(size - 1) * width + left + i] = 160;
      data[i * width + left] = 160;
    }
    for (let i = 0; i < x.length; i++) {
      const px = Math.round(((x[i] - x0) / (x1 - x0)) * (size - 1));
      const py = size - 1 - Math.round(((y[i] - y0) / (y1 - y0)) * (size - 1));
      if (px < 0 || px >= size || py < 0 || py >= size) continue;
      const at = py * width + left + px;
      data[at] = Math.max(0, data[at] - 90);
    }
  });
  return { width, height: size, channels: 1, data };
}
