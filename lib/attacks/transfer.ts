/**
 * Transfer attacks (Paper D §5): perturbation directions computed on a
 * substitute model, then a line search on the target for the smallest
 * multiple of each direction that fools it. The target is queried for
 * decisions only, so this attacks models without gradients (ABS) with the
 * gradients of another (a CNN).
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { distanceOf } from "./distances.ts";
import {
  checkLineSearchOptions,
  clippedRay,
  type LineSearchOptions,
  normalizeRows,
  smallestAdversarialScale,
} from "./noise.ts";
import type { Attack, AttackDistance, AttackModel } from "./types.ts";

/** Options of {@linkcode transfer}. */
export interface TransferOptions extends LineSearchOptions {
  /**
   * The norm the result is measured and minimised in (the attack's distance);
   * each direction is normalised to unit norm in it before the line search.
   */
  distance?: "l2" | "linf";
  /** ε handed to each fixed-ε direction attack on the source, by its distance (defaults: l2 1.5, linf 0.3). */
  sourceEpsilons?: Partial<Record<AttackDistance, number>>;
  /** Largest scale searched along a unit direction; default the box diameter (as in `noiseLineSearch`). */
  maxScale?: number | null;
}

/**
 * A minimization attack on the target model: for each of `directions`, run
 * it on `source` to get δ = adv − x, then find the smallest t ≥ 0 with
 * clip(x + t·δ/‖δ‖) misclassified by the target (an evenly spaced grid of
 * `gridSteps` scales, then `bisectionSteps` bisections), and keep per sample
 * the adversarial of smallest `distance` over directions. Samples whose
 * direction is zero or that no direction fools keep the clean input (failure).
 * The directions' own ε: `sourceEpsilons` for fixed attacks, unbounded for
 * minimization attacks.
 *
 * @param source the substitute model the directions are computed on (needs gradients for gradient attacks)
 * @param directions attacks run on the source, e.g. fgsm, fgm, l2Bim, linfBim
 */
export function transfer(source: AttackModel, directions: readonly Attack[], options: TransferOptions = {}): Attack {
  const { distance = "l2", maxScale = null } = options;
  const epsilons: Partial<Record<AttackDistance, number>> = { l2: 1.5, linf: 0.3, ...options.sourceEpsilons };
  if (!directions.length) throw new UsageError("transfer needs at least one direction attack");
  if (distance !== "l2" && distance !== "linf") {
    throw new UsageError(`transfer distance must be l2 or linf, got "${distance}"`);
  }
  if (maxScale !== null && !(maxScale > 0)) throw new UsageError(`maxScale must be > 0, got ${maxScale}`);
  checkLineSearchOptions(options);
  for (const a of directions) {
    if (a.needsGradient && !source.gradient) {
      throw new UsageError(`transfer direction ${a.name} needs gradients, which the source model lacks`);
    }
    if (a.kind === "fixed" && !(epsilons[a.distance]! > 0)) {
      throw new UsageError(`transfer direction ${a.name} is fixed-ε: give sourceEpsilons.${a.distance} > 0`);
    }
  }
  return {
    name: `transfer_${distance}(${directions.map((a) => a.name).join(",")})`,
    distance,
    kind: "minimization",
    needsGradient: false,
    async perturb(model, batch, _epsilon, rng) {
      const [low, high] = model.bounds;
      const { n, shape, x } = batch;
      const d = shape[0] * shape[1] * shape[2];
      const best = x.slice();
      const bestDistance = new Float64Array(n).fill(Infinity);
      for (const a of directions) {
        const adv = await a.perturb(source, batch, a.kind === "fixed" ? epsilons[a.distance]! : null, rng);
        const direction = new Float32Array(n * d);
        for (let j = 0; j < n * d; j++) direction[j] = adv[j] - x[j];
        normalizeRows(direction, n, distance);
        const diameter = distance === "l2" ? (high - low) * Math.sqrt(d) : high - low;
        const { scale, adversarial } = await smallestAdversarialScale(
          model,
          batch,
          clippedRay(x, direction, d, low, high),
          maxScale ?? diameter,
          options,
        );
        const dist = distanceOf(distance)(x, adversarial, n);
        for (let i = 0; i < n; i++) {
          if (scale[i] < Infinity && dist[i] < bestDistance[i]) {
            bestDistance[i] = dist[i];
            best.set(adversarial.subarray(i * d, (i + 1) * d), i * d);
          }
        }
      }
      return best;
    },
  };
}
