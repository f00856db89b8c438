/**
 * A procedural stand-in for DeepMind's 3dshapes (Burgess & Kim, 2018): the
 * same six factors with the same sizes and values, rendered by a small
 * analytic ray caster instead of read from the published images. The scene is
 * a floor, a back wall and one object standing on the floor at the centre,
 * seen by a slightly elevated perspective camera that orbits the vertical
 * axis through the object; a fixed directional light gives Lambert shading
 * plus ambient, and the object casts a shadow. Every pixel belongs to exactly
 * one surface (no anti-aliasing), so each hue factor changes only its own
 * surface's pixels, as in the original.
 *
 * @module
 */
import type { Rng } from "../core/rng.ts";
import { type Factors, FactorSpace, type GroundTruthDataset, type Observations } from "./ground_truth.ts";

/** Image side in pixels. */
const SIZE = 64;
const PIXELS = SIZE * SIZE;

/** Surface classes of a pixel. */
const FLOOR = 0, WALL = 1, OBJECT = 2;

/** Factor names in the original's order. */
export const SHAPES3D_FACTORS = ["floor_hue", "wall_hue", "object_hue", "scale", "shape", "orientation"] as const;
/** Factor sizes in that order. */
export const SHAPES3D_SIZES = [10, 10, 10, 8, 4, 15] as const;
const SIZES = SHAPES3D_SIZES;

/** Object scales: linspace(0.75, 1.25, 8). */
const SCALES = Float64Array.from({ length: 8 }, (_, i) => 0.75 + 0.5 * i / 7);

/** Camera azimuths in radians: linspace(−30°, 30°, 15). */
const AZIMUTHS = Float64Array.from({ length: 15 }, (_, i) => (-30 + 60 * i / 14) * Math.PI / 180);

/** Shape names in factor order. */
export const SHAPES3D_SHAPES = ["cube", "cylinder", "sphere", "capsule"] as const;

// Scene constants (world units; y is up, the camera looks towards −z at azimuth 0).
const WALL_Z = -2;
const CAMERA_DISTANCE = 4;
const CAMERA_HEIGHT = 1.5;
const TARGET_HEIGHT = 0.6;
/** tan of half the field of view (40° across). */
const TAN_HALF_FOV = Math.tan(20 * Math.PI / 180);
const AMBIENT = 0.35;
const DIFFUSE = 0.65;
/** Offset along the surface normal before a shadow ray, against self-intersection. */
const EPS = 1e-6;

// Unit light direction (towards the light): front-left-above, so the shadow falls back-right.
const LIGHT_X0 = -0.45, LIGHT_Y0 = 0.8, LIGHT_Z0 = 0.55;
const LIGHT_NORM = Math.hypot(LIGHT_X0, LIGHT_Y0, LIGHT_Z0);
const LX = LIGHT_X0 / LIGHT_NORM, LY = LIGHT_Y0 / LIGHT_NORM, LZ = LIGHT_Z0 / LIGHT_NORM;

/**
 * RGB of an HSV colour with full saturation and value, the colours of the
 * original's hue factors.
 */
export function hueToRgb(hue: number): [number, number, number] {
  const h = ((hue % 1) + 1) % 1 * 6;
  const sector = Math.floor(h);
  const f = h - sector;
  switch (sector) {
    case 0:
      return [1, f, 0];
    case 1:
      return [1 - f, 1, 0];
    case 2:
      return [0, 1, f];
    case 3:
      return [0, 1 - f, 1];
    case 4:
      return [f, 0, 1];
    default:
      return [1, 0, 1 - f];
  }
}

/** RGB of the 10 hue values i/10, flattened `[10, 3]`. */
const HUE_RGB = Float32Array.from({ length: 30 }, (_, k) => hueToRgb(Math.floor(k / 3) / 10)[k % 3]);

/** Camera rays of one orientation and where they meet the floor or wall. */
interface View {
  ox: number;
  oy: number;
  oz: number;
  /** Unit ray directions per pixel (row-major, row 0 at the top). */
  dx: Float64Array;
  dy: Float64Array;
  dz: Float64Array;
  /** Ray parameter of the floor/wall hit and which one it is. */
  bgT: Float64Array;
  bgClass: Uint8Array;
}

