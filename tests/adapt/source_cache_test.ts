/**
 * A source model cache entry that was edited but stays well-formed (zeroed
 * weights, another stored accuracy) or that has no manifest of content
 * hashes is refused with a one-line note and trained again to the same
 * weights, instead of being used with its stale accuracy.
 */
import * as tf from "@tensorflow/tfjs";
import { join } from "node:path";
import { assertEquals } from "../assert.ts";
import { blobDigits } from "../models/bn_cnn_fixtures.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { formatNpy, parseNpy } from "../../lib/core/npy.ts";
import { MANIFEST_FILE } from "../../lib/core/run_checkpoints.ts";
import { loadSourceModel } from "../../lib/train/source_training.ts";
import type { SourceClassifier, SourceTraining } from "../../lib/adapt/source_model.ts";

await selectBackend("wasm");

/** Two Adam steps of the MLP on 20 digits: the smallest entry there is. */
const TINY: SourceTraining = { trainDigits: 20, seed: 3, epochs: 1, lr: 1e-3, batch: 10 };
const probe = blobDigits(4, 7);

function logitsOf(model: SourceClassifier): Float32Array {
  return tf.tidy(() => model.logits(tf.tensor4d(probe, [4, 28, 28, 1])).dataSync() as Float32Array);
}

Deno.test("loadSourceModel: an edited or unchecked cache entry is refused with a note and trained again", async () => {
  const root = Deno.makeTempDirSync({ prefix: "source-cache-" });
  try {
    const first = await loadSourceModel("mlp", TINY, { cacheRoot: root, report: () => {} });
    const reference = logitsOf(first.model);
    first.model.dispose();
    const folder = join(root, first.key);
    const names = JSON.parse(Deno.readTextFileSync(join(folder, "state.json"))).names as string[];
    const weights = `${names.indexOf("params/mlp/w0")}.npy`;
    const editState = (edit: (state: Record<string, unknown>) => void) => {
      const state = JSON.parse(Deno.readTextFileSync(join(folder, "state.json")));
      edit(state);
      Deno.writeTextFileSync(join(folder, "state.json"), JSON.stringify(state));
    };
    const damages: [string, () => void, string][] = [
      ["zeroed weights", () => {
        const array = parseNpy(Deno.readFileSync(join(folder, weights)));
        Deno.writeFileSync(join(folder, weights), formatNpy(new Float32Array(array.data.length), array.shape));
      }, `${weights} (params/mlp/w0) differs from its recorded SHA-256`],
      [
        "a stale stored accuracy",
        () => editState((state) => state.cleanTrainAccuracy = 0.987),
        "state.json differs from its recorded SHA-256",
      ],
      ["no manifest", () => Deno.removeSync(join(folder, MANIFEST_FILE)), "it has no manifest of content hashes"],
    ];
    for (const [what, damage, reason] of damages) {
      damage();
      const notes: string[] = [];
      const rebuilt = await loadSourceModel("mlp", TINY, { cacheRoot: root, report: (line) => notes.push(line) });
      assertEquals(notes, [`source model cache ${folder} refused (${reason}); training it again`], what);
      assertEquals([rebuilt.fromCache, rebuilt.cleanTrainAccuracy], [false, first.cleanTrainAccuracy], what);
      assertEquals(logitsOf(rebuilt.model), reference, what);
      rebuilt.model.dispose();
      const again = await loadSourceModel("mlp", TINY, { cacheRoot: root, report: (line) => notes.push(line) });
      assertEquals([again.fromCache, notes.length], [true, 1], `${what}: the rebuilt entry reads back`);
      again.model.dispose();
    }
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
