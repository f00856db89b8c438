/**
 * The speed tables of docs/performance.md, written from a `deno task bench --json` report so
 * the numbers there are never typed by hand: the machine, its load average,
 * PyTorch's BLAS kernel, per model the step times and the median paired
 * ratio with its spread, the goals and result checks of the model entries that
 * have them (ABS, test-time adaptation), the ANT step against a smallCnn step, the Tent step
 * against a training step and the prior-mode forward against the source-mode one, the data-path
 * entries beside NumPy with their absolute goals, the `--corruptions` table
 * (images/s per corruption beside NumPy, MNIST-C on 10,000 digits) and the
 * `--profile` kernels when present, the entries a backend did not time, with
 * the reason, and for the data-parallel entries a table of the step
 * with N workers and with one beside PyTorch on one thread and on N, their
 * paired ratios and the communication share. A `--only` group's report renders the
 * same way into its own section (`--section bench-tta`, `bench-cebra`,
 * `bench-vae-pca`, `bench-firevnet`, `bench-pose`, `bench-workers`).
 *
 * usage: deno task bench-readme <bench.json> [--page path] [--section name]
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { exitWithUsageError, parseCommandLine } from "../lib/core/cli.ts";
import { writeSection } from "../lib/core/readme.ts";
import type { BenchReport, CorruptionSection, ModelResult, ProfileReport, ReferenceInfo } from "./harness/report.ts";

/** The page whose bench sections the speed tables are written into. */
export const PERFORMANCE_PAGE = fileURLToPath(new URL("../docs/performance.md", import.meta.url));

/** The speed sections `--section` may name, in page order. */
export const SPEED_SECTIONS = [
  "bench",
  "bench-tta",
  "bench-cebra",
  "bench-vae-pca",
  "bench-firevnet",
  "bench-pose",
  "bench-workers",
  "bench-webgpu",
  "bench-webgpu-tta",
  "bench-webgpu-cebra",
  "bench-webgpu-firevnet",
  "bench-webgpu-software",
  "bench-webgpu-software-stock",
];

/** The steps README's comparison shows (docs/performance.md has every entry): the issue's two goals. */
const README_CALL_ROWS: string[] = ["conv-vae-64", "bncnn-train-step-128"];

/** The section of README.md comparing WebGPU calls per step with latentlab's kernels and TF.js's (`--stock`). */
export const WEBGPU_CALLS_SECTION = "webgpu-calls";

const LABELS: Record<string, string> = {
  "conv-vae-64": "conv VAE 64×64",
  "conv-vae-32": "conv VAE 32×32",
  "mlp-vae-64": "MLP VAE 64×64",
  "mnist-cnn": "MNIST CNN",
  "ant-step": "ANT step (generator + classifier) on the MNIST CNN",
  "conv-encoder-infer": "conv encoder inference",
  "cnn-regressor-32": "CNN regressor 32×32",
  "mlp-regressor-32": "MLP regressor 32×32",
  "abs-inference": "ABS inference (1,000 prototypes, 5 Adam steps)",
  "abs-cnn-input-grad": "ABS CNN input gradient",
  "splits": "dSprites' four benchmark splits",
  "r2-scores": "r2Scores, 500,000 × 5",
  "tent-step-128": "Tent step (BN affine only) on the BN MNIST CNN",
  "bncnn-train-step-128": "BN MNIST CNN training step",
  "prior-forward-n1": "BN MNIST CNN forward, prior mode n 1, N 16",
  "source-forward": "BN MNIST CNN forward, source statistics",
  "linear-ensemble-30": "30 linear VAEs in one graph, Adam step (3 → 2, batch 100 each)",
  "synth-mlp-64": "9 tanh 64-64 VAEs in one graph, Adam step (3 → 2, batch 100 each)",
  "dto-500x1024x5": "DtO (NumPy eigh, SciPy linear_sum_assignment)",
  "ds-5000": "Disentanglement Score (scikit-learn KNeighborsRegressor)",
  "firevnet-dense-196": "dense fiRevNet d 196 (8 blocks, h 128), Adamax step",
  "firevnet-dense-100": "dense fiRevNet d 100 (4 blocks, h 128), Adam step",
  "firevnet-conv-32": "conv fiRevNet 32×32×3 (2 levels × 4 steps, 64 filters), Adamax step",
  "firevnet-inverse-196": "dense fiRevNet d 196 inverse",
  "firevnet-forward-196": "dense fiRevNet d 196 forward",
  "firevnet-metamers-196": "dense fiRevNet d 196 metamers (2 forwards, 1 inverse)",
  "pose-step": "pose net 64×64×3 (8 keypoints, 2 convs per stage), DeepLabCut loss, Adam step",
  "pose-render": "quadruped frames 64×64×3 (renderFrames)",
  "conv-vae-64-dp2": "conv VAE 64×64, 2 data-parallel workers",
  "conv-vae-32-dp2": "conv VAE 32×32, 2 data-parallel workers",
  "mlp-vae-64-dp2": "MLP VAE 64×64, 2 data-parallel workers",
  "mnist-cnn-dp2": "MNIST CNN, 2 data-parallel workers",
  "cnn-regressor-32-dp2": "CNN regressor 32×32, 2 data-parallel workers",
};

