import { assert, assertEquals, assertNotEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  deltaSampler,
  discreteMultiSessionSampler,
  discreteSampler,
  fullBatchSampler,
  hybridSampler,
  mixedSampler,
  multiSessionSampler,
  timeDeltaSampler,
  timeSampler,
} from "../../lib/contrastive/samplers.ts";
import { allRows, bruteNearest, plainArgmin, randomMatrix } from "./nearest_reference.ts";

const ONE = { left: 0, right: 1 }; // offset1 window
const TEN = { left: 5, right: 5 }; // offset10 window

function inWindow(index: Int32Array, w: { left: number; right: number }, T: number): boolean {
  return index.every((i) => i >= w.left && i <= T - w.right);
}

Deno.test("time_delta draws in 3-D are the plain argmin of c_ref + D_u, replayed from the generator's state", () => {
  const rng = new Rng(23);
  const T = 3000, cols = 3, offset = 2;
  // Rounded labels: many exact ties and repeated rows, as binned positions beside 0/1 direction flags give.
  const labels = randomMatrix(rng, T, cols);
  labels.data = (labels.data as Float64Array).map((v, i) => (i % cols === 0 ? Math.round(v * 8) / 8 : v > 0 ? 1 : 0));
  const c = labels.data as Float64Array;
  const start = rng.state();
  const b = timeDeltaSampler(labels, { offset, ...ONE }).sample(rng, 500);
  // The draw: 2n prior rows, then u for each reference.
  const replay = Rng.fromState(start);
  for (let i = 0; i < 1000; i++) replay.int(T);
  const query = new Float64Array(cols), rows = allRows(labels);
  for (let i = 0; i < 500; i++) {
    const u = replay.int(T), r = b.ref[i];
    for (let k = 0; k < cols; k++) {
      query[k] = c[r * cols + k] + (u >= offset ? c[u * cols + k] - c[(u - offset) * cols + k] : 0);
    }
    assertEquals(b.pos[i], plainArgmin(labels, rows, query), `reference ${i}`);
  }
});

Deno.test("mixed draws in 2-D and 3-D are the plain argmin over the reference's class rows, replayed", () => {
  const rng = new Rng(24);
  const T = 2000;
  for (const cols of [2, 3]) {
    for (const integer of [false, true]) {
      const labels = randomMatrix(rng, T, cols);
      // Integer labels put ties and duplicate rows inside each class.
      if (integer) labels.data = (labels.data as Float64Array).map((v) => Math.round(v * 2));
      const c = labels.data as Float64Array;
      const d = Int32Array.from({ length: T }, () => rng.int(3));
      const classRows = [0, 1, 2].map((k) => Int32Array.from(allRows(labels).filter((t) => d[t] === k)));
      const start = rng.state();
      const b = mixedSampler(labels, d, { offset: 1, ...ONE }).sample(rng, 400);
      // The draw: n reference and n negative classes (one uniform each), then u for each reference.
      const replay = Rng.fromState(start);
      for (let i = 0; i < 800; i++) replay.uniform();
      const query = new Float64Array(cols);
      for (let i = 0; i < 400; i++) {
        const u = replay.int(T), r = b.ref[i];
        for (let k = 0; k < cols; k++) {
          query[k] = c[r * cols + k] + (u >= 1 ? c[u * cols + k] - c[(u - 1) * cols + k] : 0);
        }
        const rows = classRows[d[r]];
        assertEquals(b.pos[i], rows[plainArgmin(labels, rows, query)], `${cols}-D, integer ${integer}, reference ${i}`);
      }
    }
  }
});

Deno.test("time sampler: pos = ref + Δ, ref and neg uniform in [0, T − Δ)", () => {
  const T = 50, offset = 3;
  const batch = timeSampler(T, { offset, ...ONE }).sample(new Rng(2), 4000);
  for (let i = 0; i < batch.ref.length; i++) assertEquals(batch.pos[i], batch.ref[i] + offset);
  const counts = new Array(T).fill(0);
  for (const r of batch.ref) counts[r]++;
  for (const r of batch.neg) counts[r]++;
  for (let t = 0; t < T; t++) {
    if (t >= T - offset) assertEquals(counts[t], 0);
    else assert(Math.abs(counts[t] - 8000 / (T - offset)) < 5 * Math.sqrt(8000 / (T - offset)), `t ${t}: ${counts[t]}`);
  }
});

