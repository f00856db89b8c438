/**
 * `--corruptions`: images/s of each of the 15 MNIST-C corruptions (lib/data/mnist_c.ts) and of the 15 common ones
 * with table `cifar` at severity {@linkcode CORRUPTION_SEVERITY} (lib/data/corruptions.ts) on real digits
 * (lib/data/mnist.ts `loadMnist`, 1,000 by default), each paired round by round (one pass over the digits per side
 * per round, ABBA) with its NumPy/SciPy/PIL reference (bench/corruptions_reference.py, image by image as the
 * reference code runs; the reference worker serves it, in the same process and environment as the other NumPy
 * entries), the median of the per-round ratios ours images/s ÷ NumPy's with its spread, and the load; goal: ≥
 * {@linkcode CORRUPTION_SPEED_GOAL}. Both sides' mean |corrupted − clean| is compared as a sanity check (the draws
 * differ). Then the 15 MNIST-C corruptions of 10,000 digits are timed once, ours only; goal ≤
 * {@linkcode MNIST_C_SECONDS_GOAL} s in all.
 *
 * @module
 */
import { loadavg } from "node:os";
import { formatNpy } from "../../lib/core/npy.ts";
import { COMMON_CORRUPTIONS, corrupt } from "../../lib/data/corruptions.ts";
import type { Observations } from "../../lib/data/ground_truth.ts";
import { MNIST_C_CORRUPTIONS, mnistC } from "../../lib/data/mnist_c.ts";
import { loadMnist, MNIST_TEST_TOTAL } from "../../lib/data/mnist.ts";
import type { TorchWorker } from "../harness/reference_worker.ts";
import { type CorruptionResult, type CorruptionSection, spread } from "../harness/report.ts";
import { type PairedWork, timeRounds } from "../harness/rounds.ts";

/** Floor on the median paired ratio ours images/s ÷ NumPy's per corruption. */
export const CORRUPTION_SPEED_GOAL = 0.5;

/** Ceiling in seconds on the 15 MNIST-C corruptions of 10,000 digits, ours. */
export const MNIST_C_SECONDS_GOAL = 60;

/** Severity of the `cifar` corruptions timed by `--corruptions`. */
export const CORRUPTION_SEVERITY = 3;

/** Mean |a − b| over all values: how much a corruption changed the digits. */
function meanAbsoluteChange(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let k = 0; k < a.length; k++) sum += Math.abs(a[k] - b[k]);
  return sum / a.length;
}

/**
 * How far apart the two sides' mean changes may be for the sanity check to pass: the draws differ, so one
 * pass over 1,000 digits agrees to a few per cent where the semantics agree, while a corruption that does
 * something else (another scale, a missed step) is off by far more.
 */
const CHANGE_TOLERANCE = { relative: 0.2, absolute: 0.002 };

/**
 * `images` `[n, 28, 28, 1]` digits: a seeded stratified draw of the official test digits (all 10,000 when
 * n ≥ 10,000), then training digits for the rest.
 */
function realDigits(n: number): Observations {
  const test = Math.min(n, MNIST_TEST_TOTAL), train = Math.max(1, n - test);
  const { train: a, test: b } = loadMnist({ seed: 0, train, test });
  const values = new Float32Array(n * 784);
  values.set(b.images.subarray(0, test * 784));
  if (n > test) values.set(a.images.subarray(0, (n - test) * 784), test * 784);
  return { values, n, shape: [28, 28, 1] };
}

/**
 * The `--corruptions` section: each corruption of `images` real digits, ours against the NumPy reference in
 * paired rounds (one pass per side per round), then the 15 MNIST-C corruptions of `allImages` digits, ours, once.
 */
