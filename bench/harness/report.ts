/**
 * The bench's report: the JSON `--json` writes and bench/readme_table.ts reads (schema `latentlab-bench/1`), the
 * spread every time is summarised by, and the terminal line of an entry with a goal, a check or a baseline.
 *
 * @module
 */
import type { WebgpuCalls } from "./webgpu_calls.ts";
import type { ModelName } from "./names.ts";

/** Summary of a sample: median, quartiles and range. */
export interface Spread {
  median: number;
  q1: number;
  q3: number;
  min: number;
  max: number;
}

/** One paired round: each side's median step time in it, and their ratio (the other side: a `baseline` step if any). */
export interface Round {
  ours_ms: number;
  reference_ms: number | null;
  ratio: number | null;
  /** An entry with a baseline step of ours: its median step in the round and ours_ms over it. */
  baseline_ms?: number;
  baseline_ratio?: number;
  /**
   * An entry paired with PyTorch on N threads too (`workers` group): its median step in the round, ours_ms over it
   * and baseline_ms over it.
   */
  reference_threads_ms?: number;
  reference_threads_ratio?: number;
  baseline_reference_threads_ratio?: number;
  /** A data-parallel entry: `DataParallel`'s communication share over the round's timed steps of ours. */
  communication_share?: number;
}

/** One model on one backend. */
export interface ModelResult {
  /** On WebGPU: calls and time per step with the result read once after several steps (absent elsewhere). */
  webgpu_calls?: WebgpuCalls;
  model: ModelName;
  backend: string;
  /** Images per step. */
  batch: number;
  /** Trainable scalars of our network and of the reference's (null without one); equal when both build the same network. */
  parameters: number;
  reference_parameters: number | null;
  /** Over every timed step of every round. */
  ms_per_step: Spread;
  reference_ms_per_step: Spread | null;
  /** Minor page faults of the reference per timed step (near 0 when its allocator keeps memory). */
  reference_page_faults_per_step: number | null;
  /** Of the per-round ratios tfjs ms / PyTorch ms; null without a reference. */
  ratio: Spread | null;
  rounds: Round[];
  /** 1-minute load average just before and just after this model's rounds. */
  load_before: number;
  load_after: number;
  peak_rss_mb: number;
  /**
   * Warm-up steps per side and timed steps per side per round where the entry raised `config`'s (millisecond
   * steps, whose first few dozen run before V8 has compiled them and whose per-round median needs more than 3
   * steps); absent where `config`'s counts applied.
   */
  warmup_steps?: number;
  steps_per_round?: number;
  /**
   * The reference's library; absent (older reports): torch; none: timed against a baseline of ours (`baseline`) or
   * ours alone (the `cebra` group's sampler draws).
   */
  reference_library?: "torch" | "numpy" | "none";
  /**
   * The entry's absolute goal per step and whether the median step meets it (data-path and ABS
   * entries; absent where the goal is a ratio only); `ratio`: the ceiling on the median paired ratio
   * to the reference, `ratio_met` null without a reference. A throughput goal (`firevnet-metamers-196`) gives
   * its floor `images_per_s` and the images/s of the median step, `measured_images_per_s`; `ms` is then the
   * floor as a ceiling on the step (batch / floor), which `met` judges.
   */
  goal?: {
    ms?: number;
    met?: boolean;
    ratio?: number;
    ratio_met?: boolean | null;
    images_per_s?: number;
    measured_images_per_s?: number;
    source?: string;
  };
  /** Agreement of the two sides' results (data-path and ABS entries); `ok` false fails the entry. */
  check?: { ok: boolean; detail: string };
  /**
   * An entry timed against a step of ours (`ant-step` against a smallCnn step, the Tent step against a training
   * step, the prior forward against the source forward), round by round, the order alternating.
   */
  baseline?: BaselineComparison;
  /** The `workers` group's entries: PyTorch on N threads in the same rounds; null elsewhere, absent in older reports. */
  reference_threads?: ThreadsComparison | null;
  /**
   * The `workers` group's entries: over the rounds, `DataParallel`'s communication share, the part of its
   * `gradients()` time the main thread spent outside its own shard; null elsewhere, absent in older reports.
   */
  communication_share?: Spread | null;
}

