/**
 * A small Chrome DevTools Protocol client (browser tests, benches, README screenshots): starts Debian's
 * headless Chromium on a fresh profile and drives one page over WebSocket.
 *
 * @module
 */
import { join } from "node:path";

/** Path of a Chromium binary, or null when none is installed. */
export function findChromium(): string | null {
  for (const path of ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      continue;
    }
  }
  return null;
}

/** A headless browser with one page under remote control. */
export class Browser {
  #process: Deno.ChildProcess;
  #socket: WebSocket;
  #nextId = 1;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #profile: string;
  #stderrDrained: Promise<void>;

  private constructor(process: Deno.ChildProcess, socket: WebSocket, profile: string, stderrDrained: Promise<void>) {
    this.#process = process;
    this.#stderrDrained = stderrDrained;
    this.#socket = socket;
    this.#profile = profile;
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      const waiter = message.id ? this.#pending.get(message.id) : undefined;
      if (!waiter) return;
      this.#pending.delete(message.id);
      if (message.error) waiter.reject(new Error(JSON.stringify(message.error)));
      else waiter.resolve(message.result);
    };
  }

  /**
   * Starts Chromium, connects to its page and opens `url` there; `initScript`
   * runs in every document the page loads, before the document's own scripts.
   */
  static async launch(binary: string, url: string, options: { initScript?: string } = {}): Promise<Browser> {
    let started = await startChromium(binary);
    // A Chromium that dies before it listens (seen once under heavy load) is started once more.
    if ("failure" in started) started = await startChromium(binary);
    if ("failure" in started) throw new Error(`Chromium did not open its DevTools port: ${started.failure}`);
    const { process, profile, port, stderrDrained } = started;
    let target: { type: string; webSocketDebuggerUrl: string } | undefined;
    for (let i = 0; i < 100 && !target; i++) {
      const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
      target = targets.find((t: { type: string }) => t.type === "page");
      if (!target) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!target) throw new Error("Chromium opened no page");
    const socket = new WebSocket(target.webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = reject;
    });
    const browser = new Browser(process, socket, profile, stderrDrained);
    if (options.initScript) {
      await browser.send("Page.enable");
      await browser.send("Page.addScriptToEvaluateOnNewDocument", { source: options.initScript });
    }
    await browser.goto(url);
    return browser;
  }

  /** Opens `url` in the page and waits until its document has been parsed. */
  async goto(url: string, timeoutMs = 120_000): Promise<void> {
    await this.send("Page.navigate", { url });
    const start = Date.now();
    while (Date.now() - start < timeoutMs) {
      try {
        if (await this.evaluate(`location.href === ${JSON.stringify(url)} && document.readyState !== "loading"`)) {
          return;
        }
      } catch {
        // the document before went away during the evaluation
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${url} did not load`);
  }

  /** Sends a CDP command and waits for its result. */
  send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.#nextId++;
    this.#socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
  }

  /** Evaluates a JS expression in the page and returns its value. */
  async evaluate<T>(expression: string): Promise<T> {
    const result = await this.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true }) as {
      result: { value: T };
      exceptionDetails?: unknown;
    };
    if (result.exceptionDetails) throw new Error(`page error: ${JSON.stringify(result.exceptionDetails)}`);
    return result.result.value;
  }

  /**
   * Waits until `expression` is truthy and returns its value. The page checks it again on every change of its
   * document and on every `latentlab:drawn` event (a chart drawn or updated), so a busy machine delays the
   * answer but never turns it into a miss; `timeoutMs` only bounds a wait for something that never comes.
   */
  async waitFor<T>(expression: string, what: string, timeoutMs = 120_000): Promise<T> {
    const start = Date.now();
    while (Date.now() - start < timeoutMs) {
      const left = timeoutMs - (Date.now() - start);
      try {
        const { done, value } = await this.evaluate<{ done: boolean; value: T }>(untilTruthy(expression, left));
        if (done) return value;
      } catch (error) {
        // A navigation replaced the document during the wait: look again in the new one.
        if (!/Execution context was destroyed|Cannot find context/.test(String(error))) throw error;
      }
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  /** A PNG screenshot of the page. */
  async screenshot(): Promise<Uint8Array> {
    const { data } = await this.send("Page.captureScreenshot", { format: "png" }) as { data: string };
    return Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  }

  /** Closes the page and the browser, and removes the profile. */
  async close(): Promise<void> {
    this.#socket.close();
    try {
      this.#process.kill("SIGKILL");
    } catch {
      // already gone
    }
    await this.#process.status;
    await this.#stderrDrained;
    await Deno.remove(this.#profile, { recursive: true }).catch(() => {});
  }
}

/**
 * A page expression resolving to `{done, value}`: done once `expression` is truthy, checked now, on every DOM
 * mutation, every `latentlab:drawn` event and every 250 ms; not done after `timeoutMs`.
 */
function untilTruthy(expression: string, timeoutMs: number): string {
  return `new Promise((resolve) => {
  const check = () => {
    let value;
    try { value = (${expression}); } catch { value = undefined; }
    if (value) finish(true, value);
  };
  const observer = new MutationObserver(check);
  const finish = (done, value) => {
    observer.disconnect();
    document.removeEventListener("latentlab:drawn", check);
    clearTimeout(timer);
    clearInterval(fallback);
    resolve({ done, value });
  };
  const timer = setTimeout(() => finish(false, null), ${Math.max(0, Math.round(timeoutMs))});
  // State outside the document (a variable of the page) has no event: look at it now and then as well.
  const fallback = setInterval(check, 250);
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  document.addEventListener("latentlab:drawn", check);
  check();
})`;
}

/** Chromium's DevTools port is waited for this long at most; a loaded machine starts it slowly. */
const DEVTOOLS_PORT_WAIT_MS = 120_000;

/** Starts headless Chromium on a fresh profile: its process, profile and DevTools port, or why it failed. */
async function startChromium(
  binary: string,
): Promise<
  { process: Deno.ChildProcess; profile: string; port: string; stderrDrained: Promise<void> } | { failure: string }
> {
  const profile = await Deno.makeTempDir();
  const process = new Deno.Command(binary, {
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile}`,
      "--remote-debugging-port=0",
      "--window-size=1400,1000",
      "about:blank",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  // Drained as it comes so that Chromium never blocks on a full pipe; the tail explains a failed start.
  let stderrTail = "";
  const drained = process.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (stderrTail = (stderrTail + chunk).slice(-2000)) }),
  ).catch(() => {});
  let exited: Deno.CommandStatus | null = null;
  process.status.then((status) => exited = status);
  const portFile = join(profile, "DevToolsActivePort");
  const end = Date.now() + DEVTOOLS_PORT_WAIT_MS;
  while (exited === null && Date.now() < end) {
    try {
      const port = Deno.readTextFileSync(portFile).split("\n")[0];
      if (port) return { process, profile, port, stderrDrained: drained };
    } catch {
      // not written yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (exited === null) process.kill("SIGKILL");
  await process.status;
  await drained;
  await Deno.remove(profile, { recursive: true }).catch(() => {});
  const how = exited === null
    ? `no port after ${DEVTOOLS_PORT_WAIT_MS / 1000} s`
    : `it exited with code ${(exited as Deno.CommandStatus).code}`;
  return { failure: `${how}; its stderr ends: ${stderrTail.trim().slice(-600) || "(empty)"}` };
}