/** Geometry of one (orientation, shape, scale): surface class and brightness per pixel. */
interface Layer {
  cls: Uint8Array;
  shade: Float32Array;
}

function makeView(azimuth: number): View {
  const ox = CAMERA_DISTANCE * Math.sin(azimuth), oy = CAMERA_HEIGHT, oz = CAMERA_DISTANCE * Math.cos(azimuth);
  // Orthonormal camera basis looking at (0, TARGET_HEIGHT, 0).
  let fx = -ox, fy = TARGET_HEIGHT - oy, fz = -oz;
  const fn = Math.hypot(fx, fy, fz);
  fx /= fn, fy /= fn, fz /= fn;
  // right = forward × up(0, 1, 0)
  let rx = -fz, rz = fx;
  const rn = Math.hypot(rx, rz);
  rx /= rn, rz /= rn;
  // up' = right × forward
  const ux = -rz * fy, uy = rz * fx - rx * fz, uz = rx * fy;
  const dx = new Float64Array(PIXELS), dy = new Float64Array(PIXELS), dz = new Float64Array(PIXELS);
  const bgT = new Float64Array(PIXELS), bgClass = new Uint8Array(PIXELS);
  for (let row = 0; row < SIZE; row++) {
    const v = (1 - (2 * row + 1) / SIZE) * TAN_HALF_FOV;
    for (let col = 0; col < SIZE; col++) {
      const u = ((2 * col + 1) / SIZE - 1) * TAN_HALF_FOV;
      const x = fx + u * rx + v * ux, y = fy + v * uy, z = fz + u * rz + v * uz;
      const n = Math.hypot(x, y, z);
      const p = row * SIZE + col;
      dx[p] = x / n, dy[p] = y / n, dz[p] = z / n;
      // Rays always point towards −z (|azimuth| + half FOV < 90°), so each meets the wall or the floor.
      const tWall = (WALL_Z - oz) / dz[p];
      const tFloor = dy[p] < 0 ? -oy / dy[p] : Infinity;
      bgClass[p] = tFloor < tWall ? FLOOR : WALL;
      bgT[p] = Math.min(tFloor, tWall);
    }
  }
  return { ox, oy, oz, dx, dy, dz, bgT, bgClass };
}

// Normal of the last object hit; module-level so intersection allocates nothing.
let hitNx = 0, hitNy = 0, hitNz = 0;

/** Axis-aligned box [−a, a] × [0, 2a] × [−a, a] (slab method). */
function hitCube(a: number, ox: number, oy: number, oz: number, dx: number, dy: number, dz: number): number {
  let tNear = -Infinity, tFar = Infinity, axis = 0, sign = 0, tmp = 0;
  let t1 = (-a - ox) / dx, t2 = (a - ox) / dx;
  if (t1 > t2) tmp = t1, t1 = t2, t2 = tmp;
  if (t1 > tNear) tNear = t1, axis = 0, sign = dx > 0 ? -1 : 1;
  if (t2 < tFar) tFar = t2;
  t1 = (0 - oy) / dy, t2 = (2 * a - oy) / dy;
  if (t1 > t2) tmp = t1, t1 = t2, t2 = tmp;
  if (t1 > tNear) tNear = t1, axis = 1, sign = dy > 0 ? -1 : 1;
  if (t2 < tFar) tFar = t2;
  t1 = (-a - oz) / dz, t2 = (a - oz) / dz;
  if (t1 > t2) tmp = t1, t1 = t2, t2 = tmp;
  if (t1 > tNear) tNear = t1, axis = 2, sign = dz > 0 ? -1 : 1;
  if (t2 < tFar) tFar = t2;
  if (!(tNear <= tFar) || tNear <= EPS) return Infinity;
  hitNx = axis === 0 ? sign : 0, hitNy = axis === 1 ? sign : 0, hitNz = axis === 2 ? sign : 0;
  return tNear;
}

