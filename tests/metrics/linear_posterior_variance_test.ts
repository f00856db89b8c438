/**
 * Theorem 2's posterior variances, checked by optimisation: a linear β-VAE
 * on Synth-Lin's covariance, trained to convergence in float64 on its exact
 * population loss, against `linearPosteriorVariance` (the formula vae-pca's
 * claim (4) compares the run with).
 *
 * The loss is the one lib/models/ensemble.ts trains: Σ_dims (x̂ − x)² +
 * β·½Σ_j (μ_j² + σ_j² − log σ_j² − 1), with μ = A x, x̂ = D z, z = μ + σ ε.
 * For zero-mean data of covariance C its expectation is
 *
 *   L = tr((DA − I) C (DA − I)ᵀ) + Σ_j ‖d_j‖² σ_j² + (β/2)(tr(A C Aᵀ) + Σ_j (σ_j² − log σ_j² − 1)).
 *
 * (σ_j² enters per sample as ‖d_j‖²σ_j² + (β/2)(σ_j² − log σ_j²), the same for
 * every x, so a constant σ_j² loses nothing.) Along a principal direction of
 * variance λ with d = s·u, μ = a·uᵀx the stationary point is σ² = (β/2)/(s² +
 * β/2), a = s/(s² + β/2) and s² + β/2 = λ, hence σ² = β/(2λ) while β < 2λ,
 * and the latent is pruned (s = 0, σ² = 1) beyond: not (β/2)/(λ + β).
 */
import { assert, assertAlmostEquals } from "../assert.ts";
import { Rng } from "../../lib/core/rng.ts";
import { synthRotation } from "../../lib/data/synth.ts";
import { linearPosteriorVariance } from "../../lib/metrics/polarized.ts";

/** Parameters of the linear VAE: D `[3][2]`, A `[2][3]`, v = log σ² `[2]`, flattened. */
const SIZES = { d: 6, a: 6, v: 2 } as const;
const N = SIZES.d + SIZES.a + SIZES.v;
const D = (p: Float64Array, r: number, j: number) => p[r * 2 + j];
const A = (p: Float64Array, j: number, c: number) => p[6 + j * 3 + c];

/** Population loss and its gradient (closed form) at p for covariance c `[3][3]`. */
function lossAndGrad(p: Float64Array, c: number[][], beta: number): { loss: number; grad: Float64Array } {
  const grad = new Float64Array(N);
  // E = DA − I (3×3), EC = E·C, AC = A·C.
  const e = [0, 1, 2].map((r) => [0, 1, 2].map((k) => D(p, r, 0) * A(p, 0, k) + D(p, r, 1) * A(p, 1, k) - +(r === k)));
  const ec = e.map((row) => [0, 1, 2].map((k) => row.reduce((s, v, l) => s + v * c[l][k], 0)));
  const ac = [0, 1].map((j) => [0, 1, 2].map((k) => [0, 1, 2].reduce((s, l) => s + A(p, j, l) * c[l][k], 0)));
  let loss = 0;
  for (let r = 0; r < 3; r++) for (let k = 0; k < 3; k++) loss += ec[r][k] * e[r][k];
  for (let j = 0; j < 2; j++) {
    const s2 = Math.exp(p[12 + j]);
    let norm = 0;
    for (let r = 0; r < 3; r++) norm += D(p, r, j) ** 2;
    let quad = 0;
    for (let k = 0; k < 3; k++) quad += ac[j][k] * A(p, j, k);
    loss += norm * s2 + (beta / 2) * (quad + s2 - p[12 + j] - 1);
    // ∂/∂D[r][j] = 2 (E C Aᵀ)[r][j] + 2 D[r][j] σ_j²
    for (let r = 0; r < 3; r++) {
      let eca = 0;
      for (let k = 0; k < 3; k++) eca += ec[r][k] * A(p, j, k);
      grad[r * 2 + j] = 2 * eca + 2 * D(p, r, j) * s2;
    }
    // ∂/∂A[j][k] = 2 (Dᵀ E C)[j][k] + β (A C)[j][k]
    for (let k = 0; k < 3; k++) {
      let dec = 0;
      for (let r = 0; r < 3; r++) dec += D(p, r, j) * ec[r][k];
      grad[6 + j * 3 + k] = 2 * dec + beta * ac[j][k];
    }
    grad[12 + j] = norm * s2 + (beta / 2) * (s2 - 1);
  }
  return { loss, grad };
}

