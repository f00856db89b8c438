/**
 * `eval --run` and `export-codes` read a run's saved model only when it is
 * intact: a model file unlike its recorded hash (zeroed, NaN, truncated
 * weights, an edited state.json), a missing file, or a run.json or
 * summary.json that does not parse is one line naming the file (exit code
 * 2), before any scoring, and summary.json is left as it was. A model saved
 * before manifests still loads, unless its weights are not finite.
 */
import { join } from "node:path";
import { assertEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { tensorArrays } from "../../lib/core/experiment.ts";
import { formatNpy, parseNpy } from "../../lib/core/npy.ts";
import { Rng } from "../../lib/core/rng.ts";
import { loadSavedModel, MANIFEST_FILE } from "../../lib/core/run_checkpoints.ts";
import { RunWriter } from "../../lib/core/run_writer.ts";
import { SCORE_CONFIG } from "../../lib/metrics/score.ts";
import { vaeNetworks } from "../../lib/models/dislib_vae.ts";
import type { SavedEncoderInfo } from "../../lib/train/saved_encoder.ts";
import { mainInProcess } from "../main_in_process.ts";

await selectBackend("wasm");

/** A completed vae-dsprites run that kept one small untrained encoder as models/m/, as training saves it. */
async function runWithModel(): Promise<string> {
  const writer = RunWriter.create({
    root: Deno.makeTempDirSync({ prefix: "latentlab-saved-model-" }),
    experiment: "vae-dsprites",
    argv: ["--preset", "smoke"],
    seed: 0,
    preset: "smoke",
    backend: { name: "wasm" },
    config: { steps: 1 },
    versions: {},
    gitCommit: null,
  });
  const { encoder, decoder } = vaeNetworks(new Rng(0), "mlp", { size: 32, channels: 1, latents: 2 });
  const scoring = { ...Object.fromEntries(Object.entries(SCORE_CONFIG).map(([k, p]) => [k, p.default])), latents: 2 };
  const info = { architecture: "mlp", size: 32, channels: 1, latents: 2, dataset: "dsprites", seed: 0, scoring };
  writer.saveModel("m", await tensorArrays(encoder.params.entries("encoder/")), info as unknown as SavedEncoderInfo);
  encoder.params.dispose();
  decoder.params.dispose();
  writer.writeSummary({ metrics: {} });
  writer.finish("completed");
  return writer.dir;
}

const model = (dir: string) => join(dir, "models", "m");
/** Rewrites the first weight array (encoder/…) of the saved model through `change`, as a well-formed .npy file. */
const rewriteWeights = (change: (data: Float32Array) => Float32Array) => (dir: string) => {
  const file = join(model(dir), "0.npy");
  const array = parseNpy(Deno.readFileSync(file));
  Deno.writeFileSync(file, formatNpy(change(array.data as Float32Array), array.shape));
};
const withNaN = rewriteWeights((data) => data.map((v, i) => i === 3 ? NaN : v));
const unchecked = (damage: (dir: string) => void) => (dir: string) => {
  damage(dir);
  Deno.removeSync(join(model(dir), MANIFEST_FILE));
};

/** A damage, the command, and its one line (`DIR` stands for the run folder). */
const ROWS: [string, (dir: string) => void, string, string][] = [
  ["zeroed weights", rewriteWeights((data) => data.map(() => 0)), "eval", "0.npy (encoder/"],
  ["zeroed weights", rewriteWeights((data) => data.map(() => 0)), "export-codes", "0.npy (encoder/"],
  ["NaN weights", withNaN, "eval", "0.npy (encoder/"],
  ["NaN weights saved before manifests", unchecked(withNaN), "eval", "encoder/"],
  ["a truncated weight file", (dir) => Deno.truncateSync(join(model(dir), "0.npy"), 100), "eval", "0.npy (encoder/"],
  ["a missing weight file", (dir) => Deno.removeSync(join(model(dir), "0.npy")), "eval", "No such file"],
  ["a garbage state.json", (dir) => Deno.writeTextFileSync(join(model(dir), "state.json"), "{]"), "eval", "state.json"],
  [
    "a garbage state.json saved before manifests",
    unchecked((dir) => Deno.writeTextFileSync(join(model(dir), "state.json"), "{]")),
    "export-codes",
    "state.json does not parse",
  ],
];

for (const [what, damage, command, names] of ROWS) {
  Deno.test(`${command} on a saved model with ${what} is refused with one line naming the file`, async () => {
    const dir = await runWithModel();
    damage(dir);
    const summary = Deno.readTextFileSync(join(dir, "summary.json"));
    const args = command === "eval" ? ["eval", "--run", dir] : ["export-codes", dir];
    const { code, stderr } = await mainInProcess(args);
    assertEquals(code, 2, stderr);
    const prefix = `saved model ${model(dir)} cannot be used: `;
    assertEquals(stderr.startsWith(prefix) && stderr.slice(prefix.length).includes(names), true, stderr);
    assertEquals(stderr.split("\n").length, 1, stderr);
    assertEquals(Deno.readTextFileSync(join(dir, "summary.json")), summary);
  });
}

Deno.test("eval --run on a run whose run.json or summary.json does not parse is refused with one line", async () => {
  const dir = await runWithModel();
  Deno.writeTextFileSync(join(dir, "summary.json"), '{"metrics": ');
  assertEquals(await mainInProcess(["eval", "--run", dir]), {
    code: 2,
    stdout: "",
    stderr: `${join(dir, "summary.json")} is missing or not a JSON object; the evaluation is added to it`,
  });
  Deno.writeTextFileSync(join(dir, "run.json"), "{");
  const { code, stderr } = await mainInProcess(["export-codes", dir]);
  assertEquals([code, stderr.split(" (")[0]], [2, `${join(dir, "run.json")} cannot be read as JSON`]);
});

Deno.test("a model saved before manifests still loads", async () => {
  const dir = await runWithModel();
  const checked = loadSavedModel(dir, "m");
  Deno.removeSync(join(model(dir), MANIFEST_FILE));
  assertEquals(loadSavedModel(dir, "m"), checked);
});
