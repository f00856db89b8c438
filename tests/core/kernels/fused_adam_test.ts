import * as tf from "@tensorflow/tfjs";
import { assert } from "../../assert.ts";
import { selectBackend } from "../../../lib/core/backend.ts";
import { Rng } from "../../../lib/core/rng.ts";

/**
 * Adam steps on three variables (given as a list or as a map, where one has no gradient in some steps),
 * a learning rate changed between steps as schedules do; returns every variable and optimizer weight afterwards.
 */
async function adamRun(backend: string, options: { epsilon?: number; map: boolean }) {
  await tf.setBackend(backend);
  const rng = new Rng(7);
  const shapes = [[300, 7], [7], [2, 3, 4]];
  const variables = shapes.map((shape, k) => {
    const initial = tf.tensor(rng.normalArray(shape.reduce((a, b) => a * b, 1)), shape);
    const variable = tf.variable(initial, true, `fused_adam_${k}`);
    initial.dispose();
    return variable;
  });
  const optimizer = tf.train.adam(1e-2, 0.9, 0.999, options.epsilon);
  const kernels = new Set<string>();
  for (let step = 0; step < 6; step++) {
    (optimizer as unknown as { learningRate: number }).learningRate = 1e-2 * (1 - step / 10);
    const grads = variables.map((v) => tf.tensor(rng.normalArray(v.size, step === 2 ? 1e-6 : 3), v.shape));
    const profile = await tf.profile(() => {
      if (options.map) {
        optimizer.applyGradients(
          Object.fromEntries(
            variables.map((v, k) => [v.name, k === 1 && step % 3 === 1 ? null : grads[k]]),
          ) as unknown as Parameters<
            typeof optimizer.applyGradients
          >[0],
        );
      } else {
        optimizer.applyGradients(variables.map((v, k) => ({ name: v.name, tensor: grads[k] })));
      }
    });
    profile.kernels.forEach((k) => kernels.add(k.name));
    tf.dispose(grads);
  }
  const values = await Promise.all(variables.map((v) => v.data()));
  const weights = await optimizer.getWeights();
  const state = await Promise.all(weights.map((w) => w.tensor.data()));
  // The iteration count is a new scalar; the moments belong to the optimizer.
  tf.dispose([...variables, weights[0].tensor]);
  optimizer.dispose();
  return { values, state, names: weights.map((w) => w.name), kernels };
}

function bitDifferences(a: ArrayLike<number>[], b: ArrayLike<number>[]): number {
  let n = 0;
  a.forEach((x, k) => {
    const y = b[k];
    for (let i = 0; i < x.length; i++) if (!Object.is(x[i], y[i])) n++;
  });
  return n;
}

Deno.test("the fused wasm Adam update equals TF.js's AdamOptimizer on the cpu backend bit for bit", async () => {
  await selectBackend("wasm"); // registers latentlab's wasm kernels
  for (const options of [{ map: false }, { map: true, epsilon: 1e-8 }]) {
    const before = tf.memory().numTensors;
    const wasm = await adamRun("wasm", options);
    assert(tf.memory().numTensors === before, "no tensors left behind on wasm");
    const cpu = await adamRun("cpu", options);
    assert(wasm.kernels.has("LatentlabFusedAdam"), "wasm ran the fused kernel");
    assert(!cpu.kernels.has("LatentlabFusedAdam"), "cpu ran TF.js's own update");
    assert(JSON.stringify(wasm.names) === JSON.stringify(cpu.names), `optimizer weights ${wasm.names} vs ${cpu.names}`);
    const differing = bitDifferences(wasm.values, cpu.values) + bitDifferences(wasm.state, cpu.state);
    assert(differing === 0, `${differing} values differ in their bits (${JSON.stringify(options)})`);
  }
  await tf.setBackend("wasm");
});
