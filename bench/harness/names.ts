/**
 * The bench's entry names, the groups `--only` times, and what a plain `deno task bench` times.
 *
 * @module
 */

/** Model names, as `--models` lists them. */
export const MODEL_NAMES = [
  "conv-vae-64",
  "conv-vae-32",
  "mlp-vae-64",
  "mnist-cnn",
  "ant-step",
  "conv-encoder-infer",
  "cnn-regressor-32",
  "mlp-regressor-32",
  "abs-inference",
  "abs-cnn-input-grad",
  "splits",
  "r2-scores",
  "tent-step-128",
  "bncnn-train-step-128",
  "prior-forward-n1",
  "source-forward",
  "cebra-offset10-step-512",
  "cebra-offset1-mse-step-512",
  "time-delta-draw-512",
  "delta-draw-512",
  "linear-ensemble-30",
  "synth-mlp-64",
  "dto-500x1024x5",
  "ds-5000",
  "firevnet-dense-196",
  "firevnet-dense-100",
  "firevnet-conv-32",
  "firevnet-inverse-196",
  "firevnet-metamers-196",
  "pose-step",
  "pose-render",
  "conv-vae-64-dp2",
  "conv-vae-32-dp2",
  "mlp-vae-64-dp2",
  "mnist-cnn-dp2",
  "cnn-regressor-32-dp2",
] as const;
/** A model name. */
export type ModelName = typeof MODEL_NAMES[number];

/** Entries timed as one group with `--only <group>`: the speed goals of one study, each in bench/groups/. */
export const BENCH_GROUPS = {
  tta: ["tent-step-128", "bncnn-train-step-128", "prior-forward-n1", "source-forward"],
  cebra: ["cebra-offset10-step-512", "cebra-offset1-mse-step-512", "time-delta-draw-512", "delta-draw-512"],
  "vae-pca": ["linear-ensemble-30", "synth-mlp-64", "dto-500x1024x5", "ds-5000"],
  firevnet: [
    "firevnet-dense-196",
    "firevnet-dense-100",
    "firevnet-conv-32",
    "firevnet-inverse-196",
    "firevnet-metamers-196",
  ],
  pose: ["pose-step", "pose-render"],
  workers: [
    "conv-vae-64-dp2",
    "conv-vae-32-dp2",
    "mlp-vae-64-dp2",
    "mnist-cnn-dp2",
    "cnn-regressor-32-dp2",
  ],
} as const satisfies Record<string, readonly ModelName[]>;
/** A group name. */
export type GroupName = keyof typeof BENCH_GROUPS;
/** The groups, in `BENCH_GROUPS`' order. */
export const GROUP_NAMES = Object.keys(BENCH_GROUPS) as GroupName[];

/**
 * What a plain `deno task bench` times: every model but `ant-step`, which `--corruptions` or `--models` adds, and
 * the groups' entries, which `--only` or `--models` adds.
 */
export const DEFAULT_MODELS: ModelName[] = MODEL_NAMES.filter((name) =>
  name !== "ant-step" && !Object.values(BENCH_GROUPS).some((group) => (group as readonly string[]).includes(name))
);