/** Ball of radius r centred at (0, cy, 0); unit d. */
function hitBall(r: number, cy: number, ox: number, oy: number, oz: number, dx: number, dy: number, dz: number) {
  const py = oy - cy;
  const b = ox * dx + py * dy + oz * dz;
  const disc = b * b - (ox * ox + py * py + oz * oz - r * r);
  if (disc < 0) return Infinity;
  const t = -b - Math.sqrt(disc);
  if (t <= EPS) return Infinity;
  hitNx = (ox + t * dx) / r, hitNy = (py + t * dy) / r, hitNz = (oz + t * dz) / r;
  return t;
}

/** Side of the vertical cylinder x² + z² = r², y0 ≤ y ≤ y1; unit d. */
function hitTube(
  r: number,
  y0: number,
  y1: number,
  ox: number,
  oy: number,
  oz: number,
  dx: number,
  dy: number,
  dz: number,
) {
  const a = dx * dx + dz * dz;
  if (a < 1e-12) return Infinity;
  const b = ox * dx + oz * dz;
  const disc = b * b - a * (ox * ox + oz * oz - r * r);
  if (disc < 0) return Infinity;
  const t = (-b - Math.sqrt(disc)) / a;
  const y = oy + t * dy;
  if (t <= EPS || y < y0 || y > y1) return Infinity;
  hitNx = (ox + t * dx) / r, hitNy = 0, hitNz = (oz + t * dz) / r;
  return t;
}

/** Bounding spheres per shape at scale 1: centre height (half the object's height) and radius. */
const BOUND_Y = [0.5, 0.5, 0.55, 0.65];
const BOUND_R = [Math.sqrt(0.75) + 1e-9, Math.SQRT1_2 + 1e-9, 0.55 + 1e-9, 0.65 + 1e-9];

/**
 * First hit of a ray with the object of the given shape and scale, or
 * Infinity; sets hitN*. Solids are convex unions, so the first hit is the
 * nearest first hit of the parts.
 */
function hitObject(shape: number, s: number, ox: number, oy: number, oz: number, dx: number, dy: number, dz: number) {
  // Bounding-sphere reject first: most camera and shadow rays miss the object.
  const cy = BOUND_Y[shape] * s, r = BOUND_R[shape] * s, py = oy - cy;
  const b = ox * dx + py * dy + oz * dz;
  if (b * b - (ox * ox + py * py + oz * oz - r * r) < 0) return Infinity;
  switch (shape) {
    case 0: // cube of side s
      return hitCube(0.5 * s, ox, oy, oz, dx, dy, dz);
    case 1: { // cylinder: radius 0.5 s, height s; the top cap is a disc
      const r = 0.5 * s, h = s;
      let best = hitTube(r, 0, h, ox, oy, oz, dx, dy, dz);
      const nx = hitNx, nz = hitNz;
      const t = (h - oy) / dy;
      const x = ox + t * dx, z = oz + t * dz;
      if (t > EPS && t < best && x * x + z * z <= r * r) {
        best = t;
        hitNx = 0, hitNy = 1, hitNz = 0;
      } else if (best < Infinity) hitNx = nx, hitNy = 0, hitNz = nz;
      return best;
    }
    case 2: // sphere of diameter 1.1 s resting on the floor
      return hitBall(0.55 * s, 0.55 * s, ox, oy, oz, dx, dy, dz);
    default: { // upright capsule: radius 0.35 s, height 1.3 s
      const r = 0.35 * s, y0 = r, y1 = 1.3 * s - r;
      let best = hitTube(r, y0, y1, ox, oy, oz, dx, dy, dz);
      let nx = hitNx, ny = hitNy, nz = hitNz;
      let t = hitBall(r, y0, ox, oy, oz, dx, dy, dz);
      if (t < best) best = t, nx = hitNx, ny = hitNy, nz = hitNz;
      t = hitBall(r, y1, ox, oy, oz, dx, dy, dz);
      if (t < best) best = t, nx = hitNx, ny = hitNy, nz = hitNz;
      hitNx = nx, hitNy = ny, hitNz = nz;
      return best;
    }
  }
}

