/**
 * The reference worker: one persistent python process (bench/torch_reference.py, or
 * bench/corruptions_reference.py, which serves everything it does and the corruptions) answering JSON requests line
 * by line, so its start-up is never timed. Its environment drops the OpenBLAS overrides of ours
 * (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE), which pin a core type and cache size that need not fit this CPU (3–4×
 * slower sgemm here), and tells glibc to keep freed memory: by default glibc returns each step's large tensors to
 * the OS and page-faults them back in on the next step, which costs PyTorch up to 10× on the 64×64 models, while the
 * wasm heap is kept for the process's life. The worker reports the BLAS it loaded and its page faults.
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import type { NumpyInfo, ReferenceInfo } from "./report.ts";

/** OpenBLAS overrides removed from the reference's environment under `--torch_env clean`. */
export const BLAS_OVERRIDES = ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"] as const;

/** glibc settings of the reference under `--torch_malloc keep`: no mmap per large tensor, no trimming of the heap. */
export const MALLOC_KEEP = { MALLOC_MMAP_THRESHOLD_: String(2 ** 32), MALLOC_TRIM_THRESHOLD_: String(2 ** 32) };

/**
 * The PyTorch worker: one python process answering JSON requests line by
 * line (protocol in bench/torch_reference.py).
 */
export class TorchWorker {
  #process: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #lines: AsyncIterator<string>;
  #stderr: Promise<string>;

  private constructor(process: Deno.ChildProcess) {
    this.#process = process;
    this.#writer = process.stdin.getWriter();
    this.#lines = readLines(process.stdout)[Symbol.asyncIterator]();
    this.#stderr = new Response(process.stderr).text();
  }

  /**
   * Starts the worker with the first interpreter that imports torch, or
   * returns null. Under `clean` its environment lacks {@linkcode BLAS_OVERRIDES},
   * under `keep` it has {@linkcode MALLOC_KEEP}; BLAS and OpenMP threads are
   * pinned to `threads` always. `corruptions`: start bench/corruptions_reference.py, which serves the
   * corruption entries besides everything bench/torch_reference.py does, with the same loop.
   */
  static async start(
    threads: number,
    env: "clean" | "inherit",
    malloc: "keep" | "default",
    corruptions = false,
  ): Promise<{ worker: TorchWorker; info: ReferenceInfo } | null> {
    const entry = corruptions ? "../corruptions_reference.py" : "../torch_reference.py";
    const script = fileURLToPath(new URL(entry, import.meta.url));
    const childEnv = Deno.env.toObject();
    const removed: Record<string, string> = {};
    if (env === "clean") {
      for (const key of BLAS_OVERRIDES) {
        if (key in childEnv) removed[key] = childEnv[key];
        delete childEnv[key];
      }
    }
    const set: Record<string, string> = {};
    for (const key of ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"]) set[key] = String(threads);
    if (malloc === "keep") Object.assign(set, MALLOC_KEEP);
    Object.assign(childEnv, set);
    // Debian's python3-torch installs under /usr/bin/python3, which a pyenv python3 on PATH may shadow.
    for (const python of ["/usr/bin/python3", "python3"]) {
      let process: Deno.ChildProcess;
      try {
        process = new Deno.Command(python, {
          args: [script, "--threads", String(threads)],
          env: childEnv,
          clearEnv: true,
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
      } catch {
        continue;
      }
      const worker = new TorchWorker(process);
      const ready = await worker.#next();
      if (ready?.ready) {
        const info: ReferenceInfo = {
          python,
          torch: ready.torch as string,
          threads: ready.threads as number,
          env,
          malloc,
          removed_env: removed,
          set_env: set,
          blas: ready.blas as Record<string, unknown>,
          numpy: (ready.numpy as NumpyInfo | undefined) ?? null,
        };
        return { worker, info };
      }
      await worker.close();
      console.error(`${python}: ${(await worker.#stderr).trim().split("\n").at(-1) ?? "no reply"}`);
    }
    return null;
  }

  async #next(): Promise<Record<string, unknown> | null> {
    const { value, done } = await this.#lines.next();
    return done ? null : JSON.parse(value);
  }

  /** Sends one request and returns the reply; throws with the worker's stderr when it died or failed. */
  async request(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    await this.#writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
    const reply = await this.#next();
    if (!reply) throw new Error(`PyTorch worker exited: ${(await this.#stderr).trim().split("\n").at(-1)}`);
    if (reply.error) throw new Error(`PyTorch worker: ${reply.error}`);
    return reply;
  }

  /** Ends its input and waits for it to exit. */
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    await this.#process.status;
    await this.#stderr;
  }
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const bytes of stream) {
    buffered += decoder.decode(bytes, { stream: true });
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      yield buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
    }
  }
  if (buffered) yield buffered;
}

/** What was unset and set in the worker's environment, in words. */
function environmentWords(info: ReferenceInfo): string {
  const removed = Object.keys(info.removed_env);
  return (info.env === "clean"
    ? removed.length ? `${removed.join(" and ")} unset in its process` : `no ${BLAS_OVERRIDES.join(" or ")} to unset`
    : "inheriting the bench's OPENBLAS_* settings") +
    `; set there: ${Object.entries(info.set_env).map(([k, v]) => `${k}=${v}`).join(" ")}`;
}

/** The PyTorch worker in words: versions, threads, the BLAS it loaded and the environment it got. */
export function torchProcessLine(info: ReferenceInfo): string {
  const openblas = info.blas.openblas as { config: string; core: string; threads: number } | null;
  const blas = openblas
    ? `${openblas.config} (core ${openblas.core}, ${openblas.threads} thread(s))`
    : `${info.blas.blas_info ?? "unknown"} (torch build setting)`;
  return `PyTorch ${info.torch} in ${info.python} on ${info.threads} thread(s), BLAS ${blas}; ` +
    environmentWords(info);
}

/** The reference process in words: NumPy's version and BLAS, and the environment it got. */
export function referenceProcessLine(info: ReferenceInfo): string {
  const numpy = info.numpy;
  const blas = numpy?.openblas
    ? `${numpy.openblas.config} (core ${numpy.openblas.core}, ${numpy.openblas.threads} thread(s))`
    : numpy?.library ?? "none found";
  return `NumPy ${numpy?.version ?? "?"} in ${info.python}, BLAS ${blas}; ` + environmentWords(info);
}
