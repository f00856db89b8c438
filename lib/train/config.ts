/**
 * The config keys every training run shares, declared once: how often it
 * logs, evaluates and checkpoints. An experiment spreads them into its
 * config with its own default (`...logEveryConfig(50)`); the phase workers'
 * and data-parallel `workers` keys live beside their runners
 * (parallel_phases.ts, data_parallel.ts).
 *
 * @module
 */
import { integer, type NumberParam } from "../core/config.ts";

/** The most steps between two logs or checkpoints a config accepts. */
const MAX_EVERY = 100_000_000;

/** The `log_every` key: steps (or batches, as `doc` says) between logged values, `steps` by default. */
export function logEveryConfig(steps: number, doc = "steps between logged losses"): { log_every: NumberParam } {
  return { log_every: integer(steps, doc, { min: 1, max: MAX_EVERY }) };
}

/** The `eval_every` key: steps between evaluations of `what` (the doc says it), 0 for the end only. */
export function evalEveryConfig(steps: number, what: string): { eval_every: NumberParam } {
  return { eval_every: integer(steps, `${what} (0: end only)`, { min: 0, max: MAX_EVERY }) };
}

/** The `checkpoint_every` key: steps between checkpoints, 0 for none; `steps` by default. */
export function checkpointEveryConfig(
  steps: number,
  doc = "steps between checkpoints (0: none)",
): { checkpoint_every: NumberParam } {
  return { checkpoint_every: integer(steps, doc, { min: 0, max: MAX_EVERY }) };
}
