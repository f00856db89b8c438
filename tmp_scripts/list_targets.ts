import { EXPERIMENTS } from "/work/main/experiments/mod.ts";
let n = 0, c = 0;
for (const e of EXPERIMENTS) {
  console.log(`${e.name}: ${e.targets.length} targets, ${e.claims.length} claims`);
  n += e.targets.length; c += e.claims.length;
}
console.log(n, c);