/** What one step of a data-path entry works on, where "N rows" would not say it. */
const WORK: Record<string, string> = {
  "dto-500x1024x5": "500 Jacobians 1024×5",
  "ds-5000": "5,000 rows × 2 latents × 2 factors",
};

const ms = (v: number) => v.toFixed(v >= 100 ? 0 : 1);
const ratio = (v: number) => v.toFixed(2);
const load = (v: number) => v.toFixed(2);

/** A result's median times (ours, the reference's) and its paired ratio's median, IQR and range, as table cells. */
function timeCells(r: BenchReport["results"][number]): string {
  const q = r.ratio;
  return [
    ms(r.ms_per_step.median),
    r.reference_ms_per_step ? ms(r.reference_ms_per_step.median) : "—",
    q ? ratio(q.median) : "—",
    q ? `${ratio(q.q1)}–${ratio(q.q3)}` : "—",
    q ? `${ratio(q.min)}–${ratio(q.max)}` : "—",
  ].join(" | ");
}

/**
 * A model entry's goal (time per step, ratio ceiling) with verdicts, whether PyTorch's result agreed with ours, and
 * for an entry timed against a baseline step of ours, the ratio of medians against its ceiling.
 */
export function modelGoalLine(r: BenchReport["results"][number]): string {
  const parts: string[] = [];
  const g = r.goal, b = r.baseline;
  const spreadText = (s: { q1: number; q3: number }) => `IQR ${ratio(s.q1)}–${ratio(s.q3)}`;
  if (b && b.throughput_ratio && b.throughput_floor !== undefined) {
    const t = b.throughput_ratio;
    parts.push(
      `throughput ≥ ${b.throughput_floor}× that of the ${LABELS[b.model] ?? b.model} (${
        ms(b.ms_per_step.median)
      } ms, ` +
        `paired in the same process): ${ms(r.ms_per_step.median)} ms, throughput ratio ${ratio(t.median)} ` +
        `(median paired, ${spreadText(t)}), ${b.met ? "met" : "**not met**"}`,
    );
  } else if (b && b.judged_on === "paired_ratio") {
    parts.push(
      `≤ ${b.ceiling}× a ${LABELS[b.model] ?? b.model} (${ms(b.ms_per_step.median)} ms, paired in the same ` +
        `process): ${ms(r.ms_per_step.median)} ms, paired ratio ${ratio(b.paired_ratio.median)} ` +
        `(${spreadText(b.paired_ratio)}), ${b.met ? "met" : "**not met**"} (ratio of medians ` +
        `${ratio(b.ratio_of_medians)})`,
    );
  } else if (b) {
    parts.push(
      `≤ ${b.ceiling}× a ${LABELS[b.model] ?? b.model} step (${ms(b.ms_per_step.median)} ms, paired in the same ` +
        `process): ${ms(r.ms_per_step.median)} ms, ratio of medians ${ratio(b.ratio_of_medians)}, ` +
        `${b.met ? "met" : "**not met**"} (paired ratio ${ratio(b.paired_ratio.median)}, ` +
        `${spreadText(b.paired_ratio)})`,
    );
  }
  if (g) {
    if (g.images_per_s !== undefined) {
      parts.push(
        `≥ ${g.images_per_s.toLocaleString("en-US")} images/s: ` +
          `${Math.round(g.measured_images_per_s!).toLocaleString("en-US")} images/s (${ms(r.ms_per_step.median)} ms ` +
          `per ${r.batch.toLocaleString("en-US")}), ${g.met ? "met" : "**not met**"}`,
      );
    } else if (g.ms !== undefined) {
      parts.push(`≤ ${g.ms} ms per step: ${ms(r.ms_per_step.median)} ms, ${g.met ? "met" : "**not met**"}`);
    }
    if (g.ratio !== undefined) {
      parts.push(
        `ratio to PyTorch ≤ ${g.ratio}: ` +
          (r.ratio ? `${ratio(r.ratio.median)}, ${g.ratio_met ? "met" : "**not met**"}` : "not measured"),
      );
    }
  }
  if (r.check && r.reference_library === "none") {
    parts.push(`check ${r.check.ok ? "passed" : "**failed**"}: ${r.check.detail}`);
  } else if (r.check) parts.push(`results agree with PyTorch's: ${r.check.ok ? "yes" : "**no**"}, ${r.check.detail}`);
  const sources = [...new Set([b?.source, g?.source].filter((v): v is string => v !== undefined))];
  return `${LABELS[r.model] ?? r.model} (${r.backend}, batch ${r.batch}): ${parts.join("; ")}` +
    (sources.length ? `. Goal${sources.length > 1 ? "s" : ""}: ${sources.join("; ")}.` : ".");
}

