import {
  accuracy,
  batchStats,
  bceAndGradient,
  cleanClassMean,
  cleanCovariance,
  COLLAPSE_TOY,
  type CollapseToyVariant,
  corrupt,
  DEFAULT_VARIANT,
  entropyAndGradient,
  type Features,
  initParams,
  type Mat2,
  matMul2,
  noiseCovariance,
  normalize,
  rotation,
  sampleClean,
  tent,
  type ToyData,
  type ToyParams,
  trainOnClean,
  transpose2,
} from "../../lib/adapt/collapse_toy.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import { assert, assertAlmostEquals, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";

const params = (gamma: number[], beta: number[], w: number[]): ToyParams => ({
  gamma: Float64Array.from(gamma),
  beta: Float64Array.from(beta),
  w: Float64Array.from(w),
});

/** Features and labels of `n` corrupted toy points, normalised with their own statistics. */
function toyBatch(seed: number, n: number, s2 = 4): { features: Features; y: Uint8Array } {
  const clean = sampleClean(Rng.derive(seed, "data"), n);
  const x = corrupt(Rng.derive(seed, "noise"), clean, s2);
  return { features: normalize(x, batchStats(x)), y: clean.y };
}

/** Mean BCE and mean entropy written out directly from p = 1/(1 + e^{−f}), without the stable forms. */
function naiveLosses(features: Features, y: Uint8Array, p: ToyParams): { bce: number; entropy: number } {
  let bce = 0, entropy = 0;
  const n = y.length;
  for (let i = 0; i < n; i++) {
    let f = 0;
    for (const [j, z] of [features.z1, features.z2].entries()) f += p.w[j] * (p.gamma[j] * z[i] + p.beta[j]);
    const q = 1 / (1 + Math.exp(-f));
    bce -= y[i] === 1 ? Math.log(q) : Math.log(1 - q);
    entropy -= q * Math.log(q) + (1 - q) * Math.log(1 - q);
  }
  return { bce: bce / n, entropy: entropy / n };
}

Deno.test("rotation follows App. C's R_θ = [[cos θ, sin θ], [−sin θ, cos θ]]", () => {
  const r = rotation(-Math.PI / 4);
  // R_{−π/4}(1, 0) = (cos(−π/4), −sin(−π/4)) = (√½, √½).
  assertAlmostEquals(r[0], Math.SQRT1_2, 1e-15);
  assertAlmostEquals(r[2], Math.SQRT1_2, 1e-15);
  assertEquals(cleanClassMean(1).map((v) => Number(v.toFixed(12))), [0.707106781187, 0.707106781187]);
  // Angles add: R_a R_b = R_{a+b}.
  const product = matMul2(rotation(-Math.PI / 6), rotation(-Math.PI / 4));
  rotation(-5 * Math.PI / 12).forEach((v, i) => assertAlmostEquals(product[i], v, 1e-15));
});

Deno.test("noise covariance has eigenvectors at the printed angles with eigenvalues 0.25 and s² (or their squares)", () => {
  const cases: [Partial<CollapseToyVariant>, number, number[]][] = [
    // Aᵀ D A with A = R_{−5π/12}: the s² axis is row 2 of A, (sin 5π/12, cos 5π/12).
    [{}, 5 * Math.PI / 12, [0.25, 4]],
    [{ noiseRotation: "without_pi4" }, Math.PI / 6, [0.25, 4]],
    [{ noiseScale: "std" }, 5 * Math.PI / 12, [0.0625, 16]],
    // A D Aᵀ: the s² axis is column 2 of A, (sin(−5π/12), cos(−5π/12)).
    [{ noiseOrientation: "transposed" }, -5 * Math.PI / 12, [0.25, 4]],
  ];
  for (const [variant, angle, [minor, major]] of cases) {
    const c = noiseCovariance(4, { ...DEFAULT_VARIANT, ...variant });
    const majorAxis = [Math.sin(angle), Math.cos(angle)], minorAxis = [Math.cos(angle), -Math.sin(angle)];
    for (const [axis, value] of [[majorAxis, major], [minorAxis, minor]] as const) {
      assertAlmostEquals(c[0] * axis[0] + c[1] * axis[1], value * axis[0], 1e-13);
      assertAlmostEquals(c[2] * axis[0] + c[3] * axis[1], value * axis[1], 1e-13);
    }
  }
});

/** Per-class sample mean `[2]` and covariance (÷ n) of row-major `[n, 2]` points. */
function classMoments(x: Float64Array, y: Uint8Array, label: number) {
  let n = 0, m1 = 0, m2 = 0;
  for (let i = 0; i < y.length; i++) {
    if (y[i] !== label) continue;
    n++;
    m1 += x[2 * i];
    m2 += x[2 * i + 1];
  }
  m1 /= n;
  m2 /= n;
  let c11 = 0, c12 = 0, c22 = 0;
  for (let i = 0; i < y.length; i++) {
    if (y[i] !== label) continue;
    const d1 = x[2 * i] - m1, d2 = x[2 * i + 1] - m2;
    c11 += d1 * d1;
    c12 += d1 * d2;
    c22 += d2 * d2;
  }
  return { n, mean: [m1, m2], cov: [c11 / n, c12 / n, c12 / n, c22 / n] as Mat2 };
}

