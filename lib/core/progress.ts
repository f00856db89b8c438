/**
 * Progress reporting on stderr: a redrawn bar (steps, rate, ETA, latest loss)
 * on a terminal, one plain line every `every` steps otherwise (CI logs, files).
 *
 * @module
 */

const encoder = new TextEncoder();

/** Options of a {@linkcode Progress}. */
export interface ProgressOptions {
  /** Plain-line interval when stderr is not a terminal. */
  every?: number;
  /** Overrides terminal detection (tests). */
  tty?: boolean;
  /** Where lines go; defaults to stderr. */
  write?: (text: string) => void;
}

/** Formats seconds as `1h02m`, `3m05s` or `12s`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.round(seconds);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${s}s`;
}

/** Step progress of one phase of work. */
export class Progress {
  /** The phase's name, printed before the count. */
  readonly label: string;
  /** Steps in the phase. */
  readonly total: number;
  #start = performance.now();
  #lastDraw = 0;
  #lastPrinted = 0;
  #every: number;
  #tty: boolean;
  #write: (text: string) => void;

  /** A progress line for `total` steps of the phase `label`. */
  constructor(label: string, total: number, options: ProgressOptions = {}) {
    this.label = label;
    this.total = total;
    this.#every = options.every ?? Math.max(1, Math.round(total / 10));
    this.#tty = options.tty ?? Deno.stderr.isTerminal();
    this.#write = options.write ?? ((text) => Deno.stderr.writeSync(encoder.encode(text)));
  }

  /** The status text after `done` steps with the latest `loss`. */
  line(done: number, loss?: number): string {
    const elapsed = (performance.now() - this.#start) / 1000;
    const rate = done / Math.max(elapsed, 1e-9);
    const eta = (this.total - done) / rate;
    const lossText = loss === undefined ? "" : ` loss ${loss.toPrecision(4)}`;
    return `${this.label} ${done}/${this.total} ${rate.toFixed(1)} steps/s ETA ${formatDuration(eta)}${lossText}`;
  }

  /** Reports that `done` steps are finished. */
  update(done: number, loss?: number): void {
    if (this.#tty) {
      const now = performance.now();
      if (now - this.#lastDraw < 100 && done < this.total) return;
      this.#lastDraw = now;
      const width = 24;
      const filled = Math.round((done / this.total) * width);
      const bar = "█".repeat(filled) + "░".repeat(width - filled);
      this.#write(`\r\x1b[2K${bar} ${this.line(done, loss)}`);
      if (done >= this.total) this.#write("\n");
    } else if (done - this.#lastPrinted >= this.#every || done === this.total) {
      this.#lastPrinted = done;
      this.#write(this.line(done, loss) + "\n");
    }
  }
}