/** The BLAS the reference ran, in words: OpenBLAS's own config and core when it reported them. */
export function blasDescription(report: BenchReport): string {
  return report.reference ? referenceBlas(report.reference) : "none";
}

/** The BLAS one PyTorch worker ran, in words. */
function referenceBlas(ref: ReferenceInfo): string {
  const openblas = ref.blas.openblas as { config: string; core: string } | null;
  if (openblas) return `${openblas.config.split(" ").slice(0, 2).join(" ")}, core kernel ${openblas.core}`;
  return `${ref.blas.blas_info ?? "unknown"} (torch build setting)`;
}

/** NumPy's BLAS in words: OpenBLAS's config and core, else the library file it links. */
export function numpyBlasDescription(report: BenchReport): string {
  const numpy = report.reference?.numpy;
  if (!numpy) return "unknown";
  if (numpy.openblas) {
    return `${numpy.openblas.config.split(" ").slice(0, 2).join(" ")}, core kernel ${numpy.openblas.core}`;
  }
  return numpy.library ?? "none found";
}

/** The Markdown between a bench section's markers of the performance page. */
export function speedSection(report: BenchReport): string {
  const { machine: m, config: c, reference: ref } = report;
  const lines: string[] = [];
  const wasm = `wasm ${m.tfjs_wasm} (SIMD ${m.wasm_simd ? "on" : "off"}, threads ${m.wasm_threads ? "on" : "off"})`;
  lines.push(
    `Written by \`deno task bench-readme\` from \`deno task bench ${report.argv.join(" ")}\`` +
      (m.commit ? ` at commit ${m.commit}` : "") + `, ${report.date.slice(0, 10)}: ` +
      `${m.cpu}, ${m.cores} cores, ${m.os}, Deno ${m.deno}, tfjs ${m.tfjs} ${wasm}` +
      (m.webgpu_adapter ? `, WebGPU adapter "${m.webgpu_adapter}"` : "") + ". " +
      `1-minute load average ${load(m.load_start[0])} at the start and ${load(m.load_end[0])} at the end ` +
      `(the bench itself counts as 1).`,
  );
  if (ref) {
    const removed = Object.keys(ref.removed_env);
    lines.push(
      `PyTorch ${ref.torch} on ${ref.threads} thread${ref.threads > 1 ? "s" : ""}, BLAS ${blasDescription(report)}` +
        (ref.env === "clean"
          ? removed.length ? ` (${removed.join(" and ")} unset in its process)` : ""
          : " (inheriting the bench's OPENBLAS_* settings)") +
        (ref.malloc === "keep"
          ? ", glibc told to keep freed memory (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_) as the wasm heap does"
          : ", glibc's default malloc") +
        `, in one persistent process. ${c.rounds} rounds per model after ${c.warmup} warm-up steps per side; ` +
        `each round times ${c.steps} steps of each side, the order alternating (ABBA${
          report.results.some((r) => r.baseline && r.reference_ms_per_step) ? "; ABC CBA with a baseline step too" : ""
        }${
          report.results.some((r) => r.reference_threads) ? "; ABCD DCBA with PyTorch on more threads as well" : ""
        }); the ratio is the median over ` +
        `rounds of tfjs ms / PyTorch ms in the same round.`,
    );
  } else {
    lines.push(
      `No PyTorch reference was found. ${c.rounds} rounds of ${c.steps} steps after ${c.warmup} warm-up steps.`,
    );
  }
  const raised = report.results.filter((r) => r.steps_per_round !== undefined);
  if (raised.length > 0) {
    lines.push(
      "Short steps warm up and time more per side (V8 compiles their path over the first few dozen steps): " +
        raised.map((r) => `${r.model} ${r.warmup_steps} warm-up steps, ${r.steps_per_round} steps per round`)
          .join("; ") +
        ".",
    );
  }
  // Reports written before the data-path entries existed have no reference_library: all of theirs are torch's.
  // Entries timed against a baseline of ours ("none") sit among the models, with no PyTorch columns.
  const models = report.results.filter((r) => (r.reference_library ?? "torch") !== "numpy");
  const data = report.results.filter((r) => r.reference_library === "numpy");
  if (models.length > 0 || data.length === 0) {
    lines.push("");
    lines.push(
      "| model | backend | batch | tfjs ms/step | PyTorch ms/step | ratio tfjs/PyTorch | ratio IQR | ratio min–max | " +
        "PyTorch page faults/step | load before → after |",
    );
    lines.push("|---|---|---|---|---|---|---|---|---|---|");
  }
  for (const r of models) {
    lines.push(
      `| ${LABELS[r.model] ?? r.model} | ${r.backend} | ${r.batch} | ${timeCells(r)} | ${
        r.reference_page_faults_per_step ?? "—"
      } | ${load(r.load_before)} → ${load(r.load_after)} |`,
    );
  }
  const parallel = models.filter((r) => r.reference_threads || r.communication_share);
  if (parallel.length > 0) lines.push("", ...dataParallelLines(parallel, report));
  const onWebgpu = models.filter((r) => r.webgpu_calls);
  if (onWebgpu.length > 0) lines.push("", ...webgpuCallLines(onWebgpu, report));
  const goals = models.filter((r) => r.goal || r.check || r.baseline);
  if (goals.length > 0) {
    lines.push("");
    lines.push(
      "Goals (on our median step and the median paired ratio) and result checks of the model entries that have them:",
    );
    lines.push("");
    for (const r of goals) lines.push(`- ${modelGoalLine(r)}`);
  }
  if (data.length > 0) {
    lines.push("");
    lines.push(
      (ref?.numpy
        ? `Data paths in plain JS beside NumPy ${ref.numpy.version} (BLAS ${numpyBlasDescription(report)}) in the ` +
          `same reference process, with its environment; `
        : "Data paths in plain JS, no NumPy reference; ") +
        `the same rounds and ratio as above, ours / NumPy, and each entry's absolute goal on our median:`,
    );
    lines.push("");
    lines.push(
      "| entry | per step | ours ms | NumPy ms | ratio ours/NumPy | ratio IQR | ratio min–max | goal | results agree | " +
        "load before → after |",
    );
    lines.push("|---|---|---|---|---|---|---|---|---|---|");
    for (const r of data) {
      const goal = r.goal ? `≤ ${r.goal.ms} ms: ${r.goal.met ? "met" : "**not met**"}` : "—";
      const work = WORK[r.model] ??
        (r.model === "splits" ? `${r.batch} splits` : `${r.batch.toLocaleString("en-US")} rows`);
      lines.push(
        `| ${LABELS[r.model] ?? r.model} | ${work} | ${timeCells(r)} | ${goal} | ${
          r.check ? (r.check.ok ? "yes" : "**no**") : "—"
        } | ${load(r.load_before)} → ${load(r.load_after)} |`,
      );
    }
  }
  if (report.not_timed?.length) {
    lines.push("");
    for (const n of report.not_timed) {
      lines.push(`Not timed: ${LABELS[n.model] ?? n.model} on ${n.backend}: ${n.reason}.`);
    }
  }
  if (report.corruptions) lines.push("", ...corruptionLines(report.corruptions, report));
  if (report.datasets.length > 0) {
    lines.push("");
    lines.push("Rendering the training images, per dataset (one core, batches of 64):");
    lines.push("");
    lines.push("| dataset | images/s | batch of 64 ms | share of a conv VAE 64×64 step |");
    lines.push("|---|---|---|---|");
    for (const d of report.datasets) {
      const share = d.share_of_conv_vae_64 === null ? "—" : `${(100 * d.share_of_conv_vae_64).toFixed(1)}%`;
      lines.push(`| ${d.name} | ${d.images_per_s} | ${d.batch_ms.toFixed(2)} | ${share} |`);
    }
  }
  const profiles = report.profiles ?? (report.profile ? [report.profile] : []);
  if (profiles.length) lines.push("", ...profileLines(profiles));
  return lines.join("\n");
}

