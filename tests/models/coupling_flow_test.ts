import * as tf from "@tensorflow/tfjs";
import { assert, assertAlmostEquals } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { Rng } from "../../lib/core/rng.ts";
import { CouplingFlow, invertMatrix } from "../../lib/models/coupling_flow.ts";
import { slowFlowNll } from "../../lib/train/slow_flow.ts";

await selectBackend("wasm");

/** A flow whose parameters are all non-trivial (the zero init would make the checks vacuous). */
function randomFlow(seed: number, coupling: "additive" | "affine", linear: boolean): CouplingFlow {
  const rng = new Rng(seed);
  const flow = new CouplingFlow(rng, { dim: 4, blocks: 3, hidden: 8, coupling, linear });
  for (const v of flow.params.list()) v.assign(tf.tidy(() => tf.tensor(rng.normalArray(v.size, 0.3), v.shape)));
  return flow;
}

function logAbsDet(matrix: Float64Array, n: number): number {
  // LU without pivoting is enough for these well-conditioned Jacobians; the check is against |det|.
  const a = Float64Array.from(matrix);
  let sum = 0;
  for (let k = 0; k < n; k++) {
    sum += Math.log(Math.abs(a[k * n + k]));
    for (let r = k + 1; r < n; r++) {
      const factor = a[r * n + k] / a[k * n + k];
      for (let c = k; c < n; c++) a[r * n + c] -= factor * a[k * n + c];
    }
  }
  return sum;
}

for (const [coupling, linear] of [["additive", false], ["additive", true], ["affine", true]] as const) {
  Deno.test(`CouplingFlow (${coupling}, linear ${linear}) inverts exactly and its log-det matches the Jacobian`, async () => {
    const flow = randomFlow(1, coupling, linear);
    const x = tf.tensor2d(new Rng(2).normalArray(5 * 4), [5, 4]);
    const z = flow.forward(x);
    const back = await flow.inverse(z);
    const maxError = (await tf.max(tf.abs(tf.sub(back, x))).data())[0];
    assert(maxError < 1e-4, `round trip error ${maxError}`);

    // Central finite differences of f at the first sample, in float32 with a step of 1e-2.
    const eps = 1e-2;
    const x0 = (await x.data()).slice(0, 4);
    const jacobian = new Float64Array(16);
    for (let i = 0; i < 4; i++) {
      const plus = Float32Array.from(x0), minus = Float32Array.from(x0);
      plus[i] += eps;
      minus[i] -= eps;
      const zs = await flow.forward(tf.tensor2d([...plus, ...minus], [2, 4])).data();
      for (let j = 0; j < 4; j++) jacobian[j * 4 + i] = (zs[j] - zs[4 + j]) / (2 * eps);
    }
    const { logDet } = flow.forwardWithLogDet(x);
    assertAlmostEquals((await logDet.data())[0], logAbsDet(jacobian, 4), 2e-2);
    flow.dispose();
  });
}

Deno.test("SlowFlow NLL gradients match finite differences", async () => {
  const flow = randomFlow(3, "affine", true);
  const rng = new Rng(4);
  const x0 = tf.tensor2d(rng.normalArray(16 * 4), [16, 4]);
  const x1 = tf.tensor2d(rng.normalArray(16 * 4), [16, 4]);
  const loss = () =>
    tf.tidy(() => {
      const a = flow.forwardWithLogDet(x0), b = flow.forwardWithLogDet(x1);
      return slowFlowNll(a.z, b.z, a.logDet, b.logDet, 1.5).total;
    });
  const variables = flow.params.list();
  const { grads } = tf.variableGrads(loss, variables);
  for (const variable of variables.slice(0, 6)) {
    const analytic = await grads[variable.name].data();
    const values = Float32Array.from(await variable.data());
    for (const index of [0, values.length - 1]) {
      const eps = 1e-2;
      const at = async (delta: number) => {
        const moved = Float32Array.from(values);
        moved[index] += delta;
        variable.assign(tf.tensor(moved, variable.shape));
        return (await loss().data())[0];
      };
      const numeric = (await at(eps) - await at(-eps)) / (2 * eps);
      variable.assign(tf.tensor(values, variable.shape));
      assertAlmostEquals(analytic[index], numeric, 2e-2 * Math.max(1, Math.abs(numeric)), `${variable.name}[${index}]`);
    }
  }
  tf.dispose(Object.values(grads));
  flow.dispose();
});

Deno.test("invertMatrix inverts a pivot-needing matrix", () => {
  const m = Float64Array.from([0, 2, 1, 1]);
  const inv = invertMatrix(m, 2);
  // [[0,2],[1,1]]⁻¹ = [[-0.5, 1], [0.5, 0]]
  [-0.5, 1, 0.5, 0].forEach((v, i) => assertAlmostEquals(inv[i], v, 1e-12));
});
