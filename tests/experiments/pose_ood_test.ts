/**
 * The pose-ood experiment: its claims read the run's keys, a killed run resumes (after its pretraining, inside the
 * pretrained net's pose training) to the numbers of an uninterrupted one, the "cannot be reproduced" list is in the
 * summary, and bad input is refused before anything is written.
 */
import { assert, assertEquals } from "../assert.ts";
import { findExperiment } from "../../experiments/mod.ts";
import { assertRefusesBadInput, killResumeAndStraight, projectPath, summaryOf } from "./cli.ts";

const experiment = findExperiment("pose-ood")!;

const SCRIPT = projectPath("experiments/pose_ood.ts");

Deno.test("pose-ood's claims read the run's keys, each with its margin: within < OOD, the D.9 pattern, pretrained < scratch", () => {
  const claims = findExperiment("pose-ood")!.claims;
  const cfg = { models: ["pretrained", "scratch"] };
  const metrics = {
    "pose/pretrained/within_err": 0.1,
    "pose/pretrained/ood_err": 0.3,
    "pose/scratch/within_err": 0.12,
    "pose/scratch/ood_err": 0.7,
    "bn/identity_gain_within": 0.25,
    "bn/identity_gain_ood": 0.09,
    "bn/gaussian_noise_s3_gain": 0.9,
    "bn/contrast_s5_gain": 0.8,
    "bn/fog_s3_gain": 0.2,
  };
  assertEquals(claims.map((c) => c.holds(metrics, cfg)), [true, true, true]);
  assertEquals(claims.map((c) => c.holds({}, cfg)), [undefined, undefined, undefined]);
  assertEquals(claims[0].holds({ ...metrics, "pose/scratch/within_err": 0.8 }, cfg), false);
  // Only noise and contrast gains must exceed 0.5; the identity gains must keep their order.
  assertEquals(claims[1].holds({ ...metrics, "bn/contrast_s5_gain": 0.4 }, cfg), false);
  assertEquals(claims[1].holds({ ...metrics, "bn/identity_gain_ood": 0.3 }, cfg), false);
  assertEquals(claims[2].holds({ ...metrics, "pose/pretrained/ood_err": 0.8 }, cfg), false);
  // Orders by less than the margins (OOD 20 % above within, identity gains 0.08 apart, pretrained 10 % below).
  assertEquals(claims[0].holds({ ...metrics, "pose/pretrained/ood_err": 0.115 }, cfg), false);
  assertEquals(claims[1].holds({ ...metrics, "bn/identity_gain_ood": 0.2 }, cfg), false);
  assertEquals(claims[2].holds({ ...metrics, "pose/pretrained/ood_err": 0.65 }, cfg), false);
});

Deno.test("a killed pose-ood run resumes inside the pretrained net's training to the numbers of an uninterrupted run", async () => {
  const args = [
    ...["--preset", "smoke", "--pretrain_steps", "10", "--steps", "10", "--scratch_steps", "10"],
    ...["--eval_every", "5", "--checkpoint_every", "5", "--seed", "3"],
  ];
  // Checkpoints are numbered phase · 11 + step: 16 is step 5 of the pretrained pose phase, after the pretraining.
  const { resumed, straight, killedAt } = await killResumeAndStraight(SCRIPT, args, 16);
  assertEquals(killedAt, 16);
  const [a, b] = [summaryOf(resumed), summaryOf(straight)];
  const withoutTime = (m: Record<string, number>) =>
    Object.fromEntries(Object.entries(m).filter(([k]) => !k.includes("wall_time")));
  assertEquals(withoutTime(a.metrics), withoutTime(b.metrics));
  const details = a.details as { cannotReproduce: string[] };
  assert(details.cannotReproduce.some((line) => line.startsWith("Table 5.1")), JSON.stringify(details));
});

Deno.test("pose-ood refuses bad input: a UsageError before any work, exit code 2 on the command line, nothing written", async () => {
  await assertRefusesBadInput(experiment, SCRIPT, [
    [["--models", "imagenet"], "imagenet"],
    [["--models", ""], "models"],
    [["--corruptions", "rain"], "rain"],
    [["--severities", "6"], "severities"],
    [["--fractions", "0"], "(0, 1]"],
    [["--fractions", "1.5"], "fractions"],
    [["--fractions", "1"], "within-domain test frames"],
    [["--train_identities", "6"], "fewer than identities"],
    [["--pck_threshold", "0"], "pck_threshold must be > 0"],
    [["--batch", "0"], "batch"],
  ], ["--preset", "smoke"]);
});