/**
 * The `--profile` tables: per entry, its kernels (the 8 slowest and every convolution or matrix product) with
 * GFLOP/s against the one-thread sgemm limit, the wall time of an unprofiled step beside the kernels' sum, and its
 * four slowest convolution and matrix-product calls.
 */
function profileLines(profiles: ProfileReport[]): string[] {
  const g = profiles[0].gemm, backend = profiles[0].backend;
  const lines = [
    `Kernels per step on ${backend} (\`--profile\`: \`tf.profile\` over ${profiles[0].steps} steps after 2 warm-up ` +
    `ones), GFLOP/s at 2 FLOP per multiply-add against the one-thread sgemm limit of ${backend}: ` +
    `${ms(g.limit_gflops)} GFLOP/s, the faster of a ${g.n}³ matMul (${ms(g.backend_matmul_gflops)}) and a ` +
    `${8 * g.n}×${g.n}×${g.n} 1×1 convolution (${ms(g.backend_conv1x1_gflops)}), fastest of 7 runs` +
    (g.torch ? `; PyTorch's ${g.n}³ mm runs at ${ms(g.torch.gflops)} GFLOP/s on one thread.` : ".") +
    " Wall is the fastest unprofiled step. `tf.profile` times each kernel on its own and adds a cost per kernel, so " +
    "on steps of many small kernels the kernel sum can exceed the wall time; below it, the difference is the " +
    "engine's per-op cost (tape, dispatch, allocation) and the JS between ops.",
  ];
  for (const p of profiles) {
    const label = LABELS[p.model] ?? p.model;
    const wall = p.wall_ms === undefined
      ? ""
      : `, ${ms(p.wall_ms)} ms wall (kernels ${(100 * p.total_ms / p.wall_ms).toFixed(0)}% of it)`;
    const kernelCount = p.kernels.reduce((n, k) => n + k.calls, 0);
    lines.push("");
    lines.push(
      `${label}${p.batch ? ` (batch ${p.batch})` : ""}: ${ms(p.total_ms)} ms of kernel time in ` +
        `${ms(kernelCount)} kernel calls per step${wall}.`,
    );
    lines.push("");
    lines.push(`| kernel | calls | ms/step | share | GFLOP/s | of the sgemm limit |`);
    lines.push("|---|---|---|---|---|---|");
    for (const k of p.kernels.filter((k, i) => i < 8 || k.gflops !== null)) {
      lines.push(
        `| ${k.name} | ${ms(k.calls)} | ${ms(k.ms)} | ${(100 * k.share).toFixed(0)}% | ${
          k.gflops === null ? "—" : ms(k.gflops)
        } | ${k.of_gemm_limit === null ? "—" : `${(100 * k.of_gemm_limit).toFixed(0)}%`} |`,
      );
    }
    if (p.calls.length) {
      lines.push("");
      lines.push(`| slowest calls | input shapes | ms | GFLOP/s | of the sgemm limit |`);
      lines.push("|---|---|---|---|---|");
      for (const call of p.calls.slice(0, 4)) {
        lines.push(
          `| ${call.name} | ${call.input_shapes.map((s) => `[${s.join(", ")}]`).join(" ")} | ${ms(call.ms)} | ${
            ms(call.gflops)
          } | ${(100 * call.gflops / p.gemm.limit_gflops).toFixed(0)}% |`,
        );
      }
    }
  }
  return lines;
}

