import { assertAlmostEquals } from "../assert.ts";
import { logGamma } from "../../lib/core/special_functions.ts";

Deno.test("logGamma matches Γ at integers and ½ and the reflection formula", () => {
  assertAlmostEquals(logGamma(5), Math.log(24), 1e-12);
  assertAlmostEquals(logGamma(0.5), 0.5 * Math.log(Math.PI), 1e-12);
  // Below ½ the reflection formula applies: Γ(¼) = 3.6256099082219083 (scipy.special.gamma).
  assertAlmostEquals(logGamma(0.25), Math.log(3.6256099082219083), 1e-12);
});
