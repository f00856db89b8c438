/**
 * Run-store inputs that more than one test reads, so the CLI reader and the
 * dashboard are checked on the same bytes.
 *
 * @module
 */

/**
 * metrics.jsonl of a run that logged steps 10 and 20, was killed while
 * writing step 30, and was resumed from its checkpoint at step 10, which it
 * logged again (time 4) before this was read.
 */
export const RESUMED_METRICS = [
  '{"step":10,"time":1,"loss":5}',
  '{"step":20,"time":2,"loss":2}',
  '{"step":30,"time":3,"lo',
  '{"step":10,"time":4,"loss":5}',
  "",
].join("\n");

/** The loss of {@linkcode RESUMED_METRICS} per step: the last write for a step wins, other steps stay. */
export const RESUMED_LOSS = { x: [10, 20], t: [4, 2], y: [5, 2] };