/**
 * The data-parallel entries' table: the step with N workers and its 1-worker baseline beside PyTorch on the
 * reference's threads and on N, the paired ratios to PyTorch on N threads (no goal) and `DataParallel`'s
 * communication share.
 */
export function dataParallelLines(results: BenchReport["results"], report: BenchReport): string[] {
  const ref = report.reference, second = report.reference_threads;
  const threads = second?.threads ?? results.find((r) => r.reference_threads)?.reference_threads?.threads;
  const n = threads === undefined ? "N" : String(threads);
  const oneThread = ref ? `${ref.threads} thread${ref.threads > 1 ? "s" : ""}` : "one thread";
  const pct = (v: number) => `${(100 * v).toFixed(0)}%`;
  const lines: string[] = [];
  lines.push(
    (second
      ? `Data-parallel steps beside PyTorch on ${oneThread} and on ${n} threads (a second persistent process, the ` +
        `same environment but for the thread count, BLAS ${referenceBlas(second)}), in the same rounds as the ` +
        `table above (ABCD DCBA): the ratios are medians over rounds of ours ms, and of the 1-worker step's, over ` +
        `PyTorch-${n} ms in the same round, with no goal (the goals are on one thread). `
      : "Data-parallel steps; PyTorch on more threads was not run. ") +
      `The communication share is \`DataParallel\`'s: of its \`gradients()\` time, the part the main thread spends ` +
      `outside its own shard (copying variables and shards out, waiting for the worker, summing gradients), median ` +
      `and IQR over rounds.`,
  );
  lines.push("");
  lines.push(
    `| model | backend | tfjs ms/step | 1-worker ms/step | PyTorch ${oneThread} ms/step | PyTorch ${n} threads ` +
      `ms/step | ratio tfjs/PyTorch-${n} | ratio IQR | ratio min–max | ratio 1-worker/PyTorch-${n} | ` +
      `communication share (IQR) | load before → after |`,
  );
  lines.push("|---|---|---|---|---|---|---|---|---|---|---|---|");
  for (const r of results) {
    const t = r.reference_threads, q = t?.ratio, b = t?.baseline_ratio, c = r.communication_share;
    lines.push(
      `| ${LABELS[r.model] ?? r.model} | ${r.backend} | ${ms(r.ms_per_step.median)} | ${
        r.baseline ? ms(r.baseline.ms_per_step.median) : "—"
      } | ${r.reference_ms_per_step ? ms(r.reference_ms_per_step.median) : "—"} | ${
        t ? ms(t.ms_per_step.median) : "—"
      } | ${q ? ratio(q.median) : "—"} | ${q ? `${ratio(q.q1)}–${ratio(q.q3)}` : "—"} | ${
        q ? `${ratio(q.min)}–${ratio(q.max)}` : "—"
      } | ${b ? `${ratio(b.median)} (IQR ${ratio(b.q1)}–${ratio(b.q3)})` : "—"} | ${
        c ? `${pct(c.median)} (${(100 * c.q1).toFixed(0)}–${pct(c.q3)})` : "—"
      } | ${load(r.load_before)} → ${load(r.load_after)} |`,
    );
  }
  return lines;
}