Deno.test("every sampler keeps indices in the window [left, T − right]", () => {
  const rng = new Rng(3);
  const T = 60;
  const c = randomMatrix(rng, T, 2);
  const d = Int32Array.from({ length: T }, (_, i) => i % 3);
  const samplers = [
    timeSampler(T, { offset: 2, ...TEN }),
    timeDeltaSampler(c, { offset: 2, ...TEN }),
    deltaSampler(c, { delta: 0.5, ...TEN }),
    discreteSampler(d, TEN),
    discreteSampler(d, { prior: "uniform", ...TEN }),
    mixedSampler(c, d, { offset: 2, ...TEN }),
  ];
  for (const sampler of samplers) {
    const b = sampler.sample(rng, 500);
    for (const index of [b.ref, b.pos, b.neg]) assert(inWindow(index, TEN, T));
    assert(b.ref.some((i) => i === 5) && b.ref.some((i) => i === T - 5), "clamping reaches both ends");
  }
  const h = hybridSampler(c, { offset: 2, ...TEN }).sample(rng, 500);
  for (const index of [h.ref, h.pos, h.neg, h.posTime]) assert(inWindow(index, TEN, T));
});

Deno.test("time_delta positives are the nearest labels to c_ref + D_u for some u; a ramp gives pos = ref + 1", () => {
  const rng = new Rng(4);
  const T = 120;
  const c = randomMatrix(rng, T, 2);
  const offset = 2;
  const diff = new Float64Array(T * 2);
  for (let i = offset * 2; i < T * 2; i++) diff[i] = (c.data[i] as number) - (c.data[i - offset * 2] as number);
  const batch = timeDeltaSampler(c, { offset, ...ONE }).sample(rng, 60);
  for (let i = 0; i < 60; i++) {
    const r = batch.ref[i];
    let found = false;
    for (let u = 0; u < T && !found; u++) {
      const q = [(c.data[r * 2] as number) + diff[u * 2], (c.data[r * 2 + 1] as number) + diff[u * 2 + 1]];
      found = bruteNearest(c, q) === batch.pos[i];
    }
    assert(found, `positive ${batch.pos[i]} of reference ${r} answers no c_ref + D_u`);
  }
  // Labels c_t = t, Δ = 1: D_u = 1 except D_0 = 0, so pos = ref + 1 (or ref, or T − 1 at the end).
  const ramp = { data: Float64Array.from({ length: T }, (_, t) => t), rows: T, cols: 1 };
  const b = timeDeltaSampler(ramp, { offset: 1, ...ONE }).sample(new Rng(5), 3000);
  let plusOne = 0;
  for (let i = 0; i < b.ref.length; i++) {
    const step = b.pos[i] - b.ref[i];
    assert(step === 1 || step === 0, `step ${step}`);
    if (step === 1) plusOne++;
  }
  assert(plusOne > 3000 * (1 - 3 / T), `${plusOne} of 3000 moved one step`);
});

Deno.test("delta sampler: pos − ref on a unit ramp spreads as N(0, δ²) rounded", () => {
  const T = 2000, delta = 5;
  const ramp = { data: Float64Array.from({ length: T }, (_, t) => t), rows: T, cols: 1 };
  const b = deltaSampler(ramp, { delta, ...ONE }).sample(new Rng(6), 4000);
  let sum = 0, sq = 0, n = 0;
  for (let i = 0; i < b.ref.length; i++) {
    if (b.ref[i] < 40 || b.ref[i] > T - 40) continue; // away from the clamped ends
    const step = b.pos[i] - b.ref[i];
    sum += step;
    sq += step * step;
    n++;
  }
  const sd = Math.sqrt(sq / n - (sum / n) ** 2);
  // Rounding to the nearest integer adds variance 1/12.
  assert(Math.abs(sd - Math.sqrt(delta * delta + 1 / 12)) < 0.05 * delta * 2, `sd ${sd}`);
  assert(Math.abs(sum / n) < 0.3, `mean ${sum / n}`);
});

Deno.test("discrete sampler: positives share the reference's class; the uniform prior balances classes", () => {
  const T = 1000;
  // Classes 0, 1, 2 with 85%, 12%, 3% of the rows, interleaved.
  const d = Int32Array.from({ length: T }, (_, i) => (i % 100 < 85 ? 0 : i % 100 < 97 ? 1 : 2));
  const counts = (index: Int32Array) => [0, 1, 2].map((k) => index.filter((i) => d[i] === k).length / index.length);
  for (const prior of ["empirical", "uniform"] as const) {
    const b = discreteSampler(d, { prior, ...ONE }).sample(new Rng(7), 6000);
    for (let i = 0; i < b.ref.length; i++) assertEquals(d[b.pos[i]], d[b.ref[i]]);
    const expected = prior === "uniform" ? [1 / 3, 1 / 3, 1 / 3] : [0.85, 0.12, 0.03];
    for (const freq of [counts(b.ref), counts(b.neg)]) {
      freq.forEach((f, k) => assert(Math.abs(f - expected[k]) < 0.025, `${prior} class ${k}: ${f}`));
    }
  }
  // Positives are uniform within the class: each of the 30 rows of class 2 is drawn.
  const b = discreteSampler(d, { prior: "uniform", ...ONE }).sample(new Rng(8), 6000);
  const rows2 = new Set(Array.from(b.pos).filter((i) => d[i] === 2));
  assertEquals(rows2.size, 30);
});

