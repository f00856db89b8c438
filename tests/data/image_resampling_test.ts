import { assertAlmostEquals, assertEquals } from "../assert.ts";
import type { BorderMode } from "../../lib/data/corruption_ops.ts";
import {
  affineWarp,
  clippedZoom,
  clippedZoomSize,
  pilResize,
  sampleBilinear,
} from "../../lib/data/image_resampling.ts";
import { assertClose, constantImage, REFERENCE, testImage } from "./corruption_reference.ts";

Deno.test("sampleBilinear matches scipy.ndimage.map_coordinates order 1 in each border mode", () => {
  const { img, h, w, c } = testImage("gray");
  const { rows, cols } = REFERENCE.map_coordinates_points;
  for (const ref of REFERENCE.map_coordinates) {
    const out = sampleBilinear(img, h, w, c, rows, cols, ref.mode as BorderMode, ref.cval);
    assertClose(out, ref.values, 1e-6, ref.mode);
  }
});

Deno.test("affineWarp: identity, a whole-pixel shift with fill, and a half-pixel fade at the edge", () => {
  const { img, h, w, c } = testImage("color");
  assertClose(affineWarp(img, h, w, c, [1, 0, 0, 0, 1, 0]), img, 0, "identity");
  // Output (row, col) reads input (row − 2, col + 1).
  const shifted = affineWarp(img, h, w, c, [1, 0, -2, 0, 1, 1], 0.5);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let ch = 0; ch < c; ch++) {
        const inside = y - 2 >= 0 && x + 1 < w;
        const expected = inside ? img[((y - 2) * w + x + 1) * c + ch] : 0.5;
        assertAlmostEquals(shifted[(y * w + x) * c + ch], expected, 1e-7);
      }
    }
  }
  // Half a pixel beyond the left edge: halfway between the edge pixel and the fill (skimage warp's constant mode).
  const faded = affineWarp(constantImage(4, 4, 1, 1), 4, 4, 1, [1, 0, 0, 0, 1, -0.5]);
  assertAlmostEquals(faded[0], 0.5, 1e-7);
  assertAlmostEquals(faded[1], 1, 1e-7);
});

Deno.test("clippedZoom matches imagecorruptions clipped_zoom (scipy zoom order 1), cut top-left", () => {
  for (const ref of REFERENCE.clipped_zoom) {
    const { img, h, w, c } = testImage(ref.image);
    assertClose(clippedZoom(img, h, w, c, ref.factor), ref.values, 1e-6, `${ref.image} zoom ${ref.factor}`);
  }
});

Deno.test("clippedZoom: the untrimmed result holds both the top-left and the centred cut", () => {
  const { img, h, w, c } = testImage("gray");
  const zoom = 1.5;
  const fullH = clippedZoomSize(h, zoom), fullW = clippedZoomSize(w, zoom);
  const full = clippedZoom(img, h, w, c, zoom, { trim: "none" });
  assertEquals(full.length, fullH * fullW * c);
  const centre = clippedZoom(img, h, w, c, zoom, { trim: "center" });
  const top = Math.floor((fullH - h) / 2), left = Math.floor((fullW - w) / 2);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) assertEquals(centre[y * w + x], full[(y + top) * fullW + x + left]);
  }
});

Deno.test("pilResize box matches PIL resize(BOX) on float images", () => {
  for (const ref of REFERENCE.box_resize) {
    const { img, h, w, c } = testImage(ref.image);
    const [outH, outW] = ref.out;
    assertClose(pilResize(img, h, w, c, outH, outW, "box"), ref.values, 1e-6, `${ref.image} → ${outH}×${outW}`);
  }
});

Deno.test("pilResize nearest takes the pixels PIL resize(NEAREST) takes", () => {
  for (const ref of REFERENCE.nearest_resize) {
    const [h, w] = ref.in, [outH, outW] = ref.out;
    const indices = Float32Array.from({ length: h * w }, (_, k) => k);
    assertEquals(
      Array.from(pilResize(indices, h, w, 1, outH, outW, "nearest")),
      ref.source,
      `${h}×${w} → ${outH}×${outW}`,
    );
  }
});