/** An entry's times against PyTorch on N threads (reported, with no goal: the goals are on one thread). */
export interface ThreadsComparison {
  /** The threads PyTorch reported it runs on (the `workers` group's shard count asked). */
  threads: number;
  ms_per_step: Spread;
  page_faults_per_step: number;
  /** Of the per-round ratios entry ms / PyTorch-N ms. */
  ratio: Spread;
  /** Of the per-round ratios baseline ms / PyTorch-N ms (the 1-worker step); null without a baseline step. */
  baseline_ratio: Spread | null;
}

/**
 * Steps of ours timed only as another entry's baseline: the dense fiRevNet's forward (d 196, batch 128, z_s and z_n
 * read back) under `firevnet-inverse-196`.
 */
export type BaselineStepName = "firevnet-forward-196";

/** An entry's times against a baseline step of ours, with the goal on the ratio of their medians. */
export interface BaselineComparison {
  /** The model whose step is the baseline, or a step timed only as a baseline. */
  model: ModelName | BaselineStepName;
  ms_per_step: Spread;
  /** Of the per-round ratios entry ms / baseline ms. */
  paired_ratio: Spread;
  /** Median entry step over median baseline step. */
  ratio_of_medians: number;
  /** The ceiling on the judged ratio (`judged_on`) and whether it is met. */
  ceiling: number;
  met: boolean;
  source: string;
  /** Which ratio the goal judges; absent (older reports): `ratio_of_medians`. */
  judged_on?: "ratio_of_medians" | "paired_ratio";
  /**
   * A goal on throughput: of the per-round ratios baseline ms / entry ms (the entry's images/s over the baseline's),
   * the floor on their median (1 / `ceiling`), which then decides `met`.
   */
  throughput_ratio?: Spread;
  throughput_floor?: number;
}

/** One corruption timed beside its NumPy reference (`--corruptions`). */
export interface CorruptionResult {
  suite: "mnist_c" | "cifar";
  name: string;
  /** The section's severity for `cifar`; null for MNIST-C, which uses each function's default severity. */
  severity: number | null;
  /** Digits corrupted per pass. */
  images: number;
  /** Images/s of each side over the rounds (one pass each per round). */
  images_per_s: Spread;
  reference_images_per_s: Spread | null;
  /** Of the per-round ratios ours images/s ÷ NumPy's (NumPy ms / ours ms); null without a reference. */
  speed_ratio: Spread | null;
  /** Ours ms, NumPy ms per pass and ours/NumPy ms, per round. */
  rounds: Round[];
  /** Median `speed_ratio` ≥ the section's `speed_goal`; null without a reference. */
  goal_met: boolean | null;
  /** Mean |corrupted − clean| in [0, 1] units of one pass on each side (the draws differ, so close, not equal). */
  check: { ok: boolean; detail: string; ours: number; reference: number | null };
  /** What the reference runs where the reference code calls skimage, cv2 or ImageMagick; null when it runs as is. */
  reference_substitute: string | null;
  load_before: number;
  load_after: number;
}

/** The `--corruptions` section. */
export interface CorruptionSection {
  /** Where the digits come from. */
  digits: string;
  images: number;
  rounds: number;
  warmup: number;
  table: "cifar";
  severity: number;
  speed_goal: number;
  results: CorruptionResult[];
  /** The 15 MNIST-C corruptions of `images` digits, ours, timed once; null when skipped. */
  mnist_c_all: {
    images: number;
    seconds: number;
    goal_s: number;
    met: boolean | null;
    per_corruption_s: Record<string, number>;
    load_before: number;
    load_after: number;
  } | null;
}

/** NumPy in the reference worker: its version and the BLAS its core module links. */
export interface NumpyInfo {
  version: string;
  /** The BLAS library file, resolved through symlinks and alternatives. */
  library: string | null;
  openblas: { library: string; config: string; core: string; threads: number } | null;
}

/** What the PyTorch worker reported about itself. */
export interface ReferenceInfo {
  python: string;
  torch: string;
  threads: number;
  /** `clean`: our OpenBLAS overrides (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE) were unset in its process; `inherit`: it saw ours. */
  env: "clean" | "inherit";
  malloc: "keep" | "default";
  /** Variables unset in its process, with the values ours had. */
  removed_env: Record<string, string>;
  /** Variables set in its process: thread counts, and glibc's under `keep`. */
  set_env: Record<string, string>;
  /** torch's build flags, loaded libraries, OpenBLAS's config and core, threadpoolctl when present. */
  blas: Record<string, unknown>;
  /** NumPy, which serves the data-path entries; null when it could not be inspected. */
  numpy: NumpyInfo | null;
}