/** Synth-Lin's covariance R diag(λ₁, λ₂, 0) Rᵀ and the principal directions R e₁, R e₂. */
function synthCovariance(lambda: [number, number]) {
  const rot = synthRotation();
  const c = [0, 1, 2].map((i) =>
    [0, 1, 2].map((k) => lambda[0] * rot[i][0] * rot[k][0] + lambda[1] * rot[i][1] * rot[k][1])
  );
  return { c, axes: [0, 1].map((a) => rot.map((row) => row[a])) };
}

/**
 * Adam on the population loss from a seeded start (into the basin), then plain gradient descent, whose steps do
 * not hover the way Adam's normalised ones do, until the gradient vanishes; float64 throughout.
 */
function train(c: number[][], beta: number, seed: number): Float64Array {
  const rng = Rng.derive(seed, "linear-vae");
  const p = Float64Array.from({ length: N }, (_, i) => (i < 12 ? 0.5 * rng.normal() : -1));
  const m = new Float64Array(N), v = new Float64Array(N);
  for (let t = 1; t <= 30_000; t++) {
    const { grad } = lossAndGrad(p, c, beta);
    for (let i = 0; i < N; i++) {
      m[i] = 0.9 * m[i] + 0.1 * grad[i];
      v[i] = 0.999 * v[i] + 0.001 * grad[i] ** 2;
      p[i] -= 1e-2 * (m[i] / (1 - 0.9 ** t)) / (Math.sqrt(v[i] / (1 - 0.999 ** t)) + 1e-12);
    }
  }
  for (let step = 0; step < 400_000; step++) {
    const { grad } = lossAndGrad(p, c, beta);
    if (Math.hypot(...grad) < 1e-12) break;
    for (let i = 0; i < N; i++) p[i] -= 0.25 * grad[i];
  }
  return p;
}

Deno.test("linear VAE population gradient equals central differences", () => {
  const { c } = synthCovariance([4 / 12, 1 / 12]);
  const rng = Rng.derive(1, "gradient-check");
  const p = Float64Array.from({ length: N }, () => rng.normal());
  const { grad } = lossAndGrad(p, c, 0.05);
  for (let i = 0; i < N; i++) {
    const h = 1e-6;
    const up = p.slice(), down = p.slice();
    up[i] += h;
    down[i] -= h;
    const numeric = (lossAndGrad(up, c, 0.05).loss - lossAndGrad(down, c, 0.05).loss) / (2 * h);
    assertAlmostEquals(grad[i], numeric, 1e-6 * Math.max(1, Math.abs(numeric)), `parameter ${i}`);
  }
});

for (const beta of [1e-2, 0.05, 0.3]) {
  Deno.test(`linear β-VAE (β ${beta}) trained to convergence: σ_j² = min(1, β/(2λ_j)), decoder along R e_j`, () => {
    const lambda: [number, number] = [4 / 12, 1 / 12]; // Synth-Lin r = 2
    const { c, axes } = synthCovariance(lambda);
    for (const seed of [0, 1]) {
      const p = train(c, beta, seed);
      const gradNorm = Math.hypot(...lossAndGrad(p, c, beta).grad);
      assert(gradNorm < 1e-8, `seed ${seed}: |∇L| ${gradNorm} after training`);
      const sigma2 = [0, 1].map((j) => Math.exp(p[12 + j]));
      // Latent j ↔ axis: the one its decoder column points along (the better-explained latent has the smaller σ²).
      const order = sigma2[0] <= sigma2[1] ? [0, 1] : [1, 0];
      order.forEach((j, axis) => {
        const predicted = linearPosteriorVariance(beta, lambda[axis]);
        assertAlmostEquals(sigma2[j], predicted, 1e-6 * predicted, `seed ${seed}, latent ${j}, λ ${lambda[axis]}`);
        const column = [0, 1, 2].map((r) => D(p, r, j));
        const norm2 = column.reduce((s, x) => s + x * x, 0);
        // ‖d_j‖² = λ_j − β/2 while active; 0 once pruned.
        assertAlmostEquals(norm2, Math.max(0, lambda[axis] - beta / 2), 1e-6, `‖d_${j}‖²`);
        if (norm2 > 1e-6) {
          const cos = Math.abs(column.reduce((s, x, r) => s + x * axes[axis][r], 0)) / Math.sqrt(norm2);
          assertAlmostEquals(cos, 1, 1e-6, `|cos| of column ${j} with R e_${axis + 1}`);
        }
        // The reading (β/2)/(λ_j + β) is low by the share β/(λ_j + β): 2.9% to 55% here.
        const misread = (beta / 2) / (lambda[axis] + beta);
        if (predicted < 1) {
          assertAlmostEquals(
            (sigma2[j] - misread) / sigma2[j],
            beta / (lambda[axis] + beta),
            1e-5,
            `misread ${misread}`,
          );
        }
      });
    }
  });
}
