/**
 * Transfer attacks (Schott2019 §5): perturbation directions computed on a
 * substitute model, then a line search on the target for the smallest
 * multiple of each direction that fools it. The target is queried for
 * decisions only, so this attacks models without gradients (ABS) with the
 * gradients of another (a CNN).
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { distanceOf } from "./distances.ts";
import { checkDirectionSearchOptions, directionLineSearch, type DirectionSearchOptions } from "./noise.ts";
import { type Attack, type AttackDistance, type AttackModel, decisionAttack } from "./types.ts";

/** Options of {@linkcode transfer}. */
export interface TransferOptions extends DirectionSearchOptions {
  /** ε handed to each fixed-ε direction attack on the source, by its distance (defaults: l2 1.5, linf 0.3). */
  sourceEpsilons?: Partial<Record<AttackDistance, number>>;
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
  const { distance = "l2" } = options;
  const epsilons: Partial<Record<AttackDistance, number>> = { l2: 1.5, linf: 0.3, ...options.sourceEpsilons };
  if (!directions.length) throw new UsageError("transfer needs at least one direction attack");
  checkDirectionSearchOptions("transfer", options);
  for (const a of directions) {
    if (a.needsGradient && !source.gradient) {
      throw new UsageError(`transfer direction ${a.name} needs gradients, which the source model lacks`);
    }
    if (a.kind === "fixed" && !(epsilons[a.distance]! > 0)) {
      throw new UsageError(`transfer direction ${a.name} is fixed-ε: give sourceEpsilons.${a.distance} > 0`);
    }
  }
  const name = `transfer_${distance}(${directions.map((a) => a.name).join(",")})`;
  return decisionAttack(name, distance, async (model, batch, _epsilon, rng) => {
    const { n, x, d } = batch;
    const best = x.slice();
    const bestDistance = new Float64Array(n).fill(Infinity);
    for (const a of directions) {
      const adv = await a.perturb(source, batch, a.kind === "fixed" ? epsilons[a.distance]! : null, rng);
      const direction = Float32Array.from(adv, (v, j) => v - x[j]);
      const { scale, adversarial } = await directionLineSearch(model, batch, direction, options);
      const dist = distanceOf(distance)(x, adversarial, n);
      for (let i = 0; i < n; i++) {
        if (scale[i] < Infinity && dist[i] < bestDistance[i]) {
          bestDistance[i] = dist[i];
          best.set(adversarial.subarray(i * d, (i + 1) * d), i * d);
        }
      }
    }
    return best;
  });
}
