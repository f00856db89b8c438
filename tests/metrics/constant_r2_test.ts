/** The R² a constant prediction scores on a generalization split, against enumeration of the split's test part. */
import { assertAlmostEquals } from "../assert.ts";
import { constantR2 } from "../../lib/metrics/r2.ts";
import { r2Scores } from "../../lib/metrics/r2.ts";
import { factorsOf, makeSplit, type SplitDataset } from "../../lib/data/splits.ts";

/** R² of one constant row on every test point of the split, by enumeration through r2Scores. */
function enumerated(dataset: SplitDataset, name: "composition" | "interpolation" | "extrapolation") {
  const split = makeSplit(dataset, name);
  const k = split.sizes.length;
  const scoreOf = (constant: (j: number) => number, part: Int32Array) => {
    const data = new Float32Array(part.length * k).map((_, i) => constant(i % k));
    return r2Scores({ data, rows: part.length, cols: k }, factorsOf(split.sizes, part).values, split.sizes).r2;
  };
  const meanOf = (part: Int32Array) => {
    const { values } = factorsOf(split.sizes, part);
    const sums = new Float64Array(k);
    for (let i = 0; i < values.length; i++) sums[i % k] += values[i] / (split.sizes[i % k] - 1);
    return (j: number) => sums[j] / part.length;
  };
  return {
    train: scoreOf(meanOf(split.train), split.test),
    grid: scoreOf(() => 0.5, split.test),
    best: scoreOf(meanOf(split.test), split.test),
  };
}

for (const dataset of ["dsprites", "shapes3d"] as const) {
  Deno.test(`constantR2 equals the enumerated R² of constant predictions on ${dataset}'s OOD splits`, () => {
    for (const name of ["composition", "interpolation", "extrapolation"] as const) {
      const exact = constantR2(dataset, name), counted = enumerated(dataset, name);
      // Float32 predictions: agreement to about 1e-6.
      for (const key of ["train", "grid", "best"] as const) assertAlmostEquals(exact[key], counted[key], 2e-6);
    }
  });
}
