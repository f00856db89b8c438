/**
 * The setup the dashboard's browser tests share: the dashboard served over a
 * fresh run store and headless Chromium pointed at it, with the chart probe
 * installed (see chart_probe.ts).
 *
 * @module
 */
import { assert } from "../assert.ts";
import { bundleUi, createApp } from "../../dashboard/server.ts";
import { Browser, findChromium } from "../../dashboard/cdp.ts";
import { CHART_PROBE } from "./chart_probe.ts";

const chromium = findChromium();
const inCi = Deno.env.get("CI") === "true";
let warned = false;

/** How a {@linkcode browserTest} sets up its dashboard. */
export interface BrowserTestOptions {
  /** How often a live stream looks for new lines, in ms (200 unless given). */
  pollMs?: number;
  /** Fills the run store before the server starts. */
  setup?: (root: string) => void | Promise<void>;
}

/**
 * A browser test: the dashboard served over a fresh run store and Chromium
 * pointed at it, both closed (and the store removed) when `fn` ends; skipped
 * without Chromium unless CI=true, where it fails instead.
 */
export function browserTest(
  name: string,
  fn: (root: string, browser: Browser) => Promise<void>,
  options: BrowserTestOptions = {},
): void {
  if (!chromium && !inCi && !warned) {
    warned = true;
    console.warn("\n!!! SKIPPED: the dashboard browser tests need Chromium (apt-get install chromium) !!!\n");
  }
  Deno.test({
    name,
    ignore: !chromium && !inCi,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      assert(chromium, "Chromium is required under CI=true: install the Debian package chromium");
      const root = Deno.makeTempDirSync();
      try {
        await options.setup?.(root);
        const server = Deno.serve(
          { port: 0, hostname: "127.0.0.1", onListen: () => {} },
          createApp(root, { script: await bundleUi(), pollMs: options.pollMs ?? 200 }).fetch,
        );
        const browser = await Browser.launch(chromium, `http://127.0.0.1:${server.addr.port}/`, {
          initScript: CHART_PROBE,
        });
        try {
          await fn(root, browser);
        } finally {
          await browser.close();
          await server.shutdown();
        }
      } finally {
        await Deno.remove(root, { recursive: true }).catch(() => {});
      }
    },
  });
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
