/**
 * Seeded randomness. One seed drives every JS-side draw (data, initial
 * weights, minibatch order); TF.js random ops get their seeds from the same
 * stream through {@linkcode Rng.int32}, so a run is reproducible per backend.
 *
 * @module
 */

/** Serializable generator state, stored in checkpoints for `--resume`. */
export type RngState = [number, number, number, number];

/**
 * xoshiro128** pseudo-random generator (32-bit state words), seeded through
 * splitmix32 so that nearby seeds give unrelated streams.
 */
export class Rng {
  #s: Uint32Array;

  /** A generator seeded with `seed` (any number; only its low 32 bits count). */
  constructor(seed: number) {
    this.#s = new Uint32Array(4);
    let x = seed >>> 0;
    for (let i = 0; i < 4; i++) {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      this.#s[i] = (z ^ (z >>> 16)) >>> 0;
    }
    if (this.#s.every((v) => v === 0)) this.#s[0] = 1;
  }

  /**
   * An independent generator for one part of a run (a phase, a model, a
   * dataset), determined by the seed and the labels alone, so that part can
   * be rebuilt identically on `--resume`.
   */
  static derive(seed: number, ...labels: (string | number)[]): Rng {
    let h = (seed ^ 0x811c9dc5) >>> 0;
    for (const ch of labels.join("\u0000")) {
      h = Math.imul(h ^ ch.codePointAt(0)!, 0x01000193) >>> 0;
    }
    return new Rng(h);
  }

  /** A generator continuing from a saved {@linkcode RngState}. */
  static fromState(state: RngState): Rng {
    const rng = new Rng(0);
    rng.#s.set(state);
    return rng;
  }

  /** Continues a saved stream in place: for a generator another object holds (a resumed model's dropout masks). */
  restore(state: RngState): void {
    this.#s.set(state);
  }

  /** The current state; `Rng.fromState(rng.state())` continues the same stream. */
  state(): RngState {
    return [this.#s[0], this.#s[1], this.#s[2], this.#s[3]];
  }

  /** Next raw 32-bit unsigned integer. */
  nextUint32(): number {
    const s = this.#s;
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** Uniform in [0, 1) with 32 bits of resolution. */
  uniform(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.uniform() * n);
  }

  /** A seed for a TF.js random op, drawn from this stream. */
  int32(): number {
    return this.nextUint32() & 0x7fffffff;
  }

  /**
   * Standard normal (Box–Muller). The pair's second value is dropped so that
   * the four state words are the whole state.
   */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.uniform());
  }

  /** Laplace(0, scale): density exp(−|x|/scale) / (2 scale). */
  laplace(scale = 1): number {
    // uniform() = 0 would give log(0): −∞, which one draw in 2³² makes (a 2¹⁸ × 20 source process meets it).
    let u = this.uniform();
    while (u === 0) u = this.uniform();
    u -= 0.5;
    return -scale * Math.sign(u) * Math.log(1 - 2 * Math.abs(u));
  }

  /** Float32Array of `n` standard normals times `scale`. */
  normalArray(n: number, scale = 1): Float32Array {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = this.normal() * scale;
    return out;
  }

  /** A uniformly random permutation of 0..n-1 (Fisher–Yates). */
  permutation(n: number): Int32Array {
    const p = new Int32Array(n);
    for (let i = 0; i < n; i++) p[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = p[i];
      p[i] = p[j];
      p[j] = tmp;
    }
    return p;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