/** Asserts a class's sample moments lie within 3 standard errors of the population's (Gaussian data). */
function assertMoments(x: Float64Array, y: Uint8Array, label: 0 | 1, mean: number[], cov: Mat2, what: string) {
  const sample = classMoments(x, y, label);
  for (let j = 0; j < 2; j++) {
    const se = Math.sqrt(cov[3 * j] / sample.n);
    assert(
      Math.abs(sample.mean[j] - mean[j]) <= 3 * se,
      `${what} class ${label} mean[${j}] ${sample.mean[j]} vs ${mean[j]}`,
    );
  }
  // Var(ĉ_jk) = (Σ_jj Σ_kk + Σ_jk²)/n for Gaussian data.
  for (const [j, k] of [[0, 0], [0, 1], [1, 1]]) {
    const se = Math.sqrt((cov[3 * j] * cov[3 * k] + cov[2 * j + k] ** 2) / sample.n);
    const got = sample.cov[2 * j + k], want = cov[2 * j + k];
    assert(Math.abs(got - want) <= 3 * se, `${what} class ${label} cov[${j}${k}] ${got} vs ${want} (s.e. ${se})`);
  }
}

Deno.test("clean and corrupted points have App. C's class means and covariances (within 3 s.e.)", () => {
  const n = 40_000;
  const clean: ToyData = sampleClean(new Rng(11), n);
  let ones = 0;
  for (const label of clean.y) ones += label;
  assert(Math.abs(ones / n - 0.5) <= 3 * Math.sqrt(0.25 / n), `class 1 fraction ${ones / n}`);
  for (const label of [0, 1] as const) {
    assertMoments(clean.x, clean.y, label, cleanClassMean(label), cleanCovariance(), "clean");
  }
  const shift = rotation(COLLAPSE_TOY.shiftAngle);
  // Per class: mean R_{−π/9} μ, covariance R_{−π/9} Σ_clean R_{−π/9}ᵀ + noise covariance.
  const shiftedCov = matMul2(matMul2(shift, cleanCovariance()), transpose2(shift));
  const variants: Partial<CollapseToyVariant>[] = [
    {},
    { noiseRotation: "without_pi4" },
    { noiseScale: "std" },
    { noiseOrientation: "transposed" },
  ];
  for (const s2 of [4, 25]) {
    for (const partial of variants) {
      const variant = { ...DEFAULT_VARIANT, ...partial };
      const x = corrupt(Rng.derive(12, s2, JSON.stringify(partial)), clean, s2, variant);
      const noise = noiseCovariance(s2, variant);
      const cov = shiftedCov.map((v, i) => v + noise[i]) as Mat2;
      for (const label of [0, 1] as const) {
        const m = cleanClassMean(label);
        const mean = [shift[0] * m[0] + shift[1] * m[1], shift[2] * m[0] + shift[3] * m[1]];
        assertMoments(x, clean.y, label, mean, cov, `s²=${s2} ${JSON.stringify(partial)}`);
      }
    }
  }
});

Deno.test("BN with ε = 0 and full-batch statistics gives zero-mean, unit-variance features", () => {
  const clean = sampleClean(new Rng(3), 5_000);
  for (const x of [clean.x, corrupt(new Rng(4), clean, 25)]) {
    const { z1, z2 } = normalize(x, batchStats(x));
    for (const z of [z1, z2]) {
      const mean = z.reduce((a, b) => a + b, 0) / z.length;
      const variance = z.reduce((a, b) => a + (b - mean) ** 2, 0) / z.length;
      assertAlmostEquals(mean, 0, 1e-14);
      assertAlmostEquals(variance, 1, 1e-13);
    }
  }
});

Deno.test("BCE and entropy values match their direct formulas", () => {
  const { features, y } = toyBatch(5, 400);
  const p = params([1.3, -0.7], [0.2, -0.1], [0.9, 1.1]);
  const naive = naiveLosses(features, y, p);
  assertAlmostEquals(bceAndGradient(features, y, p).loss, naive.bce, 1e-13);
  assertAlmostEquals(entropyAndGradient(features, y, p).entropy, naive.entropy, 1e-13);
  assert(Number.isNaN(entropyAndGradient(features, y, p, false).entropy));
  const f = features.z1.map((z1, i) => 0.9 * (1.3 * z1 + 0.2) + 1.1 * (-0.7 * features.z2[i] - 0.1));
  assertEquals(
    bceAndGradient(features, y, p).accuracy,
    y.filter((label, i) => (f[i] > 0 ? 1 : 0) === label).length / 400,
  );
  assertEquals(accuracy(features, y, p), bceAndGradient(features, y, p).accuracy);
});

