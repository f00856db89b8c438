/**
 * Paired rounds, the bench's harness: a workload builds its state once, then ours and the other sides (the
 * reference worker's builder of the same name, a baseline step of ours, the reference on more threads) take turns,
 * each timing a few steps per round, the order reversed every other round (ABBA, ABC CBA, ABCD DCBA), which cancels
 * a linear drift in machine load from every ratio; the ratio per entry is the median of the per-round ratios, with
 * its spread, beside the load average.
 *
 * @module
 */
import type * as tf from "@tensorflow/tfjs";
import { loadavg } from "node:os";
import { Rng } from "../../lib/core/rng.ts";
import type { ModelName } from "./names.ts";
import type { TorchWorker } from "./reference_worker.ts";
import { measureWebgpuCalls, type WebgpuCalls } from "./webgpu_calls.ts";
import {
  type BaselineComparison,
  type BaselineStepName,
  type ModelResult,
  type ReferenceInfo,
  type Round,
  spread,
  type ThreadsComparison,
} from "./report.ts";

/** A workload's built state. */
export interface WorkloadState {
  parameters: number;
  step(): Promise<void>;
  dispose(): void;
  /** Arguments of the reference's builder (bench/torch_reference.py passes them on). */
  referenceArgs?: Record<string, unknown>;
  /** Compares our result with the `check` the reference's build returned (null without a reference). */
  check?(reference: unknown): { ok: boolean; detail: string };
  /** A step of ours to pair with instead of the reference worker's (`Workload.baseline`). */
  baselineStep?(): Promise<void>;
  /** `DataParallel`'s communication share of the steps since the last call (`takeCommunicationShare`). */
  takeCommunicationShare?(): number;
  /**
   * The step with its result left on the device, unread (the caller disposes it): training reads once per
   * `log_every` steps, so on WebGPU the bench also times steps this way (bench/harness/webgpu_calls.ts).
   */
  record?(): tf.Tensor;
}

/** Work timed in paired rounds: ours, built here, against the reference worker's builder of the same name. */
export interface PairedWork {
  name: string;
  build(rng: Rng): WorkloadState | Promise<WorkloadState>;
  /** Paired with the reference worker as well when its state has a `baselineStep` (otherwise the baseline only). */
  alsoReference?: boolean;
  /** Timed alone: no reference worker (nothing there does the same work) and no baseline. */
  oursOnly?: boolean;
  /** Paired also with the reference worker on more threads (`timeModel`'s `threaded`), when one runs. */
  alsoThreadedReference?: boolean;
  /**
   * Floors on the warm-up and timed steps per side per round for short steps: a step of a few milliseconds runs
   * tens of times slower until V8 has compiled its path, and 3 steps of it make a round too short to outlast the
   * other processes' scheduling on a shared machine.
   */
  minimum?: { warmup: number; steps: number };
}

/** One timed workload: builds its state once, then runs a step that resolves when the result is read. */
export interface Workload extends PairedWork {
  name: ModelName;
  batch: number;
  /** Data-path entries: plain JS (against NumPy unless `oursOnly`), timed once rather than per backend. */
  plain?: { goalMs?: number };
  /**
   * A model entry's goal: ≤ `ms` per step, a median paired ratio ≤ `ratio`, ≥ `imagesPerS` images (the batch) per
   * second of the median step (each if given), and its source.
   */
  goal?: { ms?: number; ratio?: number; imagesPerS?: number; source: string };
  /**
   * Paired with `baselineStep` of its state (and with the reference worker too under `alsoReference`): the
   * ceiling `ratio` on entry ms / baseline ms, or `throughputFloor` on baseline ms / entry ms, judged on the ratio
   * of medians, or on the median paired ratio under `paired`.
   */
  baseline?: {
    model: ModelName | BaselineStepName;
    ratio?: number;
    throughputFloor?: number;
    paired?: boolean;
    source: string;
  };
  /**
   * Timed on WebGPU as well when the run's backends lack it (`firevnet-conv-32`, whose goal names wasm and
   * webgpu): on a GPU adapter; with a software one, or none, the report says why it was not.
   */
  alsoWebgpu?: boolean;
}

