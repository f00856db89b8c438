import * as tf from "@tensorflow/tfjs";
import { assert, assertEquals, assertNotEquals, assertRejects, assertThrows } from "../assert.ts";
import { selectBackend } from "../../lib/core/backend.ts";
import { UsageError } from "../../lib/core/errors.ts";
import type { Matrix } from "../../lib/core/matrix.ts";
import { Rng } from "../../lib/core/rng.ts";
import { Cebra, type CebraOptions } from "../../lib/contrastive/cebra.ts";

await selectBackend("wasm");

/** Neural-like data driven by a latent walking around a circle: [T, n] features and the angle as a label. */
function synthetic(seed: number, T: number, n: number): { x: Matrix; angle: Matrix; cls: Int32Array } {
  const rng = new Rng(seed);
  const mix = Array.from({ length: n * 2 }, () => rng.normal());
  const x = new Float32Array(T * n);
  const angle = new Float64Array(T);
  let a = 0;
  for (let t = 0; t < T; t++) {
    a += 0.05 + 0.02 * rng.normal();
    angle[t] = a % (2 * Math.PI);
    const z = [Math.cos(a), Math.sin(a)];
    for (let j = 0; j < n; j++) {
      x[t * n + j] = Math.tanh(mix[2 * j] * z[0] + mix[2 * j + 1] * z[1]) + 0.1 * rng.normal();
    }
  }
  const cls = Int32Array.from(angle, (v) => Math.min(3, Math.floor(v / (Math.PI / 2))));
  return { x: { data: x, rows: T, cols: n }, angle: { data: angle, rows: T, cols: 1 }, cls };
}

const { x, angle, cls } = synthetic(1, 300, 12);
const small: CebraOptions = { batchSize: 64, learningRate: 3e-3, outputDimension: 3, numHiddenUnits: 16 };

function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

function rowNorms(m: Matrix): number[] {
  return Array.from({ length: m.rows }, (_, r) => {
    let s = 0;
    for (let c = 0; c < m.cols; c++) s += (m.data[r * m.cols + c] as number) ** 2;
    return Math.sqrt(s);
  });
}

/** Mean angular distance between each row's angle and that of its nearest embedding neighbour ≥ 3 rows away. */
function nearestNeighbourAngleError(e: Matrix, labels: Matrix): number {
  let total = 0;
  for (let i = 0; i < e.rows; i++) {
    let best = Infinity, arg = -1;
    for (let j = 0; j < e.rows; j++) {
      if (Math.abs(i - j) < 3) continue;
      let d = 0;
      for (let k = 0; k < e.cols; k++) {
        d += ((e.data[i * e.cols + k] as number) - (e.data[j * e.cols + k] as number)) ** 2;
      }
      if (d < best) [best, arg] = [d, j];
    }
    const diff = Math.abs((labels.data[i] as number) - (labels.data[arg] as number));
    total += Math.min(diff, 2 * Math.PI - diff);
  }
  return total / e.rows;
}

Deno.test("defaults are the package's", () => {
  const cebra = new Cebra();
  assertEquals({ ...cebra.options }, {
    modelArchitecture: "offset1-model",
    distance: "cosine",
    conditional: null,
    temperature: 1,
    temperatureMode: "constant",
    minTemperature: 0.1,
    timeOffsets: 1,
    delta: null,
    maxIterations: 10000,
    maxAdaptIterations: 500,
    batchSize: null,
    learningRate: 3e-4,
    outputDimension: 8,
    numHiddenUnits: 32,
    padBeforeTransform: true,
    hybrid: false,
    seed: 0,
  });
  assert(!cebra.fitted);
});