export async function corruptionSection(
  worker: TorchWorker | null,
  cfg: { rounds: number; warmup: number; images: number; allImages: number },
): Promise<CorruptionSection> {
  const digits = realDigits(cfg.images);
  const dir = Deno.makeTempDirSync({ prefix: "latentlab-bench-corruptions-" });
  const path = `${dir}/digits.npy`;
  Deno.writeFileSync(path, formatNpy(digits.values, [digits.n, 28, 28, 1]));
  const entries = [
    ...MNIST_C_CORRUPTIONS.map((name) => ({ suite: "mnist_c" as const, name })),
    ...COMMON_CORRUPTIONS.map((name) => ({ suite: "cifar" as const, name })),
  ];
  const results: CorruptionResult[] = [];
  // A pass over 1,000 digits is long enough to time alone, and one warm-up pass compiles every path.
  const rounds = { rounds: cfg.rounds, steps: 1, warmup: Math.min(1, cfg.warmup) };
  try {
    for (const { suite, name } of entries) {
      const run = suite === "mnist_c"
        ? () => mnistC(digits, name as typeof MNIST_C_CORRUPTIONS[number], { seed: 0 })
        : () =>
          corrupt(digits, name as typeof COMMON_CORRUPTIONS[number], CORRUPTION_SEVERITY, { seed: 0, table: "cifar" });
      let ours = NaN, reference: number | null = null, substitute: string | null = null;
      const work: PairedWork = {
        name: `${suite}/${name}`,
        build() {
          ours = meanAbsoluteChange(run().values, digits.values);
          return {
            parameters: 0,
            step() {
              run();
              return Promise.resolve();
            },
            dispose() {},
            referenceArgs: { images: path, seed: 0 },
            check(theirs) {
              const r = theirs as { mean_abs_change: number; substitute: string | null } | null;
              reference = r?.mean_abs_change ?? null;
              substitute = r?.substitute ?? null;
              if (reference === null) return { ok: true, detail: `mean change ${ours.toFixed(4)} (no NumPy)` };
              const gap = Math.abs(ours - reference);
              const ok = gap <= CHANGE_TOLERANCE.absolute + CHANGE_TOLERANCE.relative * Math.max(ours, reference);
              return { ok, detail: `mean |change| ours ${ours.toFixed(4)}, NumPy ${reference.toFixed(4)}` };
            },
          };
        },
      };
      console.error(`timing ${suite}/${name} on ${digits.n} digits beside NumPy ...`);
      const t = await timeRounds(work, worker, rounds);
      const perSecond = (ms: number[]) => spread(ms.map((v) => digits.n * 1000 / v));
      const speed = t.theirs.length ? spread(t.rounds.map((r) => r.reference_ms! / r.ours_ms)) : null;
      const result: CorruptionResult = {
        suite,
        name,
        severity: suite === "cifar" ? CORRUPTION_SEVERITY : null,
        images: digits.n,
        images_per_s: perSecond(t.ours),
        reference_images_per_s: t.theirs.length ? perSecond(t.theirs) : null,
        speed_ratio: speed,
        rounds: t.rounds,
        goal_met: speed ? speed.median >= CORRUPTION_SPEED_GOAL : null,
        check: { ...t.check!, ours, reference },
        reference_substitute: substitute,
        load_before: t.loadBefore,
        load_after: t.loadAfter,
      };
      results.push(result);
      console.error(corruptionLine(result));
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  let all: CorruptionSection["mnist_c_all"] = null;
  if (cfg.allImages > 0) {
    const many = realDigits(cfg.allImages);
    console.error(`timing the 15 MNIST-C corruptions of ${many.n} digits, ours ...`);
    const perCorruption: Record<string, number> = {};
    const loadBefore = loadavg()[0];
    for (const name of MNIST_C_CORRUPTIONS) {
      const start = performance.now();
      mnistC(many, name, { seed: 0 });
      perCorruption[name] = (performance.now() - start) / 1000;
    }
    const seconds = Object.values(perCorruption).reduce((a, b) => a + b, 0);
    // The goal is set for 10,000 digits; a smaller run is reported without a verdict.
    const met = many.n === 10_000 ? seconds <= MNIST_C_SECONDS_GOAL : null;
    all = {
      images: many.n,
      seconds,
      goal_s: MNIST_C_SECONDS_GOAL,
      met,
      per_corruption_s: perCorruption,
      load_before: loadBefore,
      load_after: loadavg()[0],
    };
    console.error(
      `MNIST-C, 15 corruptions of ${many.n} digits: ${seconds.toFixed(1)} s; goal ≤ ${MNIST_C_SECONDS_GOAL} s ` +
        `${met === null ? "not judged (not 10,000 digits)" : met ? "met" : "NOT met"}; load ${
          loadBefore.toFixed(2)
        } → ` +
        `${all.load_after.toFixed(2)}`,
    );
  }
  return {
    digits: "lib/data/mnist.ts loadMnist({ seed: 0 }): official test digits, then training digits",
    images: digits.n,
    rounds: rounds.rounds,
    warmup: rounds.warmup,
    table: "cifar",
    severity: CORRUPTION_SEVERITY,
    speed_goal: CORRUPTION_SPEED_GOAL,
    results,
    mnist_c_all: all,
  };
}

/** One line per corruption: both sides' images/s, the paired speed ratio and its goal, the load and the check. */
export function corruptionLine(r: CorruptionResult): string {
  const f = (v: number) => v.toFixed(0), q = r.speed_ratio, ref = r.reference_images_per_s;
  return `${r.suite}/${r.name}: ours ${f(r.images_per_s.median)} images/s` +
    (ref ? `, NumPy ${f(ref.median)} images/s` : ", no NumPy") +
    (q
      ? `, ours/NumPy ${q.median.toFixed(2)} (IQR ${q.q1.toFixed(2)}–${q.q3.toFixed(2)}, min–max ` +
        `${q.min.toFixed(2)}–${q.max.toFixed(2)}); goal ≥ ${CORRUPTION_SPEED_GOAL} ${r.goal_met ? "met" : "NOT met"}`
      : "") +
    `; load ${r.load_before.toFixed(2)} → ${r.load_after.toFixed(2)}; check ${r.check.ok ? "ok" : "FAILED"}: ` +
    r.check.detail;
}