/** The "Corruptions, images/s" table of a `--corruptions` run, with the MNIST-C 10,000-digit time and notes. */
export function corruptionLines(section: CorruptionSection, report: BenchReport): string[] {
  const ref = report.reference;
  const lines: string[] = [];
  const removed = ref ? Object.keys(ref.removed_env) : [];
  lines.push(
    `Corruptions, images/s (\`--corruptions\`): each corruption of ${section.images.toLocaleString("en-US")} ` +
      `real digits (${section.digits}), the 15 MNIST-C ones at their default severities and the 15 common ones ` +
      `with table \`${section.table}\` at severity ${section.severity}, ` +
      (ref?.numpy
        ? `beside bench/corruptions_reference.py (NumPy ${ref.numpy.version}, SciPy and PIL, image by image as the ` +
          `reference code runs; BLAS ${numpyBlasDescription(report)}` +
          (ref.env === "clean" && removed.length ? `, ${removed.join(" and ")} unset in its process` : "") +
          `) in the same run: ${section.rounds} rounds of one pass per side after ${section.warmup} warm-up ` +
          `pass${section.warmup === 1 ? "" : "es"}, the order alternating (ABBA); the ratio is the median over ` +
          `rounds of ours images/s ÷ NumPy's in the same round, goal ≥ ${section.speed_goal}. `
        : `no NumPy reference; ${section.rounds} rounds. `) +
      `"Change" is the mean |corrupted − clean| of one pass on each side (different draws; a sanity check).`,
  );
  lines.push("");
  lines.push(
    "| suite | corruption | ours images/s | NumPy images/s | ours/NumPy | ratio IQR | ratio min–max | " +
      `≥ ${section.speed_goal}× NumPy | change ours / NumPy | load before → after |`,
  );
  lines.push("|---|---|---|---|---|---|---|---|---|---|");
  const count = (v: number) => Math.round(v).toLocaleString("en-US");
  for (const r of section.results) {
    const q = r.speed_ratio;
    const change = `${r.check.ours.toFixed(3)} / ${r.check.reference === null ? "—" : r.check.reference.toFixed(3)}` +
      (r.check.ok ? "" : " **differ**");
    lines.push(
      `| ${r.suite === "mnist_c" ? "MNIST-C" : `${section.table} s${r.severity}`} | ${r.name} | ` +
        `${count(r.images_per_s.median)} | ${
          r.reference_images_per_s ? count(r.reference_images_per_s.median) : "—"
        } | ` +
        `${q ? ratio(q.median) : "—"} | ${q ? `${ratio(q.q1)}–${ratio(q.q3)}` : "—"} | ` +
        `${q ? `${ratio(q.min)}–${ratio(q.max)}` : "—"} | ` +
        `${r.goal_met === null ? "—" : r.goal_met ? "met" : "**not met**"} | ${change} | ` +
        `${load(r.load_before)} → ${load(r.load_after)} |`,
    );
  }
  const judged = section.results.filter((r) => r.goal_met !== null);
  if (judged.length > 0) {
    const missed = judged.filter((r) => !r.goal_met).map((r) => `${r.suite}/${r.name}`);
    lines.push("");
    lines.push(
      `Goal ≥ ${section.speed_goal}× NumPy's images/s: met by ${judged.length - missed.length} of ${judged.length}` +
        (missed.length ? `; not met by ${missed.join(", ")}.` : "."),
    );
  }
  const all = section.mnist_c_all;
  if (all) {
    const slowest = Object.entries(all.per_corruption_s).sort((a, b) => b[1] - a[1]).slice(0, 3);
    lines.push("");
    lines.push(
      `MNIST-C, the 15 corruptions of ${all.images.toLocaleString("en-US")} digits, ours, once: ` +
        `${all.seconds.toFixed(1)} s (goal ≤ ${all.goal_s} s for 10,000: ` +
        `${all.met === null ? "not judged" : all.met ? "met" : "**not met**"}; slowest ` +
        `${slowest.map(([name, s]) => `${name} ${s.toFixed(1)} s`).join(", ")}; load ${load(all.load_before)} → ` +
        `${load(all.load_after)}).`,
    );
  }
  const substitutes = section.results.filter((r) => r.reference_substitute);
  if (substitutes.length > 0) {
    lines.push("");
    lines.push("Where the reference code calls skimage, cv2 or ImageMagick (not installed), the NumPy side runs:");
    lines.push("");
    for (const r of substitutes) lines.push(`- ${r.suite}/${r.name}: ${r.reference_substitute}`);
  }
  return lines;
}

