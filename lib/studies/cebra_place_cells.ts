/**
 * The study behind the cebra-place-cells experiment (Schneider2023 Ch. 7, App. F): the simulated rats
 * split by runs, the plan of CEBRA models (behaviour, time, the hypothesis tests, multi-session), the training and
 * scoring of one model in this process or a worker, and the run's aggregates: decoding, goodness of fit and
 * cross-rat consistency.
 *
 * @module
 */
import { UsageError } from "../core/errors.ts";
import type { RunContext, RunResult } from "../core/experiment.ts";
import { gatherRows, type Matrix } from "../core/matrix.ts";
import { Rng } from "../core/rng.ts";
import type { CebraLabels, CebraOptions } from "../contrastive/cebra.ts";
import { fitWithSnapshots, type SnapshotView } from "../contrastive/cebra_snapshots.ts";
import {
  decodePositionDirection,
  type PositionDirection,
  type PositionDirectionDecoding,
} from "../contrastive/decoding.ts";
import {
  PAUSE_SECONDS,
  PEAK_SPEED,
  type PlaceCellRat,
  placeCellRats,
  splitByRuns,
  TRACK_LENGTH,
} from "../data/place_cells.ts";
import type { CebraArchitecture } from "../models/cebra_models.ts";
import { consistencyDatasets, consistencyRuns, goodnessOfFit } from "../metrics/cebra_metrics.ts";
import type { PhaseArrays, PhaseOutcome } from "../train/phases.ts";
import { runPhasesOn, type WorkerPhase, workerPhaseOptions } from "../train/parallel_phases.ts";

/** The models of a run: label sets of single-session fits, and the joint fit. */
export const MODELS = ["behavior", "time", "shuffled", "position", "direction", "multi"] as const;
/** One of {@linkcode MODELS}. */
export type Model = typeof MODELS[number];

/** The experiment's config as the study reads it (each key is documented where the experiment declares it). */
export type PlaceCellsConfig =
  & {
    rats: number[];
    models: Model[];
    model: CebraArchitecture;
    neighbors: number[];
    consistency_label: "position_direction" | "position";
  }
  & Record<
    | "bins"
    | "behavior_seeds"
    | "steps"
    | "multi_steps"
    | "hidden"
    | "output_dimension"
    | "time_offsets"
    | "temperature"
    | "time_temperature"
    | "batch"
    | "lr"
    | "consistency_bins"
    | "gof_window"
    | "eval_every"
    | "log_every"
    | "workers",
    number
  >;
type Cfg = PlaceCellsConfig;

/** Smallest rows a split may have: the receptive field of offset10 and room for the largest k. */
const MIN_SPLIT_ROWS = 10;

/** Whether the run trains `model`. */
export const uses = (cfg: Pick<Cfg, "models">, model: Model): boolean => cfg.models.includes(model);

/**
 * Median |error| (cm) of a decoder that always says the track's centre (= the mean position, by symmetry), in
 * closed form for lib/data/place_cells.ts: at time fraction s of a run the rat is at L(s − sin 2πs / 2π), at
 * L·g(u) from the centre with g(u) = u + sin(2πu)/2π and u = |s − ½| uniform on [0, ½]; it pauses at the ends
 * (L/2 away). Runs take E[T] = 2L·E[1/v] of each E[T] + E[pause], so the median solves runShare · 2u = ½.
 * 77.4 cm for the 1.6 m track (measured on the quick preset's rats: 76.6–78.1 cm).
 */
export function centreMedianErrorCm(): number {
  const [v0, v1] = PEAK_SPEED, [p0, p1] = PAUSE_SECONDS;
  const run = (2 * TRACK_LENGTH * Math.log(v1 / v0)) / (v1 - v0);
  const u = 0.25 / (run / (run + (p0 + p1) / 2));
  return 100 * TRACK_LENGTH * (u + Math.sin(2 * Math.PI * u) / (2 * Math.PI));
}

type Part = "train" | "valid" | "test";
const PARTS: readonly Part[] = ["train", "valid", "test"];