async function timeOurs(step: () => Promise<void>, steps: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < steps; i++) {
    const start = performance.now();
    await step();
    times.push(performance.now() - start);
  }
  return times;
}

async function timeReference(worker: TorchWorker, model: string, steps: number) {
  const reply = await worker.request({ op: "time", model, steps });
  return { times: reply.times_ms as number[], faults: reply.minor_faults as number };
}

/** What {@linkcode timeRounds} measured. */
interface PairedTiming {
  state: WorkloadState;
  /** Calls and time per unread step on WebGPU (null on other backends and for workloads without `record`). */
  webgpuCalls: WebgpuCalls | null;
  referenceParameters: number | null;
  check: { ok: boolean; detail: string } | undefined;
  /**
   * Every timed step of ours, of the reference, of the baseline step and of the reference on N threads (empty where
   * that side is absent).
   */
  ours: number[];
  theirs: number[];
  baseline: number[];
  threaded: number[];
  rounds: Round[];
  /** The reference's minor page faults over its timed steps, and the N-thread reference's over its. */
  faults: number;
  threadedFaults: number;
  loadBefore: number;
  loadAfter: number;
  peakRss: number;
}

/** One side of a round: times `steps` steps. */
type Side = {
  kind: "ours" | "reference" | "baseline" | "reference_threads";
  time(steps: number): Promise<{ times: number[]; faults: number }>;
};

/**
 * Rounds of one piece of work: ours and the other sides take turns, each timing `steps` steps per round, the
 * order reversed every other round (ABBA with one other side, ABC CBA with two, ABCD DCBA with three), which
 * cancels a linear drift in machine load from every ratio. The other sides: the state's `baselineStep` when it has
 * one, the reference worker's builder of the same name when there is no baseline step or `work.alsoReference`
 * (none without a worker), and under `work.alsoThreadedReference` the same builder in `threaded`, the reference
 * worker on more threads (none without it). The state is disposed before returning.
 */