/** Ray-casts one (orientation, shape, scale) into surface classes and Lambert brightness. */
function makeLayer(view: View, shape: number, scale: number): Layer {
  const { ox, oy, oz, dx, dy, dz, bgT, bgClass } = view;
  const cls = new Uint8Array(PIXELS), shade = new Float32Array(PIXELS);
  // Floor and wall normals are constant, so is their unshadowed brightness.
  const floorLit = AMBIENT + DIFFUSE * Math.max(0, LY), wallLit = AMBIENT + DIFFUSE * Math.max(0, LZ);
  for (let p = 0; p < PIXELS; p++) {
    const t = hitObject(shape, scale, ox, oy, oz, dx[p], dy[p], dz[p]);
    if (t < bgT[p]) {
      cls[p] = OBJECT;
      shade[p] = AMBIENT + DIFFUSE * Math.max(0, hitNx * LX + hitNy * LY + hitNz * LZ);
      continue;
    }
    const c = bgClass[p];
    const tb = bgT[p];
    // Shadow ray from the floor/wall point, nudged off the surface along its normal.
    const px = ox + tb * dx[p],
      py = oy + tb * dy[p] + (c === FLOOR ? EPS : 0),
      pz = oz + tb * dz[p] + (c === WALL ? EPS : 0);
    const shadowed = hitObject(shape, scale, px, py, pz, LX, LY, LZ) < Infinity;
    cls[p] = c;
    shade[p] = shadowed ? AMBIENT : c === FLOOR ? floorLit : wallLit;
  }
  return { cls, shade };
}

/**
 * A procedural 3dshapes: 480,000 images 64×64×3 over floor_hue (10),
 * wall_hue (10), object_hue (10), scale (8), shape (4: cube, cylinder,
 * sphere, capsule) and orientation (15), with the original's factor values.
 * Camera rays are computed once per orientation and the geometry (surface
 * class and brightness per pixel) once per (orientation, shape, scale), both
 * lazily; an image is then its three hues applied to that geometry.
 */
export function shapes3d(): GroundTruthDataset {
  const space = new FactorSpace(SIZES);
  const views: (View | undefined)[] = new Array(SIZES[5]);
  const layers: (Layer | undefined)[] = new Array(SIZES[5] * SIZES[4] * SIZES[3]);
  const layerOf = (orientation: number, shape: number, scale: number): Layer => {
    const key = (orientation * SIZES[4] + shape) * SIZES[3] + scale;
    let layer = layers[key];
    if (!layer) {
      const view = views[orientation] ??= makeView(AZIMUTHS[orientation]);
      layer = layers[key] = makeLayer(view, shape, SCALES[scale]);
    }
    return layer;
  };
  return {
    name: "shapes3d",
    description: "Procedural stand-in for DeepMind's 3dshapes rendered by a small TypeScript ray caster " +
      "(floor, back wall, one object, Lambert shading and a shadow), same factors and values, not DeepMind's images",
    factorNames: SHAPES3D_FACTORS,
    factorSizes: SIZES,
    imageShape: [SIZE, SIZE, 3],
    categorical: [4],
    sampleFactors: (n: number, rng: Rng): Factors => space.sample(n, rng),
    observations(factors: Factors, _rng: Rng): Observations {
      const { values, n } = factors;
      const k = SIZES.length;
      if (values.length !== n * k) throw new RangeError(`factors hold ${values.length} values, expected ${n}×${k}`);
      const out = new Float32Array(n * PIXELS * 3);
      // Per-image palette indexed by surface class: floor, wall, object RGB.
      const palette = new Float32Array(9);
      for (let i = 0; i < n; i++) {
        const f = values.subarray(i * k, i * k + k);
        for (let j = 0; j < k; j++) {
          if (!(f[j] >= 0 && f[j] < SIZES[j])) {
            throw new RangeError(`image ${i}: factor ${j} = ${f[j]} is outside 0..${SIZES[j] - 1}`);
          }
        }
        for (let c = 0; c < 3; c++) palette.set(HUE_RGB.subarray(f[c] * 3, f[c] * 3 + 3), c * 3);
        const { cls, shade } = layerOf(f[5], f[4], f[3]);
        let o = i * PIXELS * 3;
        for (let p = 0; p < PIXELS; p++) {
          const c = cls[p] * 3, s = shade[p];
          out[o++] = palette[c] * s;
          out[o++] = palette[c + 1] * s;
          out[o++] = palette[c + 2] * s;
        }
      }
      return { values: out, n, shape: [SIZE, SIZE, 3] };
    },
  };
}
