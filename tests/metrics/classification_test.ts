/** Classifier evaluation on plain arrays, against values worked out by hand. */
import { assertEquals } from "../assert.ts";
import { accuracy, argmaxRows, correctCount, scoreAccuracy } from "../../lib/metrics/classification.ts";

Deno.test("argmaxRows takes each row's largest score, the first one on ties (numpy's argmax)", () => {
  const scores = [0.1, 0.7, 0.2, /**/ 3, 3, -1, /**/ -5, -4, -4, /**/ 0, 0, 0];
  assertEquals([...argmaxRows(scores, 4, 3)], [1, 0, 1, 0]);
  assertEquals([...argmaxRows(new Float32Array(0), 0, 3)], []);
});

Deno.test("correctCount and accuracy count matches over the labels", () => {
  assertEquals(correctCount([1, 0, 2, 2], [1, 1, 2, 0]), 2);
  assertEquals(accuracy([1, 0, 2, 2], [1, 1, 2, 0]), 0.5);
  assertEquals(accuracy(Int32Array.of(3, 1, 4), Int32Array.of(3, 1, 4)), 1);
  // Only the first labels.length predictions count.
  assertEquals(accuracy([7, 7, 0], [7, 1]), 0.5);
});

Deno.test("scoreAccuracy is the accuracy of the rows' argmax", () => {
  const probabilities = [0.2, 0.5, 0.3, /**/ 0.6, 0.3, 0.1, /**/ 0.1, 0.1, 0.8];
  assertEquals(scoreAccuracy(probabilities, [1, 0, 0], 3), 2 / 3);
});