export async function timeRounds(
  work: PairedWork,
  worker: TorchWorker | null,
  cfg: { rounds: number; steps: number; warmup: number },
  threaded: TorchWorker | null = null,
  webgpu: { steps: number } | null = null,
): Promise<PairedTiming> {
  const state = await work.build(new Rng(0));
  const remote = work.oursOnly || (state.baselineStep && !work.alsoReference) ? null : worker;
  const remoteThreaded = work.oursOnly || !work.alsoThreadedReference ? null : threaded;
  // Both workers build from the same request, so they run the same weights and arguments.
  const buildRequest = {
    op: "build",
    model: work.name,
    ...(state.referenceArgs ? { args: state.referenceArgs } : {}),
  };
  const built = remote ? await remote.request(buildRequest) : null;
  const builtThreaded = remoteThreaded ? await remoteThreaded.request(buildRequest) : null;
  const referenceParameters = built ? built.parameters as number : null;
  const check = state.check?.(built?.check ?? null);
  if (check && !check.ok) console.error(`${work.name}: FAILED: ${check.detail}`);
  for (const parameters of [referenceParameters, builtThreaded ? builtThreaded.parameters as number : null]) {
    if (parameters !== null && parameters !== state.parameters) {
      console.error(
        `${work.name}: ${state.parameters} parameters here, ${parameters} in PyTorch: not the same network`,
      );
    }
  }
  const local = (kind: Side["kind"], step: () => Promise<void>): Side => ({
    kind,
    time: async (steps) => ({ times: await timeOurs(step, steps), faults: 0 }),
  });
  const sides: Side[] = [local("ours", state.step)];
  if (state.baselineStep) sides.push(local("baseline", state.baselineStep));
  if (remote) sides.push({ kind: "reference", time: (steps) => timeReference(remote, work.name, steps) });
  if (remoteThreaded) {
    sides.push({ kind: "reference_threads", time: (steps) => timeReference(remoteThreaded, work.name, steps) });
  }
  const loadBefore = loadavg()[0];
  for (const side of cfg.warmup ? sides : []) await side.time(cfg.warmup);
  // The warm-up's share is not the rounds'.
  state.takeCommunicationShare?.();
  const ours: number[] = [], theirs: number[] = [], baseline: number[] = [], threadedTimes: number[] = [];
  const rounds: Round[] = [];
  let peakRss = Deno.memoryUsage().rss, faults = 0, threadedFaults = 0;
  for (let r = 0; r < cfg.rounds; r++) {
    const measured = new Map<Side["kind"], number[]>();
    for (const side of r % 2 === 1 ? [...sides].reverse() : sides) {
      const { times, faults: sideFaults } = await side.time(cfg.steps);
      measured.set(side.kind, times);
      if (side.kind === "reference_threads") threadedFaults += sideFaults;
      else faults += sideFaults;
    }
    peakRss = Math.max(peakRss, Deno.memoryUsage().rss);
    const a = measured.get("ours")!, reference = measured.get("reference"), base = measured.get("baseline");
    const threads = measured.get("reference_threads");
    ours.push(...a);
    if (reference) theirs.push(...reference);
    if (base) baseline.push(...base);
    if (threads) threadedTimes.push(...threads);
    const oursMs = spread(a).median;
    const referenceMs = reference ? spread(reference).median : null;
    const baselineMs = base ? spread(base).median : null;
    const threadsMs = threads ? spread(threads).median : null;
    const share = state.takeCommunicationShare?.();
    rounds.push({
      ours_ms: oursMs,
      reference_ms: referenceMs,
      ratio: referenceMs ? oursMs / referenceMs : null,
      ...(baselineMs ? { baseline_ms: baselineMs, baseline_ratio: oursMs / baselineMs } : {}),
      ...(threadsMs
        ? {
          reference_threads_ms: threadsMs,
          reference_threads_ratio: oursMs / threadsMs,
          ...(baselineMs ? { baseline_reference_threads_ratio: baselineMs / threadsMs } : {}),
        }
        : {}),
      ...(share === undefined ? {} : { communication_share: share }),
    });
  }
  const webgpuCalls = webgpu ? await measureWebgpuCalls(state, webgpu.steps) : null;
  state.dispose();
  if (remote) await remote.request({ op: "dispose", model: work.name });
  if (remoteThreaded) await remoteThreaded.request({ op: "dispose", model: work.name });
  return {
    state,
    webgpuCalls,
    referenceParameters,
    check,
    ours,
    theirs,
    baseline,
    threaded: threadedTimes,
    rounds,
    faults,
    threadedFaults,
    loadBefore,
    loadAfter: loadavg()[0],
    peakRss,
  };
}

/** The baseline comparison of an entry that has one, with its goal's verdict. */
function baselineComparison(spec: NonNullable<Workload["baseline"]>, t: PairedTiming): BaselineComparison {
  const paired = spread(t.rounds.map((r) => r.baseline_ratio!));
  const ratioOfMedians = spread(t.ours).median / spread(t.baseline).median;
  const judged = spec.paired ? paired.median : ratioOfMedians;
  const common = {
    model: spec.model,
    ms_per_step: spread(t.baseline),
    paired_ratio: paired,
    ratio_of_medians: ratioOfMedians,
    source: spec.source,
    judged_on: spec.paired ? "paired_ratio" as const : "ratio_of_medians" as const,
  };
  const floor = spec.throughputFloor;
  if (floor === undefined) return { ...common, ceiling: spec.ratio!, met: judged <= spec.ratio! };
  const throughput = spread(t.rounds.map((r) => r.baseline_ms! / r.ours_ms));
  const judgedThroughput = spec.paired ? throughput.median : 1 / ratioOfMedians;
  return {
    ...common,
    ceiling: 1 / floor,
    met: judgedThroughput >= floor,
    throughput_ratio: throughput,
    throughput_floor: floor,
  };
}

