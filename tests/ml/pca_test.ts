import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { fitPca } from "../../lib/ml/pca.ts";

const ref = JSON.parse(await Deno.readTextFile(new URL("./fixtures/reference_pca.json", import.meta.url)));

Deno.test("fitPca matches sklearn PCA(3): axes, explained variance (ratio) and projections of new rows", () => {
  const pca = fitPca({ data: ref.x, rows: ref.rows, cols: ref.cols }, 3);
  pca.components.forEach((v, i) => assertAlmostEquals(v, ref.components[i], 1e-9, `component [${i}]`));
  pca.explainedVariance.forEach((v, i) =>
    assertAlmostEquals(v, ref.explainedVariance[i], 1e-9 * ref.explainedVariance[0])
  );
  pca.explainedVarianceRatio.forEach((v, i) => assertAlmostEquals(v, ref.explainedVarianceRatio[i], 1e-11));
  const out = pca.transform({ data: ref.test, rows: ref.test.length / ref.cols, cols: ref.cols });
  assertEquals([out.rows, out.cols], [20, 3]);
  Array.from(out.data).forEach((v, i) => assertAlmostEquals(v, ref.transform[i], 1e-8, `projection [${i}]`));
});

Deno.test("fitPca: bad input is a UsageError", () => {
  const x = { data: [1, 2, 3, 4, 5, 7], rows: 3, cols: 2 };
  for (
    const [call, message] of [
      [() => fitPca(x, 3), /1\.\.2/],
      [() => fitPca(x, 0), /1\.\.2/],
      [() => fitPca({ data: [1, 2], rows: 1, cols: 2 }, 1), /at least 2 rows/],
      [() => fitPca(x, 1).transform({ data: [1, 2, 3], rows: 1, cols: 3 }), /3 columns/],
    ] as [() => unknown, RegExp][]
  ) {
    const error = assertThrows(call, UsageError);
    assert(message.test(error.message), error.message);
  }
});