/** One rat's rows of a split part: spikes, labels [position, right, left] and the decoding labels. */
interface RatPart {
  x: Matrix;
  labels: Matrix;
  decoding: PositionDirection;
}
type RatData = Record<Part, RatPart>;

let dataCache: { key: string; rats: RatData[] } | null = null;

/** Rows `rows` of a matrix, in order. */
function gather(m: Matrix, rows: ArrayLike<number>): Matrix {
  return { data: gatherRows(m.data, m.cols, rows), rows: rows.length, cols: m.cols };
}

function ratParts(rat: PlaceCellRat, index: number, bins: number): RatData {
  const split = splitByRuns(rat.runs);
  const out = {} as RatData;
  for (const part of PARTS) {
    const rows = split[part];
    if (rows.length < MIN_SPLIT_ROWS) {
      throw new UsageError(
        `rat ${index}: the ${part} split has ${rows.length} bins (< ${MIN_SPLIT_ROWS}); raise bins (now ${bins})`,
      );
    }
    const labels = gather(rat.labels, rows);
    out[part] = {
      x: gather(rat.spikes, rows),
      labels,
      decoding: {
        position: Float64Array.from({ length: rows.length }, (_, i) => labels.data[3 * i]),
        direction: Int32Array.from({ length: rows.length }, (_, i) => labels.data[3 * i + 1]),
      },
    };
  }
  return out;
}

/** The simulated rats of a seed, split by runs (once per process). */
function ratsOf(seed: number, cfg: Cfg): RatData[] {
  const key = JSON.stringify([seed, cfg.rats, cfg.bins]);
  if (dataCache?.key !== key) {
    const rats = placeCellRats(Rng.derive(seed, "cebra-place-cells/data"), { rats: cfg.rats, bins: cfg.bins });
    dataCache = { key, rats: rats.map((r, i) => ratParts(r, i, cfg.bins)) };
  }
  return dataCache.rats;
}

/** Columns `cols` of a matrix. */
function columns(m: Matrix, cols: number[]): Matrix {
  const data = new Float64Array(m.rows * cols.length);
  for (let r = 0; r < m.rows; r++) cols.forEach((c, j) => data[r * cols.length + j] = m.data[r * m.cols + c]);
  return { data, rows: m.rows, cols: cols.length };
}

/** Rows of a matrix in a seeded random order (the shuffled-label control). */
function shuffledRows(m: Matrix, rng: Rng): Matrix {
  const order = rng.permutation(m.rows);
  return gather(m, order);
}

/** The 1-D label the embeddings are binned on for consistency: position, or a loop over both directions. */
function consistencyLabel(part: RatPart, cfg: Cfg): Float64Array {
  const { position, direction } = part.decoding;
  return Float64Array.from(
    { length: position.length },
    // Running right covers [0, L], running left [L, 2L] backwards: the track as the ring it is (Schneider2023 Ch. 7
    // topology).
    (_, i) => cfg.consistency_label === "position" || direction[i] === 1 ? position[i] : 2 * TRACK_LENGTH - position[i],
  );
}

/** alignEmbeddings' `bins` (edges) for the configured bins per direction. */
function alignmentEdges(cfg: Cfg): number {
  return cfg.consistency_label === "position" ? cfg.consistency_bins : 2 * cfg.consistency_bins;
}

// ---------------------------------------------------------------------------------------------
// One model

/** A phase: one model. `rat` is -1 for the multi-session model; `seed` numbers rat 0's behaviour models. */
interface Unit {
  model: Model;
  rat: number;
  seed: number;
}

const runName = (u: Unit) => u.model === "multi" ? "all" : `rat${u.rat}_seed${u.seed}`;
const embeddingKey = (u: Unit, rat: number) => `emb/${u.model}/rat${rat}_seed${u.seed}`;