/** Rounds a per-step count: whole where it is, else to one decimal (a call every few steps). */
const perStep = (count: number) => Number.isInteger(count) ? String(count) : count.toFixed(1);

/** The WebGPU calls per step of the entries that were timed on webgpu with an unread step. */
function webgpuCallLines(results: ModelResult[], report: BenchReport): string[] {
  const kernels = report.config.webgpu_kernels === "stock"
    ? "TF.js's own kernels and settings (`--webgpu_kernels stock`)"
    : "latentlab's webgpu kernels and settings (lib/core/kernels/webgpu_*.ts)";
  const lines = [
    `WebGPU calls per step with ${kernels}, over ${results[0].webgpu_calls!.steps} steps recorded back to back ` +
    "with the loss read once after the last (as training reads once per `log_every` steps), after 3 such steps; " +
    "counted by lib/core/kernels/webgpu_counters.ts. GPU ms: the kernels of one step by timestamp queries.",
    "",
    "| model | dispatches | buffers created | uploads | bind groups | submits | readbacks | ms/step | GPU ms/step |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of results) {
    const c = r.webgpu_calls!;
    const n = c.per_step;
    lines.push(
      `| ${LABELS[r.model] ?? r.model} | ${perStep(n.dispatches)} | ${perStep(n.bufferCreations)} | ` +
        `${perStep(n.uploads)} | ${perStep(n.bindGroups)} | ${perStep(n.submits)} | ${perStep(n.readbacks)} | ` +
        `${ms(c.ms_per_step)} | ${c.gpu_ms_per_step === null ? "—" : ms(c.gpu_ms_per_step)} |`,
    );
  }
  return lines;
}

/**
 * README's comparison of the WebGPU calls per step with TF.js's kernels (`stock`, a `--webgpu_kernels stock` report)
 * and latentlab's (`ours`), for the steps of {@linkcode README_CALL_ROWS} both timed.
 */