Deno.test("hand-written gradients match central finite differences of the losses", () => {
  const { features, y } = toyBatch(6, 300);
  const h = 1e-6;
  for (const p of [params([1.3, -0.7], [0.2, -0.1], [0.9, 1.1]), params([4, 3], [0.5, 0.3], [-1.2, 0.8])]) {
    const bce = bceAndGradient(features, y, p).grad;
    const entropy = entropyAndGradient(features, y, p).gradGamma;
    for (const key of ["gamma", "beta", "w"] as const) {
      for (let j = 0; j < 2; j++) {
        const at = (delta: number) => {
          const q = { gamma: p.gamma.slice(), beta: p.beta.slice(), w: p.w.slice() };
          q[key][j] += delta;
          return { bce: bceAndGradient(features, y, q).loss, entropy: entropyAndGradient(features, y, q).entropy };
        };
        const [plus, minus] = [at(h), at(-h)];
        assertAlmostEquals(bce[key][j], (plus.bce - minus.bce) / (2 * h), 1e-8, `BCE ∂/∂${key}[${j}]`);
        if (key === "gamma") {
          assertAlmostEquals(entropy[j], (plus.entropy - minus.entropy) / (2 * h), 1e-8, `entropy ∂/∂γ[${j}]`);
        }
      }
    }
  }
});

Deno.test("training steps by the BCE gradient with App. C's decays; Tent moves γ alone", () => {
  const { features, y } = toyBatch(7, 200);
  const start = initParams(new Rng(8));
  // Two updates by hand: lr 0.1, then ×0.1 from update 1 on (decayAt [1]).
  const g0 = bceAndGradient(features, y, start).grad;
  const after1 = params(
    [0, 1].map((j) => start.gamma[j] - 0.1 * g0.gamma[j]),
    [0, 1].map((j) => start.beta[j] - 0.1 * g0.beta[j]),
    [0, 1].map((j) => start.w[j] - 0.1 * g0.w[j]),
  );
  const g1 = bceAndGradient(features, y, after1).grad;
  const trained = trainOnClean(features, y, start, { steps: 2, decayAt: [1] });
  for (const key of ["gamma", "beta", "w"] as const) {
    for (let j = 0; j < 2; j++) assertAlmostEquals(trained[key][j], after1[key][j] - 0.01 * g1[key][j], 1e-15);
  }
  const fixed = trainOnClean(features, y, start, { steps: 50, bnAffine: "fixed" });
  assertEquals([...fixed.gamma, ...fixed.beta], [1, 1, 0, 0]);
  assertNotEquals([...fixed.w], [...start.w]);

  const adapted = tent(features, y, trained, { steps: 3, lr: 0.5, logEvery: 2 });
  assertEquals(adapted.curve.map((point) => point.step), [0, 2, 3]);
  assertEquals([...adapted.params.w, ...adapted.params.beta], [...trained.w, ...trained.beta]);
  let gamma = trained.gamma.slice();
  for (let k = 0; k < 3; k++) {
    const g = entropyAndGradient(features, y, { ...trained, gamma }).gradGamma;
    gamma = Float64Array.from(gamma, (v, j) => v - 0.5 * g[j]);
  }
  assertEquals([...adapted.params.gamma], [...gamma]);
  const first = entropyAndGradient(features, y, trained);
  assertEquals(adapted.curve[0], {
    step: 0,
    accuracy: first.accuracy,
    entropy: first.entropy,
    gammaNorm: Math.hypot(...trained.gamma),
  });
});

Deno.test("the whole toy is determined by its seed", () => {
  const pipeline = (seed: number) => {
    const clean = sampleClean(Rng.derive(seed, "data"), 500);
    const cleanFeatures = normalize(clean.x, batchStats(clean.x));
    const trained = trainOnClean(cleanFeatures, clean.y, initParams(Rng.derive(seed, "init")), { steps: 100 });
    const x = corrupt(Rng.derive(seed, "noise"), clean, 25);
    return { x, trained, ...tent(normalize(x, batchStats(x)), clean.y, trained, { steps: 200, logEvery: 50 }) };
  };
  const [a, b, c] = [pipeline(1), pipeline(1), pipeline(2)];
  assertEquals(a, b);
  assertNotEquals(a.x, c.x);
  assertNotEquals(a.curve, c.curve);
});

Deno.test("bad input is refused with UsageError", () => {
  assertThrows(() => sampleClean(new Rng(0), 1), UsageError, "points");
  const clean = sampleClean(new Rng(0), 10);
  for (const s2 of [0, -4, NaN]) assertThrows(() => corrupt(new Rng(0), clean, s2), UsageError, "s²");
  assertThrows(() => noiseCovariance(0), UsageError, "s²");
  const features = normalize(clean.x, batchStats(clean.x));
  assertThrows(() => tent(features, clean.y, initParams(new Rng(0)), { steps: 0 }), UsageError, "Tent steps");
  assertThrows(() => trainOnClean(features, clean.y, initParams(new Rng(0)), { steps: 0 }), UsageError, "steps");
});