/** The run's models in order. */
function planOf(cfg: Cfg): Unit[] {
  const units: Unit[] = [];
  const rats = cfg.rats.map((_, i) => i);
  if (uses(cfg, "behavior")) {
    for (const rat of rats) units.push({ model: "behavior", rat, seed: 0 });
    for (let seed = 1; seed < cfg.behavior_seeds; seed++) units.push({ model: "behavior", rat: 0, seed });
  }
  if (uses(cfg, "time")) { for (const rat of rats) units.push({ model: "time", rat, seed: 0 }); }
  for (const model of ["shuffled", "position", "direction"] as const) {
    if (uses(cfg, model)) units.push({ model, rat: 0, seed: 0 });
  }
  if (uses(cfg, "multi")) units.push({ model: "multi", rat: -1, seed: 0 });
  return units;
}

/** Decoding scores as logged and returned. */
interface Scores {
  median_err_cm: number;
  r2: number;
  position_r2: number;
  direction_accuracy: number;
  k: number;
}

/** What a model's phase gives back: decoding per rat it embeds, and the goodness of fit. */
interface UnitResult {
  decoding: Scores[];
  gof_bits: number;
  final_loss: number;
}

function scoresOf(d: PositionDirectionDecoding): Scores {
  // Positions are in metres.
  return {
    median_err_cm: 100 * d.medianAbsError,
    r2: d.r2,
    position_r2: d.positionR2,
    direction_accuracy: d.directionAccuracy,
    k: d.k,
  };
}

/** Mean goodness of fit (bits) over the last `window` losses. */
function meanGof(losses: readonly number[], batch: number, sessions: number, window: number): number {
  const bits = goodnessOfFit(losses.slice(-window), batch, sessions);
  return bits.reduce((a, b) => a + b, 0) / bits.length;
}

/** The Cebra seed of behaviour seed `seed` (the same for every rat and model type). */
function modelSeed(runSeed: number, seed: number): number {
  return Rng.derive(runSeed, "cebra-place-cells/model", seed).int(2 ** 31);
}

