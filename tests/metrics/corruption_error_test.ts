import { assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { COMMON_CORRUPTIONS } from "../../lib/data/corruptions.ts";
import { ALEXNET_ERRORS, corruptionError, relativeCorruptionError } from "../../lib/metrics/corruption_error.ts";

Deno.test("ALEXNET_ERRORS: keyed by the suite's COMMON_CORRUPTIONS, in order; AlexNet's own mCE is 1", () => {
  assertEquals(Object.keys(ALEXNET_ERRORS), [...COMMON_CORRUPTIONS]);
  const alexnet = Object.fromEntries(Object.entries(ALEXNET_ERRORS).map(([k, e]) => [k, Array(5).fill(1 - e)]));
  assertAlmostEquals(corruptionError(alexnet, ALEXNET_ERRORS).mce, 1, 1e-12);
});

Deno.test("corruptionError: hand-computed CE against a per-corruption average and per-severity errors", () => {
  // Errors 0.5 … 0.9, mean 0.7: CE = 0.7 / 0.886428 = 0.789686246…
  const one = corruptionError({ gaussian_noise: [0.5, 0.4, 0.3, 0.2, 0.1] }, ALEXNET_ERRORS);
  assertAlmostEquals(one.ce.gaussian_noise, 0.7896862463730838, 1e-12);
  assertAlmostEquals(one.mce, 0.7896862463730838, 1e-12);
  // Brightness errors 0.35, fog 0.2 (one severity each): (0.35/0.564592 + 0.2/0.819324)/2 = 0.432010179…
  const two = corruptionError({ brightness: [0.65], fog: [0.8] }, ALEXNET_ERRORS);
  assertAlmostEquals(two.mce, 0.4320101794554635, 1e-12);
  // Per severity: Σ E = 0.1 + 0.2, Σ E_ref = 0.2 + 0.4 → 0.5; and 0.3/0.2 = 1.5 → mCE 1.
  const summed = corruptionError({ a: [0.9, 0.8], b: [0.7] }, { a: [0.2, 0.4], b: [0.2] });
  assertAlmostEquals(summed.ce.a, 0.5, 1e-12);
  assertAlmostEquals(summed.ce.b, 1.5, 1e-12);
  assertAlmostEquals(summed.mce, 1, 1e-12);
});

Deno.test("relativeCorruptionError: the vanilla model's errors as reference", () => {
  // (0.1 + 0.3) / (0.2 + 0.6) = 0.5; the vanilla model against itself is 1.
  const vanilla = { fog: [0.8, 0.4], contrast: [0.5, 0.5] };
  const result = relativeCorruptionError({ fog: [0.9, 0.7], contrast: [0.75, 0.25] }, vanilla);
  assertAlmostEquals(result.ce.fog, 0.5, 1e-12);
  assertAlmostEquals(result.ce.contrast, 1, 1e-12);
  assertAlmostEquals(result.mce, 0.75, 1e-12);
  assertAlmostEquals(relativeCorruptionError(vanilla, vanilla).mce, 1, 1e-12);
});

Deno.test("corruptionError: missing names, empty inputs, accuracies outside [0, 1], zero reference are usage errors", () => {
  assertThrows(() => corruptionError({ frostbite: [0.5] }, ALEXNET_ERRORS), UsageError, "frostbite");
  assertThrows(() => corruptionError({}, ALEXNET_ERRORS), UsageError, "at least one corruption");
  assertThrows(() => corruptionError({ fog: [] }, ALEXNET_ERRORS), UsageError, "at least one value");
  assertThrows(() => corruptionError({ fog: [1.2] }, ALEXNET_ERRORS), UsageError, "outside [0, 1]");
  assertThrows(() => corruptionError({ fog: [NaN] }, ALEXNET_ERRORS), UsageError, "outside [0, 1]");
  assertThrows(() => corruptionError({ fog: [0.5] }, { fog: 0 }), UsageError, "is 0");
  assertThrows(() => corruptionError({ fog: [0.5, 0.4] }, { fog: [0.3] }), UsageError, "severities");
  assertThrows(() => relativeCorruptionError({ fog: [0.5] }, { fog: [-0.1] }), UsageError, "vanilla");
  assertThrows(() => relativeCorruptionError({ fog: [0.5] }, { snow: [0.5] }), UsageError, "fog");
});
