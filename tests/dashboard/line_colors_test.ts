import { assert, assertEquals } from "../assert.ts";
import { ColorRegistry, extraColor, nthColor, PALETTE } from "../../dashboard/ui/line_colors.ts";

const keys = (n: number, prefix = "ica-toy/run") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

Deno.test("ColorRegistry: 20 keys get the 20 palette colours, pairwise distinct, in the order given", () => {
  const registry = new ColorRegistry();
  registry.assign(keys(20));
  const colors = keys(20).map((k) => registry.colorOf(k));
  assertEquals(new Set(colors).size, 20);
  assertEquals(colors, [...PALETTE]);
  assert(colors.every((c) => /^#[0-9a-f]{6}$/.test(c)), colors.join(" "));
});

Deno.test("ColorRegistry: a key keeps its colour when other keys come before or after it", () => {
  const registry = new ColorRegistry();
  registry.assign(["b"]);
  const b = registry.colorOf("b");
  // Keys seen later, listed before and after b, take the next colours and leave b's alone.
  registry.assign(["a", "b", "c"]);
  assertEquals(registry.colorOf("b"), b);
  assertEquals([registry.colorOf("a"), registry.colorOf("c")], [PALETTE[1], PALETTE[2]]);
  registry.assign(keys(30));
  assertEquals([registry.colorOf("b"), registry.colorOf("a"), registry.colorOf("c")], [b, PALETTE[1], PALETTE[2]]);
});

Deno.test("ColorRegistry: the same order gives the same colours in another page", () => {
  const first = new ColorRegistry(), second = new ColorRegistry();
  first.assign(keys(50));
  second.assign(keys(50));
  assertEquals(keys(50).map((k) => first.colorOf(k)), keys(50).map((k) => second.colorOf(k)));
});

Deno.test("past the palette: golden-angle hues at alternating lightness, 200 keys all distinct", () => {
  assertEquals(nthColor(19), PALETTE[19]);
  assertEquals(nthColor(20), extraColor(0));
  // Hue 0° at lightness 0.42, saturation 0.65: channels 0.42 ± 0.65·0.42 = 0.693 and 0.147 → b1 25 25.
  assertEquals(extraColor(0), "#b12525");
  // Hue 137.508° (green) at lightness 0.6: red at its floor 0.6 − 0.26 = 0.34 (87 = 0x57), green at its top
  // 0.86 (219 = 0xdb), blue (k = 8.58) at 0.6 − 0.26·(9 − 8.58) = 0.4906 (125 = 0x7d).
  assertEquals(extraColor(1), "#57db7d");
  const registry = new ColorRegistry();
  registry.assign(keys(200));
  assertEquals(new Set(keys(200).map((k) => registry.colorOf(k))).size, 200);
});