/** Trains one model, logs its curves and returns its scores and training embeddings. */
async function trainUnit(ctx: RunContext, cfg: Cfg, unit: Unit): Promise<{ result: UnitResult; arrays: PhaseArrays }> {
  const data = ratsOf(ctx.seed, cfg);
  const multi = unit.model === "multi";
  const ratIndices = multi ? data.map((_, i) => i) : [unit.rat];
  const steps = multi ? cfg.multi_steps : cfg.steps;
  const sessions = multi ? data.length : 1;
  const options: Omit<CebraOptions, "onStep" | "afterStep" | "lossReadEvery"> = {
    modelArchitecture: cfg.model,
    batchSize: cfg.batch,
    learningRate: cfg.lr,
    outputDimension: cfg.output_dimension,
    numHiddenUnits: cfg.hidden,
    timeOffsets: cfg.time_offsets,
    temperature: unit.model === "time" ? cfg.time_temperature : cfg.temperature,
    maxIterations: steps,
    seed: modelSeed(ctx.seed, unit.seed),
  };
  const train = data[ratIndices[0]].train;
  let x: Matrix | Matrix[] = train.x;
  let labels: CebraLabels;
  switch (unit.model) {
    case "behavior":
      labels = { continuous: train.labels };
      break;
    case "time":
      labels = {};
      break;
    case "shuffled":
      labels = { continuous: shuffledRows(train.labels, Rng.derive(ctx.seed, "cebra-place-cells/shuffle", unit.rat)) };
      break;
    case "position":
      labels = { continuous: columns(train.labels, [0]) };
      break;
    case "direction":
      labels = { continuous: columns(train.labels, [1, 2]) };
      break;
    case "multi":
      x = data.map((r) => r.train.x);
      labels = { continuous: data.map((r) => r.train.labels) };
      break;
  }
  const views: SnapshotView[] = ratIndices.flatMap((rat) =>
    PARTS.map((part) => ({ x: data[rat][part].x, session: multi ? rat : undefined }))
  );
  const prefix = `place/${unit.model}/${runName(unit)}`;
  const progress = ctx.progress(`${unit.model} ${runName(unit)}`, steps);
  const losses: number[] = [];
  let sum = 0, count = 0;
  let decoding: Scores[] = [];
  let trainEmbeddings: Matrix[] = [];
  const { cebra } = await fitWithSnapshots(options, x, labels, {
    every: cfg.eval_every,
    views,
    lossReadEvery: cfg.log_every,
    signal: ctx.stopRequested,
    onStep: (step, loss) => {
      losses.push(loss);
      sum += loss;
      count++;
      if (step % cfg.log_every === 0 || step === steps) {
        ctx.log(step, { [`${prefix}/loss`]: sum / count });
        progress.update(step, sum / count);
        sum = count = 0;
      }
    },
    onSnapshot: ({ step, embeddings }) => {
      const values: Record<string, number> = {
        [`${prefix}/gof_bits`]: meanGof(losses.slice(0, step), cfg.batch, sessions, cfg.gof_window),
      };
      decoding = ratIndices.map((rat, j) => {
        const [tr, va, te] = embeddings.slice(3 * j, 3 * j + 3);
        const d = data[rat];
        return scoresOf(decodePositionDirection(
          { train: tr, valid: va, test: te },
          { train: d.train.decoding, valid: d.valid.decoding, test: d.test.decoding },
          { neighbors: cfg.neighbors, metric: "cosine" },
        ));
      });
      trainEmbeddings = ratIndices.map((_, j) => embeddings[3 * j]);
      decoding.forEach((s, j) => {
        const at = multi ? `place/multi/rat${ratIndices[j]}` : prefix;
        for (const [name, value] of Object.entries(s)) values[`${at}/${name}`] = value;
      });
      if (multi && data.length > 1) {
        values["place/multi/all/consistency"] = meanConsistency(trainEmbeddings, data, cfg);
      }
      ctx.log(step, values);
    },
  });
  const finalLoss = cebra.lossHistory[cebra.lossHistory.length - 1];
  cebra.dispose();
  const arrays: PhaseArrays = {};
  ratIndices.forEach((rat, j) => {
    const e = trainEmbeddings[j];
    arrays[embeddingKey(unit, rat)] = { data: Float32Array.from(e.data), shape: [e.rows, e.cols] };
  });
  return {
    result: { decoding, gof_bits: meanGof(losses, cfg.batch, sessions, cfg.gof_window), final_loss: finalLoss },
    arrays,
  };
}

/** Mean cross-rat consistency of training embeddings `[rats]` (every ordered pair of different rats). */
function meanConsistency(embeddings: Matrix[], data: RatData[], cfg: Cfg): number {
  const { scores } = consistencyDatasets(
    embeddings,
    data.map((d) => consistencyLabel(d.train, cfg)),
    { bins: alignmentEdges(cfg) },
  );
  return scores.reduce((a, b) => a + b, 0) / scores.length;
}

/** A model's phase as a worker runs it (lib/train/parallel_phases.ts). */
export const workerPhase: WorkerPhase<Cfg, Unit, UnitResult> = (ctx, cfg, unit): Promise<PhaseOutcome<UnitResult>> =>
  trainUnit(ctx, cfg, unit);

/** A phase's relative cost (encoder passes), so the costliest start first. */
function unitCost(cfg: Cfg, unit: Unit): number {
  if (unit.model === "multi") return cfg.multi_steps * cfg.rats.length;
  return cfg.steps * (cfg.rats[unit.rat] + 4 * cfg.hidden);
}