export function webgpuCallsComparison(ours: BenchReport, stock: BenchReport): string {
  const pairs = ours.results.filter((r) => README_CALL_ROWS.includes(r.model)).flatMap((r) => {
    const before = stock.results.find((s) => s.model === r.model && s.webgpu_calls);
    return r.webgpu_calls && before ? [[before, r] as const] : [];
  });
  if (pairs.length === 0) throw new Error("the two reports have no entry with WebGPU calls in common");
  const arrow = (a: number, b: number) => `${perStep(a)} → ${perStep(b)}`;
  const lines = [
    `WebGPU calls per step, TF.js's kernels → latentlab's, by \`deno task bench --backend webgpu ` +
    `--webgpu_kernels stock|latentlab\` on "${ours.machine.webgpu_adapter}"` +
    (ours.machine.commit ? ` at commit ${ours.machine.commit}` : "") + `, ${ours.date.slice(0, 10)} (the same ` +
    "on any adapter; every entry: [Performance](docs/performance.md#webgpu-calls-per-step-without-a-gpu)).",
    "",
    "| step | batch | dispatches | buffers created | uploads | bind groups | submits | readbacks |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const [before, after] of pairs) {
    const b = before.webgpu_calls!.per_step, a = after.webgpu_calls!.per_step;
    lines.push(
      `| ${LABELS[after.model] ?? after.model} | ${after.batch} | ${arrow(b.dispatches, a.dispatches)} | ` +
        `${arrow(b.bufferCreations, a.bufferCreations)} | ${arrow(b.uploads, a.uploads)} | ` +
        `${arrow(b.bindGroups, a.bindGroups)} | ${arrow(b.submits, a.submits)} | ${arrow(b.readbacks, a.readbacks)} |`,
    );
  }
  return lines.join("\n");
}

/**
 * Rewrites a speed section of the Markdown page at `path` from `report`, aligned as
 * deno fmt aligns it: the CPU one (`bench`) or another machine's, e.g. a GPU's
 * WebGPU run (`bench-webgpu`).
 */
export function writeSpeedTable(report: BenchReport, path: string, section = "bench"): void {
  if (report.schema !== "latentlab-bench/1") throw new Error(`not a latentlab-bench/1 report: ${report.schema}`);
  writeSection(path, section, speedSection(report));
}

if (import.meta.main) {
  const { flags, positionals } = parseCommandLine(Deno.args);
  const unknown = [...flags.keys()].find((key) => !["help", "page", "section", "stock"].includes(key));
  if (unknown) exitWithUsageError(`unknown option --${unknown}; valid: --page, --section, --stock`);
  const sections = [...SPEED_SECTIONS, WEBGPU_CALLS_SECTION];
  if (flags.has("help") || positionals.length !== 1) {
    const usage = `usage: deno task bench-readme <bench.json> [--page path] [--section ${sections.join("|")}]` +
      ` [--stock <bench.json of --webgpu_kernels stock>, with --section ${WEBGPU_CALLS_SECTION}]`;
    if (flags.has("help")) console.log(usage);
    else exitWithUsageError(usage);
  } else {
    const page = flags.get("page"), stock = flags.get("stock");
    if (page === true) exitWithUsageError("--page needs a path");
    if (stock === true) exitWithUsageError("--stock needs the path of a --webgpu_kernels stock report");
    const section = flags.get("section") ?? "bench";
    if (typeof section !== "string" || !sections.includes(section)) {
      exitWithUsageError(`--section must be one of ${sections.join(", ")}, got ${section}`);
    }
    if ((section === WEBGPU_CALLS_SECTION) !== (stock !== undefined)) {
      exitWithUsageError(`--stock goes with --section ${WEBGPU_CALLS_SECTION}, and that section needs it`);
    }
    const report = JSON.parse(Deno.readTextFileSync(positionals[0])) as BenchReport;
    if (section === WEBGPU_CALLS_SECTION) {
      const target = page ?? fileURLToPath(new URL("../README.md", import.meta.url));
      const before = JSON.parse(Deno.readTextFileSync(stock as string)) as BenchReport;
      writeSection(target, section, webgpuCallsComparison(report, before));
      console.log(`wrote the WebGPU calls table of ${target} from ${stock} and ${positionals[0]}`);
    } else {
      writeSpeedTable(report, page ?? PERFORMANCE_PAGE, section as string);
      console.log(`wrote the speed table of ${page ?? PERFORMANCE_PAGE} from ${positionals[0]}`);
    }
  }
}