Deno.test("mixed sampler: positives share the class and are the nearest in-class labels to c_ref + D_u", () => {
  const rng = new Rng(9);
  const T = 150;
  const c = randomMatrix(rng, T, 1);
  const d = Int32Array.from({ length: T }, (_, i) => (i < 100 ? 0 : 1));
  const b = mixedSampler(c, d, { offset: 1, ...ONE }).sample(rng, 3000);
  let ones = 0;
  for (let i = 0; i < b.ref.length; i++) {
    assertEquals(d[b.pos[i]], d[b.ref[i]]);
    if (d[b.ref[i]] === 1) ones++;
  }
  // The uniform class prior draws the 50-row class half of the time.
  assert(Math.abs(ones / 3000 - 0.5) < 0.03, `${ones}`);
  // The in-class nearest: brute force over the class rows for the first references, some u.
  const diff = Float64Array.from(
    { length: T },
    (_, t) => (t >= 1 ? (c.data[t] as number) - (c.data[t - 1] as number) : 0),
  );
  for (let i = 0; i < 40; i++) {
    const r = b.ref[i];
    const rows = Array.from({ length: T }, (_, t) => t).filter((t) => d[t] === d[r]);
    let found = false;
    for (let u = 0; u < T && !found; u++) {
      const q = (c.data[r] as number) + diff[u];
      let best = Infinity, arg = -1;
      for (const t of rows) {
        const dist = ((c.data[t] as number) - q) ** 2;
        if (dist < best) [best, arg] = [dist, t];
      }
      found = arg === b.pos[i];
    }
    assert(found);
  }
});

Deno.test("hybrid sampler: posTime = ref + Δ from the time prior, pos from the behaviour conditional", () => {
  const T = 80;
  const ramp = { data: Float64Array.from({ length: T }, (_, t) => 2 * t), rows: T, cols: 1 };
  const b = hybridSampler(ramp, { offset: 3, ...ONE }).sample(new Rng(10), 2000);
  for (let i = 0; i < b.ref.length; i++) {
    assert(b.ref[i] < T - 3 && b.neg[i] < T - 3);
    assertEquals(b.posTime[i], b.ref[i] + 3);
    // D = 6 on this ramp except the first three rows (0): pos is ref + 3 or ref.
    assert(b.pos[i] === b.ref[i] + 3 || b.pos[i] === b.ref[i]);
  }
  assertThrows(() => hybridSampler(ramp, { offset: 3, ...ONE, conditional: "delta" }), UsageError, "delta");
});

Deno.test("multi-session: shapes, pos[s] rows of session s nearest to the shuffled queries, pooled D", () => {
  const rng = new Rng(11);
  const lengths = [70, 90, 50];
  const labels = lengths.map((T) => randomMatrix(rng, T, 2));
  const offset = 2, n = 30;
  const b = multiSessionSampler(labels, { offset, ...ONE }).sample(rng, n);
  assertEquals(b.ref.length, 3);
  for (let s = 0; s < 3; s++) {
    for (const index of [b.ref[s], b.pos[s], b.neg[s]]) {
      assertEquals(index.length, n);
      assert(inWindow(index, ONE, lengths[s]));
    }
  }
  assertEquals(Array.from(b.queryOf).sort((x, y) => x - y), Array.from({ length: 3 * n }, (_, i) => i));
  const diffs: number[][] = [];
  for (const m of labels) {
    for (let t = offset; t < m.rows; t++) {
      diffs.push([0, 1].map((k) => (m.data[t * 2 + k] as number) - (m.data[(t - offset) * 2 + k] as number)));
    }
  }
  for (let k = 0; k < 3 * n; k++) {
    const s = Math.floor(k / n), flat = b.queryOf[k];
    const rs = Math.floor(flat / n), r = b.ref[rs][flat % n];
    const c = labels[rs].data as Float64Array;
    const found = diffs.some((d) =>
      bruteNearest(labels[s], [c[r * 2] + d[0], c[r * 2 + 1] + d[1]]) === b.pos[s][k % n]
    );
    assert(found, `slot ${k}`);
  }
  // Discrete: the class of pos[s][j] is the class of the reference whose query it answered.
  const classes = lengths.map((T) => Int32Array.from({ length: T }, () => rng.int(4)));
  const db = discreteMultiSessionSampler(classes, TEN).sample(rng, 40);
  for (let k = 0; k < 3 * 40; k++) {
    const s = Math.floor(k / 40), flat = db.queryOf[k];
    const p = db.pos[s][k % 40];
    assert(inWindow(db.pos[s], TEN, lengths[s]));
    // Clamping into the window can move an index off its class; check the pairs that were not clamped.
    const rs = Math.floor(flat / 40), r = db.ref[rs][flat % 40];
    const interior = (i: number, T: number) => i > 5 && i < T - 5;
    if (interior(p, lengths[s]) && interior(r, lengths[rs])) assertEquals(classes[s][p], classes[rs][r]);
  }
});

