import { assert, assertAlmostEquals, assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/core/errors.ts";
import { Rng } from "../../lib/core/rng.ts";
import {
  BASE_RATE,
  BIN_SECONDS,
  fieldRate,
  placeCellRats,
  splitByRuns,
  TRACK_LENGTH,
} from "../../lib/data/place_cells.ts";

const RATS = placeCellRats(new Rng(1));

Deno.test("four rats of 120/48/80/64 neurons, 10,000 bins, labels [position, right, left] one-hot", () => {
  assertEquals(RATS.map((r) => r.neurons), [120, 48, 80, 64]);
  for (const rat of RATS) {
    assertEquals([rat.spikes.rows, rat.spikes.cols, rat.labels.rows, rat.labels.cols], [
      10_000,
      rat.neurons,
      10_000,
      3,
    ]);
    for (let t = 0; t < 10_000; t++) {
      const [x, right, left] = [rat.labels.data[3 * t], rat.labels.data[3 * t + 1], rat.labels.data[3 * t + 2]];
      assert(x >= 0 && x <= TRACK_LENGTH);
      assert((right === 1 && left === 0) || (right === 0 && left === 1));
      // Runs are numbered in order and alternate direction.
      if (t > 0) assert(rat.runs[t] === rat.runs[t - 1] || rat.runs[t] === rat.runs[t - 1] + 1);
      if (t > 0 && rat.runs[t] !== rat.runs[t - 1]) assert(right !== rat.labels.data[3 * (t - 1) + 1]);
    }
  }
});

Deno.test("runs: sin² speed profile peaking at the drawn speed in [0.5, 1] m/s, crossing the track, then 1–3 s at the end", () => {
  const speeds: number[] = [], pauses: number[] = [];
  for (const rat of RATS) {
    const last = rat.runs[rat.runs.length - 1];
    for (let id = 0; id < last; id++) {
      const rows: number[] = [];
      rat.runs.forEach((r, t) => r === id && rows.push(t));
      const x = rows.map((t) => rat.labels.data[3 * t]);
      const right = rat.labels.data[3 * rows[0] + 1] === 1;
      const end = right ? TRACK_LENGTH : 0;
      // The rat moves monotonically towards the far end, where it stays for the pause.
      let maxSpeed = 0, moving = 0, resting = 0;
      for (let k = 1; k < x.length; k++) {
        const step = right ? x[k] - x[k - 1] : x[k - 1] - x[k];
        assert(step >= 0);
        maxSpeed = Math.max(maxSpeed, step / BIN_SECONDS);
      }
      for (const v of x) v === end ? resting++ : moving++;
      const peak = rat.peakSpeed[id];
      assert(peak >= 0.5 && peak <= 1);
      // The average speed over one bin near the peak is within (π·dt/D)² of it.
      assert(maxSpeed <= peak * (1 + 1e-12) && maxSpeed >= peak * 0.995, `run ${id}: ${maxSpeed} vs ${peak}`);
      // Crossing time 2L/v and pause, each to one bin.
      assertAlmostEquals(moving * BIN_SECONDS, 2 * TRACK_LENGTH / peak, 1.01 * BIN_SECONDS);
      assertAlmostEquals(resting * BIN_SECONDS, rat.pause[id], 1.01 * BIN_SECONDS);
      assert(rat.pause[id] >= 1 && rat.pause[id] <= 3);
      // The run ends where the next begins: the first bin of a run is at the start end.
      assertAlmostEquals(x[0], TRACK_LENGTH - end, peak * BIN_SECONDS);
      speeds.push(peak);
      pauses.push(rat.pause[id]);
    }
  }
  // Uniform draws: means ½(lo + hi), 4 standard errors.
  const mean = (v: number[]) => v.reduce((s, a) => s + a, 0) / v.length;
  assertAlmostEquals(mean(speeds), 0.75, 4 * 0.5 / Math.sqrt(12 * speeds.length));
  assertAlmostEquals(mean(pauses), 2, 4 * 2 / Math.sqrt(12 * pauses.length));
  assert(speeds.length > 100, `${speeds.length} complete runs`);
});

Deno.test("field rates: base + Gaussian field of the running direction; fields in the specified ranges", () => {
  for (const rat of RATS) {
    for (const fields of [rat.fields.right, rat.fields.left]) {
      for (let i = 0; i < rat.neurons; i++) {
        assert(fields.centre[i] >= 0 && fields.centre[i] <= TRACK_LENGTH);
        assert(fields.sigma[i] >= 0.05 && fields.sigma[i] <= 0.15);
        assert(fields.peak[i] >= 5 && fields.peak[i] <= 20);
        // At the centre the rate is base + peak; 2σ away, base + peak·e⁻².
        assertAlmostEquals(fieldRate(fields, i, fields.centre[i]), BASE_RATE + fields.peak[i], 1e-12);
        assertAlmostEquals(
          fieldRate(fields, i, fields.centre[i] + 2 * fields.sigma[i]),
          BASE_RATE + fields.peak[i] * Math.exp(-2),
          1e-12,
        );
      }
    }
    for (let t = 0; t < rat.labels.rows; t += 37) {
      const f = rat.labels.data[3 * t + 1] === 1 ? rat.fields.right : rat.fields.left;
      for (let i = 0; i < rat.neurons; i++) {
        const c = f.centre[i], s = f.sigma[i], p = f.peak[i], x = rat.labels.data[3 * t];
        assertAlmostEquals(
          rat.rates.data[t * rat.neurons + i],
          0.1 + p * Math.exp(-((x - c) ** 2) / (2 * s * s)),
          1e-12,
        );
      }
    }
  }
});

Deno.test("spike counts are Poisson with mean and variance rate × 25 ms", () => {
  let first = 0, second = 0, varFirst = 0, varSecond = 0, n = 0;
  for (const rat of RATS) {
    for (let i = 0; i < rat.spikes.data.length; i++) {
      const lambda = rat.rates.data[i] * BIN_SECONDS, x = rat.spikes.data[i];
      first += x - lambda;
      second += (x - lambda) ** 2 - lambda;
      varFirst += lambda;
      varSecond += lambda + 2 * lambda * lambda;
      n++;
    }
  }
  assertAlmostEquals(first / n, 0, 4 * Math.sqrt(varFirst) / n);
  assertAlmostEquals(second / n, 0, 4 * Math.sqrt(varSecond) / n);
});

Deno.test("split by runs: 80/10/10 of whole runs, disjoint, in time order, covering every bin", () => {
  const rat = RATS[1];
  const split = splitByRuns(rat.runs);
  assertEquals(split.train.length + split.valid.length + split.test.length, rat.runs.length);
  const runsOf = (rows: Int32Array) => new Set(Array.from(rows, (t) => rat.runs[t]));
  const [a, b, c] = [runsOf(split.train), runsOf(split.valid), runsOf(split.test)];
  const count = rat.runs[rat.runs.length - 1] + 1;
  assertEquals(a.size + b.size + c.size, count);
  assertEquals(a.size, Math.round(0.8 * count));
  assert(Math.max(...a) < Math.min(...b) && Math.max(...b) < Math.min(...c));
  assertThrows(() => splitByRuns(rat.runs, { train: 0.9, valid: 0.2 }), UsageError, "train + valid < 1");
});

Deno.test("seeded: the same seed gives the same rats; bad options throw UsageError", () => {
  const a = placeCellRats(new Rng(4), { rats: [5], bins: 300 });
  const b = placeCellRats(new Rng(4), { rats: [5], bins: 300 });
  assertEquals(Array.from(a[0].spikes.data), Array.from(b[0].spikes.data));
  assertThrows(() => placeCellRats(new Rng(1), { rats: [] }), UsageError, "neuron counts");
  assertThrows(() => placeCellRats(new Rng(1), { bins: 0 }), UsageError, "bins");
});
