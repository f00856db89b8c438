/**
 * A browser test's frame: the dashboard served over a fresh run store and
 * headless Chromium pointed at it.
 *
 * @module
 */
import { assert } from "../assert.ts";
import { bundleUi, createApp } from "../../dashboard/server.ts";
import { Browser, findChromium } from "./cdp.ts";

const chromium = findChromium();
const inCi = Deno.env.get("CI") === "true";
if (!chromium && !inCi) {
  console.warn("\n!!! SKIPPED: the dashboard browser test needs Chromium (apt-get install chromium) !!!\n");
}

/**
 * A browser test: the dashboard served over a fresh run store and Chromium
 * pointed at it, both closed when `fn` ends; skipped without Chromium
 * unless CI=true, where it fails instead.
 */
export function browserTest(name: string, fn: (root: string, browser: Browser) => Promise<void>) {
  Deno.test({
    name,
    ignore: !chromium && !inCi,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      assert(chromium, "Chromium is required under CI=true: install the Debian package chromium");
      const root = Deno.makeTempDirSync();
      const server = Deno.serve(
        { port: 0, hostname: "127.0.0.1", onListen: () => {} },
        createApp(root, { script: await bundleUi(), pollMs: 200 }).fetch,
      );
      const browser = await Browser.launch(chromium, `http://127.0.0.1:${server.addr.port}/`);
      try {
        await fn(root, browser);
      } finally {
        await browser.close();
        await server.shutdown();
      }
    },
  });
}