// ---------------------------------------------------------------------------------------------

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** Aggregate metrics of the finished models (module notes). */
function summarize(
  plan: readonly Unit[],
  results: readonly UnitResult[],
  arrays: PhaseArrays,
  cfg: Cfg,
  data: RatData[],
): { metrics: Record<string, number>; consistency: Record<string, { pairs: [number, number][]; scores: number[] }> } {
  const metrics: Record<string, number> = {};
  const consistency: Record<string, { pairs: [number, number][]; scores: number[] }> = {};
  plan.forEach((unit, i) => {
    const r = results[i];
    const prefix = `place/${unit.model}/${runName(unit)}`;
    metrics[`${prefix}/gof_bits`] = r.gof_bits;
    metrics[`${prefix}/final_loss`] = r.final_loss;
    r.decoding.forEach((s, j) => {
      const at = unit.model === "multi" ? `place/multi/rat${j}` : prefix;
      for (const [name, value] of Object.entries(s)) metrics[`${at}/${name}`] = value;
    });
  });
  const of = (model: Model, pick: (u: Unit) => boolean) =>
    plan.map((u, i) => [u, results[i]] as const).filter(([u]) => u.model === model && pick(u)).map(([, r]) => r);
  const aggregate = (key: string, rs: readonly UnitResult[]) => {
    if (rs.length === 0) return;
    for (const name of ["median_err_cm", "r2", "position_r2", "direction_accuracy"] as const) {
      metrics[`${key}/${name}`] = mean(rs.flatMap((r) => r.decoding.map((d) => d[name])));
    }
    metrics[`${key}/gof_bits`] = mean(rs.map((r) => r.gof_bits));
  };
  // Headlines: rat 0 (behaviour: the mean over its seeds), as Fig. 7.6d reports one rat.
  for (const model of MODELS) {
    if (model !== "multi") aggregate(`place/${model}`, of(model, (u) => u.rat === 0));
  }
  aggregate("place/behavior/all_rats", of("behavior", (u) => u.seed === 0));
  aggregate("place/time/all_rats", of("time", () => true));
  aggregate("place/multi", of("multi", () => true));

  const embeddingsOf = (model: Model, seed: number) =>
    data.map((_, rat) => {
      const a = arrays[`emb/${model}/rat${rat}_seed${seed}`];
      return a ? { data: a.data, rows: a.shape[0], cols: a.shape[1] } : null;
    });
  if (data.length > 1) {
    for (const model of ["behavior", "time", "multi"] as const) {
      const embeddings = embeddingsOf(model, 0);
      if (embeddings.some((e) => e === null)) continue;
      const c = consistencyDatasets(
        embeddings as Matrix[],
        data.map((d) => consistencyLabel(d.train, cfg)),
        { bins: alignmentEdges(cfg) },
      );
      consistency[model] = c;
      metrics[`place/consistency/${model}`] = mean(c.scores);
    }
  }
  if (metrics["place/consistency/multi"] !== undefined && metrics["place/consistency/behavior"] !== undefined) {
    metrics["place/consistency/multi_minus_single"] = metrics["place/consistency/multi"] -
      metrics["place/consistency/behavior"];
  }
  const seeds = Array.from({ length: cfg.behavior_seeds }, (_, s) => arrays[`emb/behavior/rat0_seed${s}`]);
  if (uses(cfg, "behavior") && seeds.length > 1 && seeds.every(Boolean)) {
    const c = consistencyRuns(seeds.map((a) => ({ data: a.data, rows: a.shape[0], cols: a.shape[1] })));
    consistency.runs_behavior_rat0 = c;
    metrics["place/consistency/runs_behavior_rat0"] = mean(c.scores);
  }
  return { metrics, consistency };
}