/** Rounds of one model on one backend (see {@linkcode timeRounds}), summarised with its goal and check. */
export async function timeModel(
  workload: Workload,
  backend: string,
  worker: TorchWorker | null,
  cfg: { rounds: number; steps: number; warmup: number; webgpu_steps?: number },
  threaded: { worker: TorchWorker; info: ReferenceInfo } | null = null,
): Promise<ModelResult> {
  const raised = workload.minimum &&
    (workload.minimum.warmup > cfg.warmup || workload.minimum.steps > cfg.steps);
  const counts = raised
    ? {
      rounds: cfg.rounds,
      warmup: Math.max(cfg.warmup, workload.minimum!.warmup),
      steps: Math.max(cfg.steps, workload.minimum!.steps),
    }
    : cfg;
  const webgpu = backend === "webgpu" ? { steps: cfg.webgpu_steps ?? 5 } : null;
  const t = await timeRounds(workload, worker, counts, threaded?.worker ?? null, webgpu);
  const withReference = t.theirs.length > 0;
  // A floor on images/s is a ceiling on the step: batch / floor.
  const floor = workload.goal?.imagesPerS;
  const goalMs = workload.plain?.goalMs ?? workload.goal?.ms ??
    (floor === undefined ? undefined : workload.batch * 1000 / floor);
  const ratio = withReference ? spread(t.rounds.map((r) => r.ratio!)) : null;
  const goal = goalMs === undefined && !workload.goal ? undefined : {
    ...(goalMs === undefined ? {} : { ms: goalMs, met: spread(t.ours).median <= goalMs }),
    ...(floor === undefined
      ? {}
      : { images_per_s: floor, measured_images_per_s: workload.batch * 1000 / spread(t.ours).median }),
    ...(workload.goal?.ratio !== undefined
      ? { ratio: workload.goal.ratio, ratio_met: ratio ? ratio.median <= workload.goal.ratio : null }
      : {}),
    ...(workload.goal ? { source: workload.goal.source } : {}),
  };
  const baseline = workload.baseline && t.baseline.length ? baselineComparison(workload.baseline, t) : null;
  const shares = t.rounds.flatMap((r) => r.communication_share === undefined ? [] : [r.communication_share]);
  return {
    model: workload.name,
    backend,
    batch: workload.batch,
    parameters: t.state.parameters,
    reference_parameters: t.referenceParameters,
    ms_per_step: spread(t.ours),
    reference_ms_per_step: withReference ? spread(t.theirs) : null,
    reference_page_faults_per_step: withReference ? Math.round(t.faults / t.theirs.length) : null,
    ratio,
    rounds: t.rounds,
    load_before: t.loadBefore,
    load_after: t.loadAfter,
    peak_rss_mb: Math.round(t.peakRss / 2 ** 20),
    ...(raised ? { warmup_steps: counts.warmup, steps_per_round: counts.steps } : {}),
    reference_library: workload.oursOnly || (workload.baseline && !workload.alsoReference)
      ? "none"
      : workload.plain
      ? "numpy"
      : "torch",
    ...(goal ? { goal } : {}),
    ...(t.check ? { check: t.check } : {}),
    ...(baseline ? { baseline } : {}),
    reference_threads: threaded && t.threaded.length ? threadsComparison(t, threaded.info.threads) : null,
    communication_share: shares.length ? spread(shares) : null,
    ...(t.webgpuCalls ? { webgpu_calls: t.webgpuCalls } : {}),
  };
}

/** The times of an entry against PyTorch on `threads` threads, paired round by round (no goal). */
function threadsComparison(t: PairedTiming, threads: number): ThreadsComparison {
  const baselineRatios = t.rounds.flatMap((r) =>
    r.baseline_reference_threads_ratio === undefined ? [] : [r.baseline_reference_threads_ratio]
  );
  return {
    threads,
    ms_per_step: spread(t.threaded),
    page_faults_per_step: Math.round(t.threadedFaults / t.threaded.length),
    ratio: spread(t.rounds.map((r) => r.reference_threads_ratio!)),
    baseline_ratio: baselineRatios.length ? spread(baselineRatios) : null,
  };
}