/** One kernel of the profiled step, summed over its calls. */
export interface KernelProfile {
  name: string;
  calls: number;
  ms: number;
  share: number;
  /** Multiply-adds ×2 for convolutions and matrix products; null for other kernels. */
  gflop: number | null;
  gflops: number | null;
  /** gflops over the backend's single-thread sgemm limit (see {@linkcode ProfileReport}). */
  of_gemm_limit: number | null;
}

/** One call of a FLOP-heavy kernel, for finding the slow layer. */
export interface KernelCall {
  name: string;
  input_shapes: number[][];
  ms: number;
  gflops: number;
}

/** The `--profile` section of one entry. */
export interface ProfileReport {
  backend: string;
  model: string;
  /** The entry's batch (absent in reports written when only the conv VAE 64×64 was profiled). */
  batch?: number;
  steps: number;
  /** Kernel time per step, summed over `tf.profile`'s kernels. */
  total_ms: number;
  /** The fastest of `steps` unprofiled steps, wall-clock (absent in older reports). */
  wall_ms?: number;
  /**
   * One-thread sgemm rates, 2 FLOP per multiply-add over the fastest of 7
   * runs: the backend's n×n×n matMul and 1×1 convolution (8n × n × n), the
   * faster of the two as the limit `of_gemm_limit` divides by, and
   * PyTorch's n×n×n torch.mm with the CPU time it used per wall second (1
   * means one thread).
   */
  gemm: {
    n: number;
    backend_matmul_gflops: number;
    backend_conv1x1_gflops: number;
    limit_gflops: number;
    torch: { gflops: number; cpu_per_wall: number } | null;
  };
  kernels: KernelProfile[];
  calls: KernelCall[];
}

/** The JSON `--json` writes and bench/readme_table.ts reads. */
export interface BenchReport {
  schema: "latentlab-bench/1";
  date: string;
  argv: string[];
  config: {
    rounds: number;
    steps: number;
    warmup: number;
    threads: number;
    torch_env: "clean" | "inherit";
    torch_malloc: "keep" | "default";
    models: string[];
    backends: string[];
    /** `--corruptions` was given; absent in older reports. */
    corruptions?: boolean;
    /** The `--only` groups; absent in older reports. */
    only?: string[];
    /** On webgpu: latentlab's kernels and settings or TF.js's own (absent: reports written before the choice). */
    webgpu_kernels?: "latentlab" | "stock";
  };
  machine: {
    /** The commit the bench ran on ("+changes" with uncommitted edits; null outside git; absent in older reports). */
    commit?: string | null;
    cpu: string;
    cores: number;
    memory_gb: number;
    os: string;
    deno: string;
    v8: string;
    tfjs: string;
    tfjs_wasm: string;
    wasm_simd: boolean;
    wasm_threads: boolean;
    /** 1, 5 and 15-minute load averages at start and end; they include the bench's own process. */
    load_start: number[];
    load_end: number[];
    /** The WebGPU adapter's description when the webgpu backend was timed; absent otherwise. */
    webgpu_adapter?: string | null;
  };
  reference: ReferenceInfo | null;
  /**
   * The second PyTorch worker, on as many threads as the `workers` group has shards, when a `workers`-group entry was timed
   * beside it; null otherwise, absent in older reports.
   */
  reference_threads?: ReferenceInfo | null;
  results: ModelResult[];
  /** Rendering a batch of 64 images on one core; `share_of_conv_vae_64`: of a conv VAE 64×64 step when timed. */
  datasets: { name: string; images_per_s: number; batch_ms: number; share_of_conv_vae_64: number | null }[];
  /** `--profile`: one per profiled entry (older reports: `profile`, the conv VAE 64×64's alone). */
  profiles?: ProfileReport[];
  /** Reports written before `profiles`: the conv VAE 64×64's profile or null. */
  profile?: ProfileReport | null;
  /** The `--corruptions` section; absent or null without it. */
  corruptions?: CorruptionSection | null;
  /**
   * Entry and backend pairs the run would have timed but did not, and why (`firevnet-conv-32` on WebGPU where the
   * only adapter renders in software); absent in older reports.
   */
  not_timed?: { model: ModelName; backend: string; reason: string }[];
}