function printTable(metrics: Record<string, number>, cfg: Cfg): void {
  const fixed = (v: number | undefined, digits = 3) => v === undefined ? "—" : v.toFixed(digits);
  const lines = [
    "rat 0: kNN decoding on the test runs (median |error| cm, R² of (position, direction)), goodness of fit (bits)",
    `${"model".padEnd(26)} ${"err cm".padStart(7)} ${"R²".padStart(7)} ${"GoF".padStart(7)}`,
  ];
  const rows: [string, string][] = [
    [`behaviour (${cfg.behavior_seeds} seeds)`, "place/behavior"],
    ["time", "place/time"],
    ["shuffled labels", "place/shuffled"],
    ["position only", "place/position"],
    ["direction only", "place/direction"],
    ["multi-session (all rats)", "place/multi"],
    ["behaviour, all rats", "place/behavior/all_rats"],
  ];
  for (const [label, key] of rows) {
    if (metrics[`${key}/median_err_cm`] === undefined) continue;
    lines.push(
      `${label.padEnd(26)} ${fixed(metrics[`${key}/median_err_cm`], 2).padStart(7)} ${
        fixed(metrics[`${key}/r2`]).padStart(7)
      } ${fixed(metrics[`${key}/gof_bits`]).padStart(7)}`,
    );
  }
  const c = (k: string) => fixed(metrics[`place/consistency/${k}`]);
  lines.push(
    `cross-rat consistency (mean R² over ordered pairs): behaviour ${c("behavior")}, time ${c("time")}, ` +
      `multi-session ${c("multi")}; rat 0 behaviour seeds ${c("runs_behavior_rat0")}`,
  );
  console.log(lines.join("\n"));
}

/**
 * The study's run: every model of the plan in this process or `cfg.workers` at a time in workers, then the
 * aggregates, the printed table and the summary's details.
 */
export async function runPlaceCells(ctx: RunContext, cfg: Cfg): Promise<RunResult> {
  const data = ratsOf(ctx.seed, cfg);
  const plan = planOf(cfg);
  const { results, arrays } = await runPhasesOn<Cfg, Unit, UnitResult>(
    ctx,
    plan,
    (unit) => trainUnit(ctx, cfg, unit),
    {
      parallel: workerPhaseOptions(import.meta.url, cfg, (unit: Unit) => unitCost(cfg, unit)),
    },
  );
  const { metrics, consistency } = summarize(plan, results, arrays, cfg, data);
  printTable(metrics, cfg);
  return {
    metrics,
    details: {
      models: plan.map((u, i) => ({ ...u, name: runName(u), ...results[i] })),
      consistency,
      rows: data.map((d) => Object.fromEntries(PARTS.map((p) => [p, d[p].x.rows]))),
      protocol: [
        `data: lib/data/place_cells.ts placeCellRats(rats [${cfg.rats.join(", ")}], bins ${cfg.bins}) from the run ` +
        "seed; splitByRuns 80/10/10 (train/validation/test, whole runs in time order)",
        `CEBRA: ${cfg.model}, ${cfg.hidden} hidden, output ${cfg.output_dimension}, time offset ${cfg.time_offsets}, ` +
        `batch ${cfg.batch}, lr ${cfg.lr}, temperature ${cfg.temperature} (time: ${cfg.time_temperature}), ` +
        `${cfg.steps} steps (multi-session ${cfg.multi_steps}), trained on the training rows; behaviour labels ` +
        "[position, right, left] with time_delta positives; position only [position]; direction only [right, " +
        "left]; shuffled: the training label rows permuted; the same model seed for every rat and label set",
        "embeddings: transform of each part on its own (replicate padding at its ends), as CEBRA's figures",
        `decoding: lib/contrastive/decoding.ts decodePositionDirection, k ∈ {${cfg.neighbors.join(", ")}}, cosine, ` +
        "k by the validation R² of (position, direction); direction = the 'right' label; the test R² is " +
        "r2_score of the stacked (position, direction) prediction (uniform average), error in cm",
        `goodness of fit: goodnessOfFit(loss, batch ${cfg.batch}, sessions) in bits, mean over the last ` +
        `${cfg.gof_window} steps`,
        `consistency: consistencyDatasets of the training embeddings (seed 0) on ${
          cfg.consistency_label === "position"
            ? `the position, ${cfg.consistency_bins} edges`
            : `a loop label (right: position, left: 2L − position), ${cfg.consistency_bins} bins per direction`
        }, mean over the ordered pairs of different rats; runs: consistencyRuns of rat 0's behaviour seeds`,
        "headline metrics: rat 0 (behaviour: mean over its seeds); all_rats: mean over the rats (seed 0)",
      ],
    },
  };
}
