/**
 * Checks of the polarized regime (Zietlow2022 §3.2.2, Definition 1): latents
 * split into active ones (σ² ≪ 1) and passive ones (μ ≈ 0, σ² ≈ 1), where the KL term reduces to
 * ½Σ_active(μ² − log σ² − 1) (3.5) and the thesis's orthogonality argument
 * holds. {@linkcode polarizedKl} measures how far the exact KL is from that
 * approximation (Δ_KL, 3.38); {@linkcode polarizedFraction} turns a Δ_KL
 * history into Table 3.2's "share of training with Δ_KL < 3% until the end".
 *
 * The thesis has two active-latent rules (Ch. 3: √Var μ_j > 0.5; Ch. 4:
 * E σ_j² < 0.8); both are reported, and the approximation uses Ch. 3's.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import { checkPaired, type Matrix } from "../core/matrix.ts";

/** The result of {@linkcode polarizedKl}. */
export interface PolarizedKl {
  /** Mean over rows of ½Σ_j(μ² + σ² − log σ² − 1), the exact KL to N(0, I) (2.6). */
  kl: number;
  /** Mean over rows of ½Σ_{j active}(μ² − log σ² − 1) (3.5), active by the Ch. 3 rule (`activeStd`). */
  klApprox: number;
  /** |kl − klApprox| / kl (3.38); 0 where kl = 0 (every latent at the prior, where the approximation is exact). */
  deltaKl: number;
  /** Ch. 3 rule per latent: √Var_i μ_j > 0.5 (sample s.d., ddof 1). */
  activeStd: boolean[];
  /** Ch. 4 rule per latent: E_i σ_j² < 0.8. */
  activeVar: boolean[];
}

/**
 * Exact and polarized-regime KL of a diagonal Gaussian encoder over a batch:
 * `mean` and `logVar` `[n, d]` (n ≥ 2, the encoder's μ and log σ² for n
 * inputs), with both active-latent rules.
 */
export function polarizedKl(mean: Matrix, logVar: Matrix): PolarizedKl {
  checkPaired(mean, logVar, { minRows: 2, names: ["mean", "logVar"] });
  if (mean.cols !== logVar.cols) throw new UsageError(`mean has ${mean.cols} latents, logVar ${logVar.cols}`);
  const { rows: n, cols: d } = mean;
  const muSum = new Float64Array(d);
  const varSum = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < d; j++) {
      muSum[j] += mean.data[i * d + j];
      varSum[j] += Math.exp(logVar.data[i * d + j]);
    }
  }
  const muSquares = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < d; j++) muSquares[j] += (mean.data[i * d + j] - muSum[j] / n) ** 2;
  }
  const activeStd = Array.from(muSquares, (s) => Math.sqrt(s / (n - 1)) > 0.5);
  const activeVar = Array.from(varSum, (s) => s / n < 0.8);
  let kl = 0;
  let klApprox = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < d; j++) {
      const mu = mean.data[i * d + j];
      const lv = logVar.data[i * d + j];
      kl += mu * mu + Math.exp(lv) - lv - 1;
      if (activeStd[j]) klApprox += mu * mu - lv - 1;
    }
  }
  kl /= 2 * n;
  klApprox /= 2 * n;
  return { kl, klApprox, deltaKl: kl === 0 ? 0 : Math.abs(kl - klApprox) / kl, activeStd, activeVar };
}

/**
 * Share of training after which Δ_KL < threshold holds to the end: 1 −
 * s_first/total, s_first = the first evaluated step from which every later
 * evaluation is below; 0 if the last evaluation is not below. `steps`
 * (strictly increasing, in 0..totalSteps) are where `deltas` were measured
 * (every 500 batches in the thesis); a NaN Δ_KL counts as not below.
 */
export function polarizedFraction(
  steps: readonly number[],
  deltas: readonly number[],
  totalSteps: number,
  threshold = 0.03,
): number {
  if (steps.length === 0 || steps.length !== deltas.length) {
    throw new UsageError(
      `needs one Δ_KL per evaluated step and at least one: got ${steps.length} steps, ${deltas.length} values`,
    );
  }
  if (!(totalSteps > 0)) throw new UsageError(`totalSteps must be positive, got ${totalSteps}`);
  steps.forEach((s, i) => {
    if (!(s >= 0 && s <= totalSteps) || (i > 0 && !(s > steps[i - 1]))) {
      throw new UsageError(`steps must increase strictly within 0..${totalSteps}: step ${i} is ${s}`);
    }
  });
  let first = steps.length;
  while (first > 0 && deltas[first - 1] < threshold) first--;
  return first === steps.length ? 0 : 1 - steps[first] / totalSteps;
}

/**
 * Theorem 2's posterior variance E σ_j² of a linear β-VAE (loss Σ(x̂ − x)² + β·KL) along a principal direction of
 * variance λ_j: β/(2λ_j) while β < 2λ_j, else 1 (pruned); checked against a linear VAE optimised to convergence in
 * tests/metrics/linear_posterior_variance_test.ts.
 */
export function linearPosteriorVariance(beta: number, lambda: number): number {
  return Math.min(1, beta / (2 * lambda));
}