/** Median, quartiles (linear interpolation) and range of `values`. */
export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => {
    const position = q * (sorted.length - 1), low = Math.floor(position);
    return sorted[low] + (sorted[Math.min(low + 1, sorted.length - 1)] - sorted[low]) * (position - low);
  };
  return { median: at(0.5), q1: at(0.25), q3: at(0.75), min: sorted[0], max: sorted.at(-1)! };
}

/**
 * One line on an entry with a goal, a check or a baseline (data-path, ABS, ANT and `tta` entries): absolute
 * times, the paired ratios to the reference and to the baseline step, their goals, the `workers` group's times
 * and ratios against PyTorch on N threads and its communication share, the load and the check.
 */
export function dataEntryLine(r: ModelResult): string {
  const f = (v: number) => v.toFixed(v >= 100 ? 0 : 1), x = (v: number) => v.toFixed(2);
  const iqr = (s: Spread, g = f) => `IQR ${g(s.q1)}–${g(s.q3)}`;
  const range = (s: Spread) => `${iqr(s, x)}, min–max ${x(s.min)}–${x(s.max)}`;
  const verdict = (met: boolean | null | undefined) => met === null ? "not measured" : met ? "met" : "NOT met";
  const q = r.ratio, ref = r.reference_ms_per_step, b = r.baseline;
  const name = r.reference_library === "numpy" ? "NumPy" : "PyTorch";
  const parts = [`ours ${f(r.ms_per_step.median)} ms (${iqr(r.ms_per_step)})`];
  if (b) {
    parts.push(
      `${b.model} step ${f(b.ms_per_step.median)} ms (${iqr(b.ms_per_step)}); ratio of medians ` +
        `${x(b.ratio_of_medians)}, paired ratio ${x(b.paired_ratio.median)} (${range(b.paired_ratio)})` +
        (b.throughput_ratio && b.throughput_floor !== undefined
          ? `, throughput ratio ${x(b.throughput_ratio.median)} (${range(b.throughput_ratio)}); goal ≥ ` +
            `${b.throughput_floor}× throughput ${verdict(b.met)}`
          : `; goal ≤ ${b.ceiling}× ${verdict(b.met)}` +
            (b.judged_on === "paired_ratio" ? " (on the paired ratio)" : "")),
    );
  }
  if (r.reference_library !== "none") {
    parts.push(
      (ref ? `${name} ${f(ref.median)} ms (${iqr(ref)})` : `no ${name}`) +
        (q ? `, ratio ours/${name} ${x(q.median)} (${range(q)})` : ""),
    );
  }
  const goal = r.goal;
  if (goal) {
    const goals = [
      ...(goal.images_per_s !== undefined
        ? [`≥ ${goal.images_per_s} images/s (${goal.measured_images_per_s!.toFixed(0)}) ${verdict(goal.met)}`]
        : goal.ms === undefined
        ? []
        : [`≤ ${goal.ms} ms ${verdict(goal.met)}`]),
      ...(goal.ratio === undefined ? [] : [`ratio ≤ ${goal.ratio} ${verdict(goal.ratio_met)}`]),
    ];
    parts[parts.length - 1] += `; goal ${goals.join(", ")}`;
  }
  const n = r.reference_threads;
  if (n) {
    parts.push(
      `PyTorch on ${n.threads} threads ${f(n.ms_per_step.median)} ms (${iqr(n.ms_per_step)}), ratio ours/PyTorch-` +
        `${n.threads} ${x(n.ratio.median)} (${range(n.ratio)})` +
        (n.baseline_ratio
          ? `, ${r.baseline?.model ?? "baseline"}/PyTorch-${n.threads} ${x(n.baseline_ratio.median)} ` +
            `(${range(n.baseline_ratio)})`
          : "") +
        "; no goal",
    );
  }
  const c = r.communication_share;
  if (c) {
    const pct = (v: number) => `${(100 * v).toFixed(0)}%`;
    parts.push(`communication ${pct(c.median)} of the gradient time (IQR ${(100 * c.q1).toFixed(0)}–${pct(c.q3)})`);
  }
  return `${r.model}${r.backend === "js" ? "" : ` (${r.backend})`}: ${parts.join(", ")}` +
    `; load ${r.load_before.toFixed(2)} → ${r.load_after.toFixed(2)}` +
    (r.check ? `; check ${r.check.ok ? "ok" : "FAILED"}: ${r.check.detail}` : "");
}