Deno.test("time-contrastive fit: loss falls, unit-norm embedding of every row, no tensor leak across steps", async () => {
  const before = tf.memory().numTensors;
  const counts: number[] = [];
  const cebra = new Cebra({ ...small, maxIterations: 150, onStep: () => counts.push(tf.memory().numTensors) });
  await cebra.fit(x);
  assertEquals(cebra.solver, "single-session");
  assertEquals(cebra.lossHistory.length, 150);
  // Every step leaves the same tensors behind (after Adam's first step has made its moments).
  assert(counts.slice(1).every((c) => c === counts[1]), `tensor counts ${counts.slice(0, 5)}`);
  const first = mean(cebra.lossHistory.slice(0, 15)), last = mean(cebra.lossHistory.slice(-15));
  assert(last < first - 0.1, `loss ${first} → ${last}`);
  const emb = await cebra.transform(x);
  assertEquals([emb.rows, emb.cols], [300, 3]);
  for (const n of rowNorms(emb)) assert(Math.abs(n - 1) < 1e-5);
  cebra.dispose();
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("time_delta with offset10: loss falls, the embedding orders rows by angle; padding restores T rows", async () => {
  const before = tf.memory().numTensors;
  // τ = 1 bounds the cosine loss near its start in 3-D; a lower temperature leaves room to fall.
  const cebra = new Cebra({ ...small, modelArchitecture: "offset10-model", temperature: 0.2, maxIterations: 120 });
  await cebra.fit(x, { continuous: angle });
  const first = mean(cebra.lossHistory.slice(0, 3)), last = mean(cebra.lossHistory.slice(-20));
  assert(last < first - 0.3, `loss ${first} → ${last}`);
  const padded = await cebra.transform(x);
  // The embedding's nearest neighbour (a few steps away in time or more) has nearly the same angle; chance is π/2.
  assert(nearestNeighbourAngleError(padded, angle) < 0.3);
  const batched = await cebra.transform(x, { batchSize: 64 });
  assertEquals([padded.rows, padded.cols], [300, 3]);
  for (let i = 0; i < padded.data.length; i++) {
    assert(Math.abs((padded.data[i] as number) - (batched.data[i] as number)) < 1e-5);
  }
  const unpadded = await new Cebra({
    ...small,
    modelArchitecture: "offset10-model",
    maxIterations: 1,
    padBeforeTransform: false,
  })
    .fit(x).then(async (c) => {
      const out = await c.transform(x);
      c.dispose();
      return out;
    });
  assertEquals(unpadded.rows, 291);
  cebra.dispose();
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("every mode trains: discrete, mixed, delta, full batch, hybrid, multi-session", async () => {
  const before = tf.memory().numTensors;
  const other = synthetic(2, 250, 9);
  const cases: [CebraOptions, Parameters<Cebra["fit"]>, string][] = [
    [{ ...small }, [x, { discrete: cls }], "single-session"],
    [{ ...small }, [x, { discrete: Uint8Array.from(cls) }], "single-session"],
    [{ ...small }, [x, { continuous: angle, discrete: cls }], "single-session"],
    [{ ...small, conditional: "delta", delta: 0.1, distance: "euclidean", modelArchitecture: "offset1-model-mse" }, [
      x,
      { continuous: angle },
    ], "single-session"],
    [{ ...small, batchSize: null }, [x], "single-session-full"],
    [
      { ...small, batchSize: null, modelArchitecture: "offset10-model" },
      [x, { continuous: angle }],
      "single-session-full",
    ],
    [{ ...small, hybrid: true }, [x, { continuous: angle }], "single-session-hybrid"],
    [{ ...small }, [[x, other.x], { continuous: [angle, other.angle] }], "multi-session"],
    [
      { ...small, modelArchitecture: "offset10-model" },
      [[x, other.x], { discrete: [cls, other.cls] }],
      "multi-session",
    ],
  ];
  for (const [options, args, solver] of cases) {
    const cebra = new Cebra({ ...options, maxIterations: 30 });
    await cebra.fit(...args);
    assertEquals(cebra.solver, solver);
    assert(cebra.lossHistory.every(Number.isFinite));
    const first = mean(cebra.lossHistory.slice(0, 5)), last = mean(cebra.lossHistory.slice(-5));
    assert(last < first, `${solver} ${JSON.stringify(options)}: loss ${first} → ${last}`);
    if (solver === "multi-session") {
      assertEquals(cebra.numSessions, 2);
      const emb = await cebra.transform(other.x, { session: 1 });
      assertEquals([emb.rows, emb.cols], [250, 3]);
    }
    cebra.dispose();
  }
  assertEquals(tf.memory().numTensors, before);
});

Deno.test("learnable temperature moves from its start and stays at or above minTemperature", async () => {
  const cebra = new Cebra({
    ...small,
    temperatureMode: "auto",
    temperature: 1,
    minTemperature: 0.5,
    maxIterations: 60,
  });
  await cebra.fit(x, { continuous: angle });
  assert(cebra.temperature !== 1 && cebra.temperature >= 0.5 - 1e-6, `τ ${cebra.temperature}`);
  cebra.dispose();
});

Deno.test("adapt retrains a fresh input layer for maxAdaptIterations and leaves the rest as it was", async () => {
  const cebra = new Cebra({ ...small, maxIterations: 30, maxAdaptIterations: 25 });
  await cebra.fit(x, { continuous: angle });
  const dir = await Deno.makeTempDir();
  await cebra.save(dir);
  const other = synthetic(3, 200, 7);
  await cebra.fit(other.x, { continuous: other.angle }, { adapt: true });
  assertEquals(cebra.lossHistory.length, 25);
  assertEquals(cebra.inputDimensions, [7]);
  await cebra.save(`${dir}/adapted`);
  const meta = JSON.parse(await Deno.readTextFile(`${dir}/cebra.json`));
  for (const [key, file] of Object.entries(meta.weights as Record<string, string>)) {
    const a = await Deno.readFile(`${dir}/${file}`), b = await Deno.readFile(`${dir}/adapted/${file}`);
    if (key.startsWith("0/layer0/")) assertNotEquals(a, b);
    else assertEquals(a, b, `${key} changed during adaptation`);
  }
  const emb = await cebra.transform(other.x);
  assertEquals([emb.rows, emb.cols], [200, 3]);
  await assertRejects(() => cebra.transform(x), UsageError, "takes 7 features");
  cebra.dispose();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("save then load gives bit-identical transforms (single with a learned temperature, multi-session)", async () => {
  const other = synthetic(4, 220, 9);
  const fits: [CebraOptions, Parameters<Cebra["fit"]>][] = [
    [{ ...small, temperatureMode: "auto", modelArchitecture: "offset10-model" }, [x, { continuous: angle }]],
    [{ ...small }, [[x, other.x], { continuous: [angle, other.angle] }]],
  ];
  for (const [options, args] of fits) {
    const cebra = new Cebra({ ...options, maxIterations: 15 });
    await cebra.fit(...args);
    const dir = await Deno.makeTempDir();
    await cebra.save(dir);
    const loaded = await Cebra.load(dir);
    assertEquals(loaded.options, cebra.options);
    assertEquals(loaded.lossHistory, cebra.lossHistory);
    assertEquals(loaded.temperature, cebra.temperature);
    const sessions = cebra.numSessions ?? 1;
    for (let s = 0; s < sessions; s++) {
      const input = s === 0 ? x : other.x;
      const session = cebra.numSessions ? s : undefined;
      const a = await cebra.transform(input, { session }), b = await loaded.transform(input, { session });
      assertEquals(Array.from(a.data), Array.from(b.data));
    }
    cebra.dispose();
    loaded.dispose();
    await Deno.remove(dir, { recursive: true });
  }
  await assertRejects(() => Cebra.load("/nonexistent/cebra"), UsageError, "cebra.json");
});

Deno.test("the same seed gives the same losses and embedding; another seed does not", async () => {
  const run = async (seed: number) => {
    const cebra = new Cebra({ ...small, seed, maxIterations: 20 });
    await cebra.fit(x, { continuous: angle });
    const emb = await cebra.transform(x);
    cebra.dispose();
    return { loss: cebra.lossHistory, emb: Array.from(emb.data) };
  };
  const a = await run(7), b = await run(7), c = await run(8);
  assertEquals(a, b);
  assertNotEquals(a.loss, c.loss);
});

Deno.test("bad input throws UsageError before any work", async () => {
  assertThrows(() => new Cebra({ modelArchitecture: "offset5-model" as never }), UsageError, "offset1-model");
  assertThrows(() => new Cebra({ distance: "manhattan" as never }), UsageError, "cosine");
  assertThrows(() => new Cebra({ batchSize: 0 }), UsageError, "batchSize");
  assertThrows(() => new Cebra({ bogus: 1 } as never), UsageError, "unknown Cebra option");
  const before = tf.memory().numTensors;
  const cebra = new Cebra({ ...small, maxIterations: 1 });
  const nan = { data: Float32Array.from(x.data as Float32Array, (v, i) => (i === 7 ? NaN : v)), rows: 300, cols: 12 };
  const inf = {
    data: Float32Array.from(x.data as Float32Array, (v, i) => (i === 7 ? Infinity : v)),
    rows: 300,
    cols: 12,
  };
  const short = { data: new Float32Array(9 * 12), rows: 9, cols: 12 };
  const other = synthetic(5, 100, 12);
  const wide = { data: new Float64Array(200), rows: 100, cols: 2 };
  const rejects: [Cebra, (c: Cebra) => Promise<unknown>, string][] = [
    [cebra, (c) => c.fit(x, { continuous: { data: new Float64Array(299), rows: 299, cols: 1 } }), "rows"],
    [cebra, (c) => c.fit(x, { discrete: cls.slice(1) }), "rows"],
    [cebra, (c) => c.fit(nan), "non-finite"],
    [cebra, (c) => c.fit(inf), "non-finite"],
    [
      cebra,
      (c) =>
        c.fit(x, { continuous: { data: Float64Array.from(angle.data, (v, i) => (i ? v : NaN)), rows: 300, cols: 1 } }),
      "non-finite",
    ],
    [cebra, (c) => c.fit(x, { discrete: Array.from(cls, (v, i) => (i ? v : 0.5)) }), "integers"],
    [cebra, (c) => c.fit(x, { discrete: Float64Array.from(cls) as never }), "integer array"],
    [cebra, (c) => c.fit(x, { discrete: angle as never }), "one-dimensional"],
    [cebra, (c) => c.fit(x, { discrete: Int32Array.from(cls, (v) => v - 1) }), "non-negative"],
    [new Cebra({ ...small, modelArchitecture: "offset10-model" }), (c) => c.fit(short), "receptive field"],
    [new Cebra({ ...small, conditional: "delta" }), (c) => c.fit(x, { continuous: angle }), "delta"],
    [new Cebra({ ...small, timeOffsets: 300 }), (c) => c.fit(x), "timeOffsets"],
    [cebra, (c) => c.fit([x, other.x], { continuous: [angle, wide] }), "widths"],
    [cebra, (c) => c.fit([x, other.x], { continuous: [angle] }), "one entry per session"],
    [cebra, (c) => c.fit([x, other.x]), "needs labels"],
    [
      cebra,
      (c) => c.fit([x, other.x], { continuous: [angle, other.angle], discrete: [cls, other.cls] }),
      "not supported",
    ],
    [
      new Cebra({ ...small, batchSize: null }),
      (c) => c.fit([x, other.x], { continuous: [angle, other.angle] }),
      "not supported",
    ],
    [new Cebra({ ...small, batchSize: null }), (c) => c.fit(x, { discrete: cls }), "not supported"],
    [new Cebra({ ...small, hybrid: true }), (c) => c.fit(x), "not supported"],
    [new Cebra({ ...small, hybrid: true }), (c) => c.fit(x, { discrete: cls }), "not supported"],
    [new Cebra({ ...small, hybrid: true, outputDimension: 2 }), (c) => c.fit(x, { continuous: angle }), "at least 3"],
    [cebra, (c) => c.fit(x, { continuous: [angle] }), "lists of sessions"],
    [cebra, (c) => c.transform(x), "fit first"],
  ];
  for (const [model, fn, message] of rejects) {
    await assertRejects(() => fn(model), UsageError, message);
    assert(!model.fitted, `failed fit left a model behind (${message})`);
  }
  assertEquals(tf.memory().numTensors, before);

  // transform's session checks
  const multi = new Cebra({ ...small, maxIterations: 1 });
  await multi.fit([x, other.x], { discrete: [cls, other.cls] });
  await assertRejects(() => multi.transform(x), UsageError, "pass session");
  await assertRejects(() => multi.transform(x, { session: 2 }), UsageError, "0…1");
  const single = new Cebra({ ...small, maxIterations: 1 });
  await single.fit(x);
  await assertRejects(() => single.transform(x, { session: 1 }), UsageError, "one session");
  await assertRejects(
    () => single.transform({ data: new Float32Array(30), rows: 3, cols: 10 }),
    UsageError,
    "12 features",
  );
  multi.dispose();
  single.dispose();
});