Deno.test("draws are reproducible from the seed and differ across seeds", () => {
  const rng = new Rng(12);
  const c = randomMatrix(rng, 100, 3);
  const d = Int32Array.from({ length: 100 }, (_, i) => i % 4);
  const samplers = [
    timeSampler(100, { offset: 1, ...ONE }),
    timeDeltaSampler(c, { offset: 1, ...ONE }),
    deltaSampler(c, { delta: 0.1, ...ONE }),
    discreteSampler(d, ONE),
    mixedSampler(c, d, { offset: 1, ...ONE }),
    hybridSampler(c, { offset: 1, ...ONE }),
  ];
  for (const s of samplers) {
    assertEquals(s.sample(new Rng(5), 64), s.sample(new Rng(5), 64));
    assertNotEquals(s.sample(new Rng(5), 64), s.sample(new Rng(6), 64));
  }
  const m = multiSessionSampler([c, c], { offset: 1, ...ONE });
  assertEquals(m.sample(new Rng(5), 16), m.sample(new Rng(5), 16));
});

Deno.test("bad input throws UsageError", () => {
  const c = { data: [0, 1, 2, 3], rows: 4, cols: 1 };
  assertThrows(() => timeSampler(4, { offset: 4, ...ONE }), UsageError, "below");
  assertThrows(() => timeSampler(8, { offset: 1, ...TEN }), UsageError, "receptive");
  assertThrows(() => timeDeltaSampler({ data: [0, NaN, 1, 2], rows: 4, cols: 1 }, { offset: 1, ...ONE }), UsageError);
  assertThrows(() => deltaSampler(c, { delta: 0, ...ONE }), UsageError, "delta");
  assertThrows(() => discreteSampler(Int32Array.from([0, -1, 2]), ONE), UsageError, "non-negative");
  assertThrows(() => mixedSampler(c, Int32Array.from([0, 1]), { offset: 1, ...ONE }), UsageError, "rows");
  assertThrows(
    () => multiSessionSampler([c, { data: [0, 1, 2, 3], rows: 2, cols: 2 }], { offset: 1, ...ONE }),
    UsageError,
    "widths",
  );
  assertThrows(
    () => discreteMultiSessionSampler([Int32Array.from([0, 1, 0, 1]), Int32Array.from([0, 0, 0, 0])], ONE),
    UsageError,
    "class 1",
  );
});

Deno.test("full-batch sampler: references in order, negatives a permutation, positives past the end fall back", () => {
  const T = 40;
  const ramp = { data: Float64Array.from({ length: T }, (_, t) => t), rows: T, cols: 1 };
  // offset10: references 5 … T − 12 (arange(left, T − len(offset) − 1)).
  const b = fullBatchSampler(T, { ...TEN, offset: 3, conditional: "time" }).sample(new Rng(13), 0);
  assertEquals(Array.from(b.ref), Array.from({ length: T - 10 - 1 - 5 }, (_, i) => 5 + i));
  assertEquals(Array.from(b.neg).sort((x, y) => x - y), Array.from(b.ref));
  assertNotEquals(Array.from(b.neg), Array.from(b.ref));
  for (let i = 0; i < b.ref.length; i++) assertEquals(b.pos[i], b.ref[i] + 3 > T - 5 ? b.ref[i] : b.ref[i] + 3);
  const d = fullBatchSampler(T, { ...ONE, offset: 1, conditional: "time_delta", continuous: ramp }).sample(
    new Rng(14),
    0,
  );
  assertEquals(d.ref.length, T - 2);
  for (let i = 0; i < d.ref.length; i++) assert(d.pos[i] === d.ref[i] + 1 || d.pos[i] === d.ref[i]);
  assertThrows(() => fullBatchSampler(16, { ...TEN, offset: 1, conditional: "time" }), UsageError, "full-batch");
  assertThrows(
    () => fullBatchSampler(T, { ...ONE, offset: 1, conditional: "delta", continuous: ramp }),
    UsageError,
    "delta",
  );
});
