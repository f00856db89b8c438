/**
 * `deno task bench`: training-step times of the toolkit's reference models
 * per TF.js backend, paired round by round with PyTorch on the same number
 * of CPU threads when a python3 with torch is found.
 *
 * Models: the disentanglement_lib conv VAE at 64×64 and 32×32 and its MLP
 * VAE at 64×64 (batch 64, Adam, the β-VAE loss training uses), a small
 * MNIST CNN (batch 128), the conv encoder's inference (batch 256), and the
 * generalization benchmark's CNN and MLP regressors on 32×32×1 images with 5
 * factors (batch 64, one Adam 5e-4 step of the MSE, lib/models/regressors.ts).
 * Each side reports its parameter count; a mismatch is printed, since it
 * means the two networks differ.
 *
 * ABS entries (Schott et al. 2019, App. A.7), each with an absolute goal per
 * call and a ceiling on the paired ratio: `abs-inference` is one
 * `Abs.logits` call on 30 digits (ten class decoders, 1,000 prototypes, 5
 * Adam steps; goal ≤ 1 s per call, the issue's target, and ≤ 2× PyTorch);
 * `abs-cnn-input-grad` is the input gradient of the cross-entropy through the
 * App. A.7 CNN at batch 100, the step every gradient attack repeats. Both
 * sides run the same weights (ours, untrained, handed over as .npy), and
 * their results are compared once before timing; a mismatch fails the entry.
 *
 * Data-path entries, timed once whatever the backend (plain JS) beside NumPy
 * in the same worker (bench/numpy_reference.py), each with an absolute goal:
 * `splits` builds dSprites' four benchmark splits afresh per step (goal ≤ 1 s),
 * `r2-scores` scores 500,000 × 5 float32 predictions against dSprites grid
 * points (goal ≤ 50 ms). Both sides' results are compared before timing (train
 * counts, and index sums where the split is deterministic; R² to 1e-9
 * relative); a mismatch fails the entry and the bench exits 1.
 *
 * `ant-step` (issue 19, Speed): one step of adversarial noise training of the small MNIST CNN at batch 128,
 * an Adam step of the noise generator (lib/train/noise_training.ts `antGeneratorStep`, ε 10) and an Adam step of
 * the classifier on the ANT batch (`antClassifierBatch` after epoch 0: 30% current generator, two 10% slices
 * from saved generators, 50% clean), paired round by round with a plain smallCnn Adam step (as `mnist-cnn`) in
 * the same process; goal: the ratio of their medians ≤ 3. It is not in the default model list, so a plain
 * `deno task bench` times what it always did; `--models ant-step` or `--corruptions` adds it.
 *
 * The `tta` group (issue 20, Speed; `--only tta`, or by name with `--models`) times lib/models/bn_cnn.ts `bnCnn({norm:
 * "batch"})` on uniform-pixel digits, each entry beside the same network in bench/torch_reference.py on our weights,
 * whose first results are compared with ours before timing: `tent-step-128` is one Tent step at batch 128
 * (lib/adapt/self_learning.ts `adaptStep` with `entropy` on the "affine" parameters: BN on the batch's own
 * statistics, gradients on γ, β only, SGD 1e-3 momentum 0.9), paired round by round with PyTorch's Tent step
 * (DequanWang/tent) and with a plain training step of a second bnCnn (`bncnn-train-step-128`: `trainLogits`,
 * cross-entropy, every parameter, the same SGD) in the same process; goals: ≤ 1.2× the training step and ≤ 2.5×
 * PyTorch, each on the median paired ratio. `prior-forward-n1` is a forward of 256 digits in prior mode (N 16, n 1:
 * every image on its own statistics mixed with the source's, one pass) beside PyTorch's BayesianBatchNorm
 * (bethgelab/robustness `robusta/batchnorm/bn.py`, the runs of n normalised in one pass too) and paired with a
 * source-mode forward of the same model and digits (`source-forward`); goal: its throughput ≥ 0.7× the source
 * forward's, on the median paired ratio. `bncnn-train-step-128` and `source-forward` are also timed alone beside
 * PyTorch.
 *
 * The `cebra` group (issue 21, Speed; `--only cebra`) times CEBRA training steps at batch {@linkcode CEBRA_BATCH}
 * (lib/models/cebra_models.ts, lib/contrastive/infonce.ts), each beside bench/cebra_reference.py, the package's
 * encoder, criterion and solver step in PyTorch on our initial weights and the same windows: `cebra-offset10-step-512`
 * (offset10-model, 120 inputs, H 32, E 3, cosine InfoNCE τ 1, Adam 3e-4) and `cebra-offset1-mse-step-512`
 * (offset1-model-mse, 100 inputs, E 2, euclidean τ 1, Adam 1e-4). A step gathers the reference, positive and
 * negative windows of a fixed index batch from the data tensor (as training does; ours embeds the three in one
 * forward, the package in three), computes the loss, takes an Adam step and reads the loss back; the first two
 * steps' losses and the reference windows' embeddings are compared with PyTorch's before timing. Goal: ≤ 2×
 * PyTorch on the median paired ratio. The sampler draws are plain JS, ours only (no reference): `time-delta-draw-512`
 * is one lib/contrastive/samplers.ts `timeDeltaSampler` draw of 512 over {@linkcode CEBRA_LABEL_ROWS} 3-D labels
 * (goal ≤ 2 ms), `delta-draw-512` one `deltaSampler` draw (δ 0.1) over the same labels. cl-ica's step is not timed:
 * its encoder lives in experiments/cl_ica.ts, not in lib/.
 *
 * The `vae-pca` group (issue 22, Speed; `--only vae-pca`) times the ensembles and scores of the VAE-PCA study, each
 * beside bench/vae_pca_reference.py on the same data. `linear-ensemble-30` and `synth-mlp-64` are one Adam step of
 * lib/models/ensemble.ts `EnsembleVae` (kind "vae", input 3, latents 2, squared loss, batch
 * {@linkcode ENSEMBLE_BATCH} per member) as lib/train/ensemble_training.ts takes it: every member draws its batch
 * of rows and its posterior noise from streams of its own, the summed loss, Adam, the loss read back; the linear
 * one has 30 members with no hidden layer (β 1e-2; Adam 1e-3, the rate of experiments/vae_pca.ts's linear models),
 * the other 9 members with tanh layers 64, 64 (β 1e-2, Adam 3e-3: vae-manipulation's synth ensemble). The reference is the same
 * batched model in PyTorch (torch.baddbmm per layer) on our initial weights and training rows; the encoder means of
 * a fixed batch and the first two steps' losses on it are compared before timing. Goals: ≤
 * {@linkcode LINEAR_ENSEMBLE_GOAL_MS} and ≤ {@linkcode SYNTH_MLP_GOAL_MS} ms per step. `dto-500x1024x5` is
 * lib/metrics/dto.ts `distanceToOrthogonality` on a fixed random float32 Jacobian [500, 1024, 5] beside NumPy's
 * batched eigh of JᵀJ and SciPy's linear_sum_assignment per sample (goal ≤ 1 s); `ds-5000` is
 * lib/metrics/disentanglement_score.ts `disentanglementScore` on 5,000 rows, 2 latents (a noisy rotation of 2
 * uniform regression factors) beside scikit-learn's KNeighborsRegressor per (factor, latent) pair (goal ≤ 0.5 s).
 * Both are plain JS, timed once whatever the backend, and their results are compared with the reference's. These
 * entries raise the warm-up and the steps per round (`Workload.minimum`; the report records the counts used): a
 * millisecond step runs tens of times slower until V8 has compiled its path.
 *
 * The `firevnet` group (issue 23, Speed; `--only firevnet`) times the fully invertible classifiers of
 * lib/models/firevnet.ts. Three training steps (forward, mean softmax cross-entropy of the logits z_s, backward, the
 * optimizer's step, the loss read back), each beside the same network in PyTorch (bench/firevnet_reference.py) on
 * our weights, permutations and inputs, whose z_s and z_n before any step and first two losses are compared with
 * ours before timing: `firevnet-dense-196` (`DenseFiRevNet` d 196, 10 classes, 8 blocks, h 128, Adamax 1e-3, batch
 * {@linkcode FIREVNET_196_BATCH}, uniform pixels; goal ≤ {@linkcode FIREVNET_196_GOAL_MS} ms), `firevnet-dense-100`
 * (d 100, 2 classes, 4 blocks, h 128, Adam 1e-3, batch {@linkcode FIREVNET_100_BATCH} sphere points; goal ≤
 * {@linkcode FIREVNET_100_GOAL_MS} ms) and `firevnet-conv-32` (`ConvFiRevNet` side 32, 2 levels × 4 steps, 64
 * filters, dropout 0.1, BatchNorm logits, Adamax 1e-3, batch {@linkcode FIREVNET_CONV_BATCH}; no time goal; also
 * timed on WebGPU when a GPU adapter is found, and the report says why not otherwise). The zero-initialised weights
 * get small random values first, so the checks compare more than permutations. PyTorch permutes the dense net's
 * coordinates by indexing, as torch code does; ours multiplies by 0/1 matrices (gather has no gradient on wasm), a
 * cost the ratios include. Ours only: `firevnet-inverse-196`,
 * the inverse of 128 rows at d 196 paired round by round with the forward of the same rows (goal: the ratio of
 * their medians ≤ {@linkcode FIREVNET_INVERSE_RATIO_GOAL}; check: the round trip), and `firevnet-metamers-196`,
 * `metamers` of {@linkcode FIREVNET_METAMER_PAIRS} pairs at d 196 (goal ≥ {@linkcode FIREVNET_METAMERS_GOAL_PER_S}
 * images/s; check: the metamers' z_s and z_n against their sources'). The dense steps and the inverse raise the
 * warm-up and the steps per round (`Workload.minimum`), as the `vae-pca` group's short steps do.
 *
 * The `workers` group (issue 25, Targets; `--only workers`) times the data-parallel β-VAE step of lib/train/vae.ts
 * on {@linkcode DATA_PARALLEL_SHARDS} shards (the main thread and one Deno worker, `DataParallel`): each entry is
 * paired round by round with PyTorch's one-thread step of the same network (goals
 * {@linkcode DATA_PARALLEL_TORCH_GOALS}), with the 1-worker step in this process, whose throughput over the entry's
 * is the scaling (goal ≥ {@linkcode DATA_PARALLEL_SCALING_GOAL}, 80% efficiency), and with PyTorch's step on
 * {@linkcode DATA_PARALLEL_SHARDS} threads in a second worker process (same script and environment, only the thread
 * count differs; `reference_threads`): the ratios ours / PyTorch-N and 1-worker / PyTorch-N are reported, with no
 * goal. The four sides alternate ABCD DCBA. Each round also records `DataParallel`'s communication share (the part of
 * its `gradients()` time the main thread spends outside its own shard: copying variables and shards out, waiting for
 * the worker, summing gradients).
 *
 * The `pose` group (issue 24, 001_6f3482ea4494d2ce.md §2.4, Speed; `--only pose`) times the DeepLabCut-style
 * keypoint network of lib/models/pose_net.ts and the frames it trains on. `pose-step` is one training step of
 * `PoseNet` ({@linkcode POSE_KEYPOINTS} keypoints, {@linkcode POSE_CONVS_PER_STAGE} convolutions per stage, no
 * classification heads) at batch {@linkcode POSE_STEP_BATCH} on 64×64×3 quadruped frames (lib/data/quadruped.ts): a
 * train-mode forward (BatchNorm on the batch, running statistics moved), DeepLabCut's loss (lib/train/pose_loss.ts
 * `poseLoss`: sigmoid cross-entropy of the score maps plus 0.05 × the masked Huber loss of locref, on the frames'
 * `poseTargets`), backward, Adam 1e-3, the loss read back; beside the same network and loss in PyTorch
 * (bench/pose_reference.py) on our weights, running statistics, frames and targets, whose eval-mode scores and
 * locref before any step and first two losses are compared with ours before timing. Goal: ≤
 * {@linkcode POSE_TORCH_RATIO_GOAL}× PyTorch on the median paired ratio. `pose-render` is plain JS, ours only:
 * lib/data/quadruped.ts `renderFrames` of {@linkcode POSE_RENDER_FRAMES} frames (every identity, distinct frames) on
 * one core; goal ≥ {@linkcode POSE_RENDER_GOAL_PER_S} frames/s; check: the keypoints inside the frame and every
 * normalising unit positive. Both raise the warm-up and steps per round (`Workload.minimum`).
 *
 * `--corruptions` (issue 19, Speed) adds a section: images/s of each of the 15 MNIST-C corruptions
 * (lib/data/mnist_c.ts) and of the 15 common ones with table `cifar` at severity 3 (lib/data/corruptions.ts) on
 * real digits (lib/data/mnist.ts `loadMnist`, 1,000 by default), each paired round by round (one pass over the
 * digits per side per round, ABBA) with its NumPy/SciPy/PIL reference (bench/corruptions_reference.py, image by
 * image as the reference code runs; it is served by the worker below, in the same process and environment as
 * the other NumPy entries), the median of the per-round ratios ours images/s ÷ NumPy's with its spread, and the
 * load; goal: ≥ 0.5. Both sides' mean |corrupted − clean| is compared as a sanity check (the draws differ). Then
 * the 15 MNIST-C corruptions of 10,000 digits are timed once, ours only; goal ≤ 60 s in all.
 *
 * Fairness: PyTorch runs in one persistent worker (bench/torch_reference.py),
 * so its start-up is never timed. Its environment drops the OpenBLAS
 * overrides of ours (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE), which pin a core
 * type and cache size that need not fit this CPU (3–4× slower sgemm here),
 * and tells glibc to keep freed memory: by default glibc returns each step's
 * large tensors to the OS and page-faults them back in on the next step,
 * which costs PyTorch up to 10× on the 64×64 models, while the wasm heap is
 * kept for the process's life. The worker reports the BLAS it loaded and its
 * page faults. Rounds alternate the two sides (ABBA order, cancelling linear
 * drift in machine load); the ratio per model is the median of the per-round
 * ratios, with its spread, beside the load average.
 *
 * usage: deno task bench [--backend auto|wasm|cpu|webgpu|all] [--models a,b] [--rounds N]
 *        [--steps N] [--warmup N] [--threads N] [--torch auto|off] [--torch_env clean|inherit]
 *        [--torch_malloc keep|default] [--profile] [--corruptions] [--corruption_images N]
 *        [--mnist_c_images N] [--only tta,cebra,vae-pca,firevnet,pose,workers] [--json path] [--write-readme]
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { version_wasm } from "@tensorflow/tfjs-backend-wasm";
import { cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { selectBackend } from "../lib/core/backend.ts";
import { exitWithUsageError, parseCommandLine } from "../lib/core/cli.ts";
import { choice, choices, flag, integer, resolveConfig } from "../lib/core/config.ts";
import { UsageError } from "../lib/core/errors.ts";
import { Rng } from "../lib/core/rng.ts";
import { convEncoder, vaeNetworks } from "../lib/models/dislib_vae.ts";
import {
  cnnRegressor,
  mlpRegressor,
  regressionStep,
  type Regressor,
  type RegressorOptions,
} from "../lib/models/regressors.ts";
import { type Classifier, smallCnn } from "../lib/models/small_cnn.ts";
import { type BnCnn, bnCnn, type NormMode, priorWeight } from "../lib/models/bn_cnn.ts";
import { type CebraArchitecture, cebraModel } from "../lib/models/cebra_models.ts";
import { type Distance, infoNce } from "../lib/contrastive/infonce.ts";
import { deltaSampler, timeDeltaSampler, timeSampler } from "../lib/contrastive/samplers.ts";
import { EnsembleVae } from "../lib/models/ensemble.ts";
import { ConvFiRevNet, DenseFiRevNet, firevnetMnistInput, metamers } from "../lib/models/firevnet.ts";
import { Mlp } from "../lib/models/mlp.ts";
import { POSE_NET_SIDE, PoseNet } from "../lib/models/pose_net.ts";
import { POSE_TARGETS_64, poseLoss, poseTargets } from "../lib/train/pose_loss.ts";
import { IDENTITY_COUNT, KEYPOINTS, QUADRUPED_SIDE } from "../lib/data/quadruped.ts";
import { renderFrames } from "../lib/data/quadruped_render.ts";
import { Params } from "../lib/models/params.ts";
import { sampleSpheres } from "../lib/data/spheres.ts";
import { distanceToOrthogonality } from "../lib/metrics/dto.ts";
import { disentanglementScore } from "../lib/metrics/disentanglement_score.ts";
import { adaptedParams, adaptStep, entropy } from "../lib/adapt/self_learning.ts";
import { Abs, classVae } from "../lib/models/abs.ts";
import { absCnn, absCnnModel } from "../lib/models/abs_cnn.ts";
import { crossEntropy, lossGradient } from "../lib/attacks/attack.ts";
import { posterior } from "../lib/models/vae.ts";
import { vaeLoss } from "../lib/train/vae_objectives.ts";
import { VAE_CONFIG, vaeReplica } from "../lib/train/vae.ts";
import { DataParallel } from "../lib/train/data_parallel.ts";
import { sampleBatch } from "../lib/data/ground_truth.ts";
import { formatNpy } from "../lib/core/npy.ts";
import { DSPRITES_SIZES } from "../lib/data/dsprites.ts";
import { DATASET_NAMES, loadDataset } from "../lib/data/registry.ts";
import { makeSplit, type Split, SPLIT_NAMES } from "../lib/data/splits.ts";
import { r2Scores } from "../lib/metrics/r2.ts";
import { COMMON_CORRUPTIONS, corrupt } from "../lib/data/corruptions.ts";
import { MNIST_C_CORRUPTIONS, mnistC } from "../lib/data/mnist_c.ts";
import { loadMnist, MNIST_TEST_TOTAL } from "../lib/data/mnist.ts";
import type { Observations } from "../lib/data/ground_truth.ts";
import type { Matrix } from "../lib/core/matrix.ts";
import {
  antClassifierBatch,
  antGeneratorStep,
  createAnt,
  disposeAnt,
  saveGeneratorState,
} from "../lib/train/noise_training.ts";
import { README_PATH, speedSection, writeSpeedTable } from "./readme_table.ts";

/** Model names, in the order they are timed. */
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
] as const;
/** A model name. */
export type ModelName = typeof MODEL_NAMES[number];

/** Entries timed as one group with `--only <group>`: the speed goals of one issue. */
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
  workers: ["conv-vae-64-dp2", "conv-vae-32-dp2", "mlp-vae-64-dp2"],
} as const satisfies Record<string, readonly ModelName[]>;
/** A group name. */
export type GroupName = keyof typeof BENCH_GROUPS;
const GROUP_NAMES = Object.keys(BENCH_GROUPS) as GroupName[];

/**
 * What a plain `deno task bench` times: every model but `ant-step`, which `--corruptions` or `--models` adds, and
 * the groups' entries, which `--only` or `--models` adds.
 */
export const DEFAULT_MODELS: ModelName[] = MODEL_NAMES.filter((name) =>
  name !== "ant-step" && !Object.values(BENCH_GROUPS).some((group) => (group as readonly string[]).includes(name))
);

/** Ceiling on an ANT step's median over a plain smallCnn step's (issue 19, Speed). */
export const ANT_STEP_RATIO_GOAL = 3;

/** Floor on the median paired ratio ours images/s ÷ NumPy's per corruption (issue 19, Speed). */
export const CORRUPTION_SPEED_GOAL = 0.5;

/** Ceiling in seconds on the 15 MNIST-C corruptions of 10,000 digits, ours (issue 19, Speed). */
export const MNIST_C_SECONDS_GOAL = 60;

/** Images per Tent step and training step of the `tta` group (the issue's batch). */
export const TTA_STEP_BATCH = 128;
/** Images per forward of `prior-forward-n1` and `source-forward`. */
export const TTA_FORWARD_BATCH = 256;
/** SGD learning rate and momentum of the `tta` steps, both sides (Tent's optimizer; lr from the issue's grid). */
export const TTA_SGD = { lr: 1e-3, momentum: 0.9 };
/** The prior mode of `prior-forward-n1`: each image on its own statistics (n 1), N 16 (the issue's best N for n 1). */
export const TTA_PRIOR_MODE: NormMode = { kind: "prior", N: 16, n: 1 };
/** Ceiling on a Tent step over a bnCnn training step, median paired ratio (issue 20, Speed). */
export const TENT_STEP_RATIO_GOAL = 1.2;
/** Ceiling on a Tent step over PyTorch's, median paired ratio (issue 20, Speed). */
export const TENT_TORCH_RATIO_GOAL = 2.5;
/** Floor on the prior-mode forward's throughput over the source-mode forward's, median paired ratio (issue 20). */
export const PRIOR_THROUGHPUT_GOAL = 0.7;

/** Reference, positive and negative windows per step, and indices per sampler draw, of the `cebra` group. */
export const CEBRA_BATCH = 512;
/** Rows of the `cebra` steps' data and of the sampler entries' labels (about a place-cell rat's 25 ms bins). */
export const CEBRA_LABEL_ROWS = 10_000;
/** Ceiling on a CEBRA step over PyTorch's, median paired ratio (issue 21, Speed). */
export const CEBRA_TORCH_RATIO_GOAL = 2;
/** Ceiling in ms on a time_delta draw of 512 over 10,000 3-D labels (issue 21, Speed). */
export const TIME_DELTA_DRAW_GOAL_MS = 2;

/** Observations per member per step of the `vae-pca` group's ensembles (the experiments' batch). */
export const ENSEMBLE_BATCH = 100;
/** Training rows per member the ensembles' batches are drawn from. */
export const ENSEMBLE_ROWS = 1000;
/** Ceiling in ms on an Adam step of the 30 linear VAEs (issue 22, Speed). */
export const LINEAR_ENSEMBLE_GOAL_MS = 6;
/** Ceiling in ms on an Adam step of the 9 tanh 64-64 VAEs (issue 22, Speed). */
export const SYNTH_MLP_GOAL_MS = 15;
/** Jacobians, outputs and latents of `dto-500x1024x5`. */
export const DTO_SHAPE = [500, 1024, 5] as const;
/** Ceiling in ms on DtO of {@linkcode DTO_SHAPE} (issue 22, Speed). */
export const DTO_GOAL_MS = 1000;
/** Rows of `ds-5000` (2 latents, 2 regression factors). */
export const DS_ROWS = 5000;
/** Ceiling in ms on DS of {@linkcode DS_ROWS} rows (issue 22, Speed). */
export const DS_GOAL_MS = 500;

/** Images per training step of `firevnet-dense-196`, and per forward and inverse of `firevnet-inverse-196`. */
export const FIREVNET_196_BATCH = 128;
/** Ceiling in ms on a training step of the dense fiRevNet at d 196, batch 128, on wasm (issue 23, Speed). */
export const FIREVNET_196_GOAL_MS = 200;
/** Points per training step of `firevnet-dense-100` (the spheres' quick batch). */
export const FIREVNET_100_BATCH = 256;
/** Ceiling in ms on a training step of the dense fiRevNet at d 100, batch 256, on wasm (issue 23, Speed). */
export const FIREVNET_100_GOAL_MS = 130;
/** Images per training step of `firevnet-conv-32`. */
export const FIREVNET_CONV_BATCH = 32;
/** Ceiling on the median inverse over the median forward of the dense fiRevNet at d 196 (issue 23, Speed). */
export const FIREVNET_INVERSE_RATIO_GOAL = 1.2;
/** Metamer pairs per call of `firevnet-metamers-196`. */
export const FIREVNET_METAMER_PAIRS = 2000;
/** Floor on metamers per second of the dense fiRevNet at d 196 (issue 23, Speed). */
export const FIREVNET_METAMERS_GOAL_PER_S = 2000;

/** Frames per training step of `pose-step` (the pose experiment's batch, the paper's 8). */
export const POSE_STEP_BATCH = 8;
/** Keypoints of `pose-step`: the quadruped's nose, eye, withers, tail base and four hooves. */
export const POSE_KEYPOINTS = KEYPOINTS.length;
/** Convolutions per backbone stage of `pose-step` (PoseNet's default). */
export const POSE_CONVS_PER_STAGE = 2;
/** Adam rate of `pose-step` (the pose experiment's). */
export const POSE_LR = 1e-3;
/** Ceiling on a pose-net step over PyTorch's, median paired ratio (issue 24, Speed). */
export const POSE_TORCH_RATIO_GOAL = 2;
/** Frames per `renderFrames` call of `pose-render`. */
export const POSE_RENDER_FRAMES = 240;
/** Floor on quadruped frames rendered per second on one core (issue 24, Speed). */
export const POSE_RENDER_GOAL_PER_S = 2000;

/** Shards of a `workers`-group step: the main thread and one Deno worker, the two cores of this machine. */
export const DATA_PARALLEL_SHARDS = 2;
/** Ceilings on a 2-worker VAE step over PyTorch's on one thread, median paired ratio (issue 25, Targets). */
export const DATA_PARALLEL_TORCH_GOALS = { "conv-vae-64-dp2": 1.0, "conv-vae-32-dp2": 1.3, "mlp-vae-64-dp2": 1.5 };
/** Floor on 2-worker over 1-worker throughput: 80% scaling efficiency (issue 25, Targets). */
export const DATA_PARALLEL_SCALING_GOAL = 1.6;

/** Severity of the `cifar` corruptions timed by `--corruptions`. */
export const CORRUPTION_SEVERITY = 3;

/** OpenBLAS overrides removed from the reference's environment under `--torch_env clean`. */
export const BLAS_OVERRIDES = ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"] as const;

/** Train points of dSprites' benchmark splits (Paper B Tables 2–4), which both sides of `splits` must build. */
export const DSPRITES_TRAIN_COUNTS = {
  random: 239_985,
  composition: 192_312,
  interpolation: 240_000,
  extrapolation: 240_000,
};

/** Rows of the `r2-scores` entry. */
export const R2_ROWS = 500_000;

/** glibc settings of the reference under `--torch_malloc keep`: no mmap per large tensor, no trimming of the heap. */
export const MALLOC_KEEP = { MALLOC_MMAP_THRESHOLD_: String(2 ** 32), MALLOC_TRIM_THRESHOLD_: String(2 ** 32) };

const OPTIONS = {
  backend: choice("auto", ["auto", "wasm", "cpu", "webgpu", "all"], "backends to time; all = every one available"),
  models: choices(DEFAULT_MODELS, MODEL_NAMES, "models to time (ant-step only when named or with --corruptions)"),
  rounds: integer(8, "paired rounds per model (tfjs and PyTorch alternate, ABBA)", { min: 1 }),
  steps: integer(3, "timed steps per side per round; a round's time is their median", { min: 1 }),
  warmup: integer(2, "untimed steps per side before the first round", { min: 0 }),
  threads: integer(1, "PyTorch threads (the wasm backend runs on one)", { min: 1 }),
  torch: choice("auto", ["auto", "off"], "run the PyTorch reference when a python3 has torch"),
  torch_env: choice("clean", ["clean", "inherit"], "clean: the reference runs without our OpenBLAS overrides"),
  torch_malloc: choice("keep", ["keep", "default"], "keep: glibc keeps the reference's freed memory, as the wasm heap"),
  profile: flag(false, "per-kernel times and GFLOP/s of one conv VAE 64×64 step"),
  corruptions: flag(false, "images/s per corruption beside NumPy, MNIST-C on 10,000 digits, and ant-step"),
  corruption_images: integer(1000, "real digits each corruption is timed on per round", { min: 1, max: 9999 }),
  mnist_c_images: integer(10_000, "digits the 15 MNIST-C corruptions are timed on once, ours; 0 skips", {
    min: 0,
    max: 10_000,
  }),
  only: choices([], GROUP_NAMES, "time only these groups' entries instead of --models, and no dataset throughput"),
};

/** Summary of a sample: median, quartiles and range. */
export interface Spread {
  median: number;
  q1: number;
  q3: number;
  min: number;
  max: number;
}

/** One paired round: each side's median step time in it, and their ratio (the other side: a `baseline` step if any). */
export interface Round {
  ours_ms: number;
  reference_ms: number | null;
  ratio: number | null;
  /** An entry with a baseline step of ours: its median step in the round and ours_ms over it. */
  baseline_ms?: number;
  baseline_ratio?: number;
  /**
   * An entry paired with PyTorch on N threads too (`workers` group): its median step in the round, ours_ms over it
   * and baseline_ms over it.
   */
  reference_threads_ms?: number;
  reference_threads_ratio?: number;
  baseline_reference_threads_ratio?: number;
  /** A data-parallel entry: `DataParallel`'s communication share over the round's timed steps of ours. */
  communication_share?: number;
}

/** One model on one backend. */
export interface ModelResult {
  model: ModelName;
  backend: string;
  /** Images per step. */
  batch: number;
  /** Trainable scalars of our network and of the reference's (null without one); equal when both build the same network. */
  parameters: number;
  reference_parameters: number | null;
  /** Over every timed step of every round. */
  ms_per_step: Spread;
  reference_ms_per_step: Spread | null;
  /** Minor page faults of the reference per timed step (near 0 when its allocator keeps memory). */
  reference_page_faults_per_step: number | null;
  /** Of the per-round ratios tfjs ms / PyTorch ms; null without a reference. */
  ratio: Spread | null;
  rounds: Round[];
  /** 1-minute load average just before and just after this model's rounds. */
  load_before: number;
  load_after: number;
  peak_rss_mb: number;
  /**
   * Warm-up steps per side and timed steps per side per round where the entry raised `config`'s (millisecond
   * steps, whose first few dozen run before V8 has compiled them and whose per-round median needs more than 3
   * steps); absent where `config`'s counts applied.
   */
  warmup_steps?: number;
  steps_per_round?: number;
  /**
   * The reference's library; absent (older reports): torch; none: timed against a baseline of ours (`baseline`) or
   * ours alone (the `cebra` group's sampler draws).
   */
  reference_library?: "torch" | "numpy" | "none";
  /**
   * The entry's absolute goal per step and whether the median step meets it (data-path and ABS
   * entries; absent where the goal is a ratio only); `ratio`: the ceiling on the median paired ratio
   * to the reference, `ratio_met` null without a reference. A throughput goal (`firevnet-metamers-196`) gives
   * its floor `images_per_s` and the images/s of the median step, `measured_images_per_s`; `ms` is then the
   * floor as a ceiling on the step (batch / floor), which `met` judges.
   */
  goal?: {
    ms?: number;
    met?: boolean;
    ratio?: number;
    ratio_met?: boolean | null;
    images_per_s?: number;
    measured_images_per_s?: number;
    source?: string;
  };
  /** Agreement of the two sides' results (data-path and ABS entries); `ok` false fails the entry. */
  check?: { ok: boolean; detail: string };
  /**
   * An entry timed against a step of ours (`ant-step` against a smallCnn step, the Tent step against a training
   * step, the prior forward against the source forward), round by round, the order alternating.
   */
  baseline?: BaselineComparison;
  /** The `workers` group's entries: PyTorch on N threads in the same rounds; null elsewhere, absent in older reports. */
  reference_threads?: ThreadsComparison | null;
  /**
   * The `workers` group's entries: over the rounds, `DataParallel`'s communication share, the part of its
   * `gradients()` time the main thread spent outside its own shard; null elsewhere, absent in older reports.
   */
  communication_share?: Spread | null;
}

/** An entry's times against PyTorch on N threads (reported, with no goal: the issue's goals are on one thread). */
export interface ThreadsComparison {
  /** The threads PyTorch reported it runs on ({@linkcode DATA_PARALLEL_SHARDS} asked). */
  threads: number;
  ms_per_step: Spread;
  page_faults_per_step: number;
  /** Of the per-round ratios entry ms / PyTorch-N ms. */
  ratio: Spread;
  /** Of the per-round ratios baseline ms / PyTorch-N ms (the 1-worker step); null without a baseline step. */
  baseline_ratio: Spread | null;
}

/**
 * Steps of ours timed only as another entry's baseline: the dense fiRevNet's forward (d 196, batch 128, z_s and z_n
 * read back) under `firevnet-inverse-196`.
 */
export type BaselineStepName = "firevnet-forward-196";

/** An entry's times against a baseline step of ours, with the goal on the ratio of their medians. */
export interface BaselineComparison {
  /** The model whose step is the baseline, or a step timed only as a baseline. */
  model: ModelName | BaselineStepName;
  ms_per_step: Spread;
  /** Of the per-round ratios entry ms / baseline ms. */
  paired_ratio: Spread;
  /** Median entry step over median baseline step. */
  ratio_of_medians: number;
  /** The ceiling on the judged ratio (`judged_on`) and whether it is met. */
  ceiling: number;
  met: boolean;
  source: string;
  /** Which ratio the goal judges; absent (older reports): `ratio_of_medians`. */
  judged_on?: "ratio_of_medians" | "paired_ratio";
  /**
   * A goal on throughput: of the per-round ratios baseline ms / entry ms (the entry's images/s over the baseline's),
   * the floor on their median (1 / `ceiling`), which then decides `met`.
   */
  throughput_ratio?: Spread;
  throughput_floor?: number;
}

/** One corruption timed beside its NumPy reference (`--corruptions`). */
export interface CorruptionResult {
  suite: "mnist_c" | "cifar";
  name: string;
  /** {@linkcode CORRUPTION_SEVERITY} for `cifar`; null for MNIST-C, which uses each function's default severity. */
  severity: number | null;
  /** Digits corrupted per pass. */
  images: number;
  /** Images/s of each side over the rounds (one pass each per round). */
  images_per_s: Spread;
  reference_images_per_s: Spread | null;
  /** Of the per-round ratios ours images/s ÷ NumPy's (NumPy ms / ours ms); null without a reference. */
  speed_ratio: Spread | null;
  /** Ours ms, NumPy ms per pass and ours/NumPy ms, per round. */
  rounds: Round[];
  /** Median `speed_ratio` ≥ {@linkcode CORRUPTION_SPEED_GOAL}; null without a reference. */
  goal_met: boolean | null;
  /** Mean |corrupted − clean| in [0, 1] units of one pass on each side (the draws differ, so close, not equal). */
  check: { ok: boolean; detail: string; ours: number; reference: number | null };
  /** What the reference runs where the reference code calls skimage, cv2 or ImageMagick; null when it runs as is. */
  reference_substitute: string | null;
  load_before: number;
  load_after: number;
}

/** The `--corruptions` section. */
export interface CorruptionSection {
  /** Where the digits come from. */
  digits: string;
  images: number;
  rounds: number;
  warmup: number;
  table: "cifar";
  severity: number;
  speed_goal: number;
  results: CorruptionResult[];
  /** The 15 MNIST-C corruptions of `images` digits, ours, timed once; null when skipped. */
  mnist_c_all: {
    images: number;
    seconds: number;
    goal_s: number;
    met: boolean | null;
    per_corruption_s: Record<string, number>;
    load_before: number;
    load_after: number;
  } | null;
}

/** NumPy in the reference worker: its version and the BLAS its core module links. */
export interface NumpyInfo {
  version: string;
  /** The BLAS library file, resolved through symlinks and alternatives. */
  library: string | null;
  openblas: { library: string; config: string; core: string; threads: number } | null;
}

/** What the PyTorch worker reported about itself. */
export interface ReferenceInfo {
  python: string;
  torch: string;
  threads: number;
  /** `clean`: {@linkcode BLAS_OVERRIDES} were unset in its process; `inherit`: it saw ours. */
  env: "clean" | "inherit";
  malloc: "keep" | "default";
  /** Variables unset in its process, with the values ours had. */
  removed_env: Record<string, string>;
  /** Variables set in its process: thread counts, and glibc's under `keep`. */
  set_env: Record<string, string>;
  /** torch's build flags, loaded libraries, OpenBLAS's config and core, threadpoolctl when present. */
  blas: Record<string, unknown>;
  /** NumPy, which serves the data-path entries; null when it could not be inspected. */
  numpy: NumpyInfo | null;
}

/** One kernel of the profiled step, summed over its calls. */
export interface KernelProfile {
  name: string;
  calls: number;
  ms: number;
  share: number;
  /** Multiply-adds ×2 for convolutions and matrix products; null for other kernels. */
  gflop: number | null;
  gflops: number | null;
  /** gflops over the backend's single-thread sgemm limit (see {@linkcode ProfileReport}). */
  of_gemm_limit: number | null;
}

/** One call of a FLOP-heavy kernel, for finding the slow layer. */
export interface KernelCall {
  name: string;
  input_shapes: number[][];
  ms: number;
  gflops: number;
}

/** The `--profile` section. */
export interface ProfileReport {
  backend: string;
  model: "conv-vae-64";
  steps: number;
  total_ms: number;
  /**
   * One-thread sgemm rates, 2 FLOP per multiply-add over the fastest of 7
   * runs: the backend's n×n×n matMul and 1×1 convolution (8n × n × n), the
   * faster of the two as the limit `of_gemm_limit` divides by, and
   * PyTorch's n×n×n torch.mm with the CPU time it used per wall second (1
   * means one thread).
   */
  gemm: {
    n: number;
    backend_matmul_gflops: number;
    backend_conv1x1_gflops: number;
    limit_gflops: number;
    torch: { gflops: number; cpu_per_wall: number } | null;
  };
  kernels: KernelProfile[];
  calls: KernelCall[];
}

/** The JSON `--json` writes and bench/readme_table.ts reads. */
export interface BenchReport {
  schema: "latentlab-bench/1";
  date: string;
  argv: string[];
  config: {
    rounds: number;
    steps: number;
    warmup: number;
    threads: number;
    torch_env: "clean" | "inherit";
    torch_malloc: "keep" | "default";
    models: string[];
    backends: string[];
    /** `--corruptions` was given; absent in older reports. */
    corruptions?: boolean;
    /** The `--only` groups; absent in older reports. */
    only?: string[];
  };
  machine: {
    cpu: string;
    cores: number;
    memory_gb: number;
    os: string;
    deno: string;
    v8: string;
    tfjs: string;
    tfjs_wasm: string;
    wasm_simd: boolean;
    wasm_threads: boolean;
    /** 1, 5 and 15-minute load averages at start and end; they include the bench's own process. */
    load_start: number[];
    load_end: number[];
    /** The WebGPU adapter's description when the webgpu backend was timed; absent otherwise. */
    webgpu_adapter?: string | null;
  };
  reference: ReferenceInfo | null;
  /**
   * The second PyTorch worker, on {@linkcode DATA_PARALLEL_SHARDS} threads, when a `workers`-group entry was timed
   * beside it; null otherwise, absent in older reports.
   */
  reference_threads?: ReferenceInfo | null;
  results: ModelResult[];
  /** Rendering a batch of 64 images on one core; `share_of_conv_vae_64`: of a conv VAE 64×64 step when timed. */
  datasets: { name: string; images_per_s: number; batch_ms: number; share_of_conv_vae_64: number | null }[];
  profile: ProfileReport | null;
  /** The `--corruptions` section; absent or null without it. */
  corruptions?: CorruptionSection | null;
  /**
   * Entry and backend pairs the run would have timed but did not, and why (`firevnet-conv-32` on WebGPU where the
   * only adapter renders in software); absent in older reports.
   */
  not_timed?: { model: ModelName; backend: string; reason: string }[];
}

/** A workload's built state. */
interface WorkloadState {
  parameters: number;
  step(): Promise<void>;
  dispose(): void;
  /** Arguments of the reference's builder (bench/torch_reference.py passes them on). */
  referenceArgs?: Record<string, unknown>;
  /** Compares our result with the `check` the reference's build returned (null without a reference). */
  check?(reference: unknown): { ok: boolean; detail: string };
  /** A step of ours to pair with instead of the reference worker's (`Workload.baseline`). */
  baselineStep?(): Promise<void>;
  /** `DataParallel`'s communication share of the steps since the last call (`takeCommunicationShare`). */
  takeCommunicationShare?(): number;
}

/** Work timed in paired rounds: ours, built here, against the reference worker's builder of the same name. */
interface PairedWork {
  name: string;
  build(rng: Rng): WorkloadState | Promise<WorkloadState>;
  /** Paired with the reference worker as well when its state has a `baselineStep` (otherwise the baseline only). */
  alsoReference?: boolean;
  /** Timed alone: no reference worker (nothing there does the same work) and no baseline. */
  oursOnly?: boolean;
  /** Paired also with the reference worker on {@linkcode DATA_PARALLEL_SHARDS} threads, when one runs. */
  alsoThreadedReference?: boolean;
  /**
   * Floors on the warm-up and timed steps per side per round for short steps: a step of a few milliseconds runs
   * tens of times slower until V8 has compiled its path, and 3 steps of it make a round too short to outlast the
   * other processes' scheduling on a shared machine.
   */
  minimum?: { warmup: number; steps: number };
}

/** One timed workload: builds its state once, then runs a step that resolves when the result is read. */
interface Workload extends PairedWork {
  name: ModelName;
  batch: number;
  /** Data-path entries: plain JS (against NumPy unless `oursOnly`), timed once rather than per backend. */
  plain?: { goalMs?: number };
  /**
   * A model entry's goal: ≤ `ms` per step, a median paired ratio ≤ `ratio`, ≥ `imagesPerS` images (the batch) per
   * second of the median step (each if given), and its source.
   */
  goal?: { ms?: number; ratio?: number; imagesPerS?: number; source: string };
  /**
   * Paired with `baselineStep` of its state (and with the reference worker too under `alsoReference`): the
   * ceiling `ratio` on entry ms / baseline ms, or `throughputFloor` on baseline ms / entry ms, judged on the ratio
   * of medians, or on the median paired ratio under `paired`.
   */
  baseline?: {
    model: ModelName | BaselineStepName;
    ratio?: number;
    throughputFloor?: number;
    paired?: boolean;
    source: string;
  };
  /**
   * Timed on WebGPU as well when the run's backends lack it (`firevnet-conv-32`, whose goal names wasm and
   * webgpu): on a GPU adapter; with a software one, or none, the report says why it was not.
   */
  alsoWebgpu?: boolean;
}

function binaryImages(rng: Rng, n: number, size: number): tf.Tensor4D {
  return tf.tensor4d(Float32Array.from({ length: n * size * size }, () => rng.uniform() < 0.2 ? 1 : 0), [
    n,
    size,
    size,
    1,
  ]);
}

/** A VAE training step with the loss and posterior that training uses (β-VAE, β = 1). */
function vaeTrainer(rng: Rng, size: 32 | 64, kind: "conv" | "mlp") {
  const { encoder, decoder } = vaeNetworks(rng, kind, { size, channels: 1, latents: 10 });
  const variables = [...encoder.params.list(), ...decoder.params.list()];
  const x = binaryImages(rng, 64, size);
  const optimizer = tf.train.adam(1e-4);
  return {
    parameters: encoder.params.count() + decoder.params.count(),
    /** One Adam step; returns the loss (the caller disposes it). */
    minimize(): tf.Scalar {
      const noise = tf.tensor2d(rng.normalArray(64 * 10), [64, 10]);
      const loss = optimizer.minimize(
        () => vaeLoss(decoder, x, posterior(encoder, x, noise), { method: "beta_vae", value: 1, step: 0 }).total,
        true,
        variables,
      )!;
      noise.dispose();
      return loss;
    },
    dispose() {
      encoder.params.dispose();
      decoder.params.dispose();
      optimizer.dispose();
      x.dispose();
    },
  };
}

/**
 * A β-VAE step (β 1, batch 64, binary images) on {@linkcode DATA_PARALLEL_SHARDS} shards: lib/train/vae.ts's
 * replica and `DataParallel`, the gradients summed in order and Adam applied once, paired with PyTorch's step on one
 * thread, with the same step in one process (the 1-worker baseline: scaling efficiency) and with PyTorch's step on
 * {@linkcode DATA_PARALLEL_SHARDS} threads (no goal).
 */
function dataParallelVaeWorkload(name: keyof typeof DATA_PARALLEL_TORCH_GOALS, size: 32 | 64, kind: "conv" | "mlp") {
  const ratio = DATA_PARALLEL_TORCH_GOALS[name];
  const single = name.replace("-dp2", "") as ModelName;
  return {
    name,
    batch: 64,
    alsoReference: true,
    alsoThreadedReference: true,
    goal: { ratio, source: `issue 25, Targets: a ${single} step with 2 workers ≤ ${ratio}× PyTorch on one thread` },
    baseline: {
      model: single,
      throughputFloor: DATA_PARALLEL_SCALING_GOAL,
      paired: true,
      source: `issue 25, Targets: 2 workers give ≥ ${DATA_PARALLEL_SCALING_GOAL}× the 1-worker throughput (80%)`,
    },
    async build(rng: Rng) {
      const cfg = resolveConfig(
        VAE_CONFIG,
        { method: "beta_vae", value: 1, architecture: kind, resolution: size, batch: 64, latents: 10 },
        new Map(),
      );
      const master = vaeReplica({ cfg, channels: 1 });
      const optimizer: tf.Optimizer = tf.train.adam(1e-4);
      const parallel = new DataParallel({
        module: new URL("../lib/train/vae.ts", import.meta.url).href,
        exportName: "vaeReplica",
        args: { cfg, channels: 1 },
        workers: DATA_PARALLEL_SHARDS,
        backend: tf.getBackend(),
        variables: master.variables,
        loss: master.loss,
      });
      const pixels = binaryImages(rng, 64, size);
      const images = await pixels.data() as Float32Array;
      pixels.dispose();
      const trainer = vaeTrainer(rng, size, kind);
      let step = 0;
      return {
        parameters: trainer.parameters,
        async step() {
          const inputs = {
            x: { data: images, shape: [64, size, size, 1] },
            eps: { data: rng.normalArray(64 * 10), shape: [64, 10] },
          };
          const { grads } = await parallel.gradients(++step, inputs);
          optimizer.applyGradients(grads);
          tf.dispose(Object.values(grads));
          // The step ends when its update is readable, as the other entries end on their loss.
          await master.variables[0].data();
        },
        baselineStep: () => readLoss(trainer.minimize()),
        takeCommunicationShare: () => parallel.takeCommunicationShare(),
        dispose() {
          parallel.terminate();
          optimizer.dispose();
          trainer.dispose();
          master.variables.forEach((v) => v.dispose());
        },
      };
    },
  } satisfies Workload;
}

function vaeWorkload(name: ModelName, size: 32 | 64, kind: "conv" | "mlp"): Workload {
  return {
    name,
    batch: 64,
    build(rng) {
      const trainer = vaeTrainer(rng, size, kind);
      return {
        parameters: trainer.parameters,
        async step() {
          const loss = trainer.minimize();
          await loss.data();
          loss.dispose();
        },
        dispose: trainer.dispose,
      };
    },
  };
}

/** One Adam 5e-4 step of the benchmark's MSE on 64 binary 32×32×1 images and 5 uniform factors. */
function regressorWorkload(
  name: ModelName,
  build: (rng: Rng, options: RegressorOptions) => Regressor,
): Workload {
  return {
    name,
    batch: 64,
    build(rng) {
      const model = build(rng, { size: 32, channels: 1, outputs: 5 });
      const x = binaryImages(rng, 64, 32);
      const y = tf.tensor2d(Float32Array.from({ length: 64 * 5 }, () => rng.uniform()), [64, 5]);
      const optimizer = tf.train.adam(5e-4);
      return {
        parameters: model.params.count(),
        async step() {
          await regressionStep(model, optimizer, x, y);
        },
        dispose() {
          model.params.dispose();
          optimizer.dispose();
          tf.dispose([x, y]);
        },
      };
    },
  };
}

type SplitSummary = { train: number; test: number; train_sum: number };

/** Sizes of a split's parts and the sum of its train indices: equal sums of ascending parts mean the same points. */
function splitSummary(split: Split): SplitSummary {
  let sum = 0;
  for (const index of split.train) sum += index;
  return { train: split.train.length, test: split.test.length, train_sum: sum };
}

/**
 * dSprites' four benchmark splits per step. makeSplit keeps no cache, so each
 * step builds them from scratch, as a run's first call does.
 */
function splitsWorkload(): Workload {
  return {
    name: "splits",
    batch: SPLIT_NAMES.length,
    plain: { goalMs: 1000 },
    build() {
      const buildAll = () => SPLIT_NAMES.map((name) => makeSplit("dsprites", name));
      const ours = Object.fromEntries(buildAll().map((split) => [split.name, splitSummary(split)]));
      const total = DSPRITES_SIZES.reduce((a, b) => a * b, 1);
      return {
        parameters: 0,
        step() {
          buildAll();
          return Promise.resolve();
        },
        dispose() {},
        check(reference) {
          const theirs = reference as Record<string, SplitSummary> | null;
          const problems: string[] = [];
          for (const name of SPLIT_NAMES) {
            const train = DSPRITES_TRAIN_COUNTS[name];
            const sides: [string, SplitSummary | undefined][] = [["ours", ours[name]]];
            if (theirs) sides.push(["NumPy", theirs[name]]);
            for (const [side, got] of sides) {
              if (got?.train !== train || got.test !== total - train) {
                problems.push(
                  `${side} ${name}: ${got ? `${got.train} train, ${got.test} test` : "missing"}; expected ${train}`,
                );
              }
            }
            // The random split draws from different generators on the two sides: only its size can agree.
            if (theirs?.[name] && name !== "random" && theirs[name].train_sum !== ours[name].train_sum) {
              problems.push(`${name}: the two sides' train points differ`);
            }
          }
          if (problems.length) return { ok: false, detail: problems.join("; ") };
          const counts = SPLIT_NAMES.map((name) => `${name} ${ours[name].train}`).join(", ");
          return {
            ok: true,
            detail: `train ${counts}` +
              (theirs ? " on both sides, the same points where deterministic" : " (no NumPy to compare)"),
          };
        },
      };
    },
  };
}

/**
 * r2Scores on {@linkcode R2_ROWS} float32 predictions (each factor's
 * normalized value plus N(0, 0.1²) noise) of uniform dSprites grid points,
 * written once as .npy for NumPy to read.
 */
function r2Workload(): Workload {
  return {
    name: "r2-scores",
    batch: R2_ROWS,
    plain: { goalMs: 50 },
    build(rng) {
      const sizes = DSPRITES_SIZES, k = sizes.length;
      const factors = new Int32Array(R2_ROWS * k), pred = new Float32Array(R2_ROWS * k);
      for (let i = 0; i < factors.length; i++) {
        const n = sizes[i % k], v = rng.int(n);
        factors[i] = v;
        pred[i] = v / (n - 1) + 0.1 * rng.normal();
      }
      const dir = Deno.makeTempDirSync({ prefix: "latentlab-bench-r2-" });
      const paths = { predictions: `${dir}/predictions.npy`, factors: `${dir}/factors.npy` };
      Deno.writeFileSync(paths.predictions, formatNpy(pred, [R2_ROWS, k]));
      Deno.writeFileSync(paths.factors, formatNpy(factors, [R2_ROWS, k]));
      const matrix = { data: pred, rows: R2_ROWS, cols: k };
      const ours = r2Scores(matrix, factors, sizes);
      return {
        parameters: 0,
        step() {
          r2Scores(matrix, factors, sizes);
          return Promise.resolve();
        },
        dispose: () => Deno.removeSync(dir, { recursive: true }),
        referenceArgs: { ...paths, sizes: [...sizes] },
        check(reference) {
          const summary = `R² ${ours.r2.toFixed(6)} (per factor ${ours.perFactor.map((v) => v.toFixed(4)).join(", ")})`;
          if (!reference) return { ok: true, detail: `${summary} (no NumPy to compare)` };
          const theirs = reference as { r2: number; per_factor: number[]; rows: number };
          if (theirs.rows !== R2_ROWS || theirs.per_factor?.length !== k) {
            return { ok: false, detail: `NumPy scored ${theirs.rows} rows × ${theirs.per_factor?.length} factors` };
          }
          const pairs = [[ours.r2, theirs.r2], ...ours.perFactor.map((v, j) => [v, theirs.per_factor[j]])];
          const worst = Math.max(...pairs.map(([a, b]) => Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b))));
          // Summation order differs (sequential here, pairwise in NumPy), so agreement is to rounding, not bits.
          const ok = worst <= 1e-9;
          return { ok, detail: `${summary}; largest relative difference to NumPy ${worst.toExponential(1)}` };
        },
      };
    },
  };
}

/** Images per step of `mnist-cnn` and `ant-step`. */
export const MNIST_CNN_BATCH = 128;

/**
 * The `mnist-cnn` step: lib/models/small_cnn.ts on {@linkcode MNIST_CNN_BATCH} uniform-pixel images with random
 * classes, one Adam 1e-3 step of the softmax cross-entropy.
 */
function smallCnnTrainer(rng: Rng) {
  const model: Classifier = smallCnn(rng);
  const images = uniformDigits(rng, MNIST_CNN_BATCH);
  const classes = tf.tensor1d(Int32Array.from({ length: MNIST_CNN_BATCH }, () => rng.int(10)), "int32");
  const labels = tf.oneHot(classes, 10);
  const optimizer = tf.train.adam(1e-3);
  return {
    model,
    images,
    /** `[batch]` int32 classes. */
    classes,
    /** One Adam step on `x` (default: its own images) with its labels; returns the loss (the caller disposes it). */
    minimize(x: tf.Tensor4D = images): tf.Scalar {
      return optimizer.minimize(
        () => tf.losses.softmaxCrossEntropy(labels, model.logits(x)) as tf.Scalar,
        true,
        model.params.list(),
      )!;
    },
    dispose() {
      model.params.dispose();
      optimizer.dispose();
      tf.dispose([images, classes, labels]);
    },
  };
}

/** Waits for a loss to be computed and read back, then frees it. */
async function readLoss(loss: tf.Scalar): Promise<void> {
  await loss.data();
  loss.dispose();
}

/**
 * One ANT step (issue 19) on the `mnist-cnn` classifier and batch: a generator Adam step (ε 10, lr 1e-3, the quick
 * preset's) maximising the classifier's cross-entropy, then a classifier Adam step on the ANT batch of a later
 * epoch, which has all three parts (30% current generator, two 10% slices of saved generators, 50% clean). Paired
 * with a plain `mnist-cnn` step of a second, identical classifier.
 */
function antStepWorkload(): Workload {
  return {
    name: "ant-step",
    batch: MNIST_CNN_BATCH,
    baseline: {
      model: "mnist-cnn",
      ratio: ANT_STEP_RATIO_GOAL,
      source: "issue 19, Speed: an ANT step at most 3× a smallCnn step",
    },
    build(rng) {
      const trainer = smallCnnTrainer(rng), plain = smallCnnTrainer(rng);
      const ant = createAnt(rng, { channels: 1, epsilon: 10, generatorLr: 1e-3 });
      saveGeneratorState(ant);
      saveGeneratorState(ant);
      const draws = new Rng(1);
      return {
        parameters: trainer.model.params.count() + ant.generator.params.count(),
        step() {
          antGeneratorStep(trainer.model, ant, trainer.images, trainer.classes, draws).dispose();
          const batch = antClassifierBatch(ant, trainer.images, draws, 1);
          const loss = trainer.minimize(batch);
          batch.dispose();
          return readLoss(loss);
        },
        baselineStep: () => readLoss(plain.minimize()),
        dispose() {
          trainer.dispose();
          plain.dispose();
          disposeAnt(ant);
        },
      };
    },
  };
}

/** Digits of the ABS entries: `abs-inference` classifies this many per call. */
export const ABS_INFERENCE_BATCH = 30;
/** Images per input gradient of the `abs-cnn-input-grad` entry. */
export const ABS_CNN_BATCH = 100;
/** Where the ABS entries' goals come from. */
const ABS_GOAL_SOURCE = "issue target: an ABS logits call ≤ 1 s on 30 digits, at most 2× PyTorch's time";

/** `[n, 28, 28, 1]` uniform pixels in [0, 1] standing in for digits (the weights are untrained, so content does not matter). */
function uniformDigits(rng: Rng, n: number): tf.Tensor4D {
  return tf.tensor4d(Float32Array.from({ length: n * 784 }, () => rng.uniform()), [n, 28, 28, 1]);
}

/** Writes each tensor as `<dir>/<key with "/" as "_">.npy` for the reference to load. */
async function writeTensors(dir: string, tensors: Record<string, tf.Tensor>): Promise<void> {
  for (const [key, t] of Object.entries(tensors)) {
    const data = await t.data();
    Deno.writeFileSync(`${dir}/${key.replaceAll("/", "_")}.npy`, formatNpy(data as Float32Array | Int32Array, t.shape));
  }
}

/** Largest |a − b| over max |a|: how far the reference's result is from ours. */
function relativeDifference(ours: ArrayLike<number>, theirs: ArrayLike<number>): number {
  let diff = 0, scale = 0;
  for (let i = 0; i < ours.length; i++) {
    diff = Math.max(diff, Math.abs(ours[i] - theirs[i]));
    scale = Math.max(scale, Math.abs(ours[i]));
  }
  return diff / Math.max(scale, 1e-30);
}

/** Compares a reference's flat result `{values, shape}` with ours to a relative tolerance. */
function compareValues(
  what: string,
  ours: Float32Array,
  reference: unknown,
  tolerance: number,
): { ok: boolean; detail: string } {
  if (!reference) return { ok: true, detail: `${what} computed (no PyTorch to compare)` };
  const theirs = (reference as { values?: number[] }).values;
  if (!theirs || theirs.length !== ours.length) {
    return { ok: false, detail: `PyTorch's ${what} has ${theirs?.length} values, ours ${ours.length}` };
  }
  const worst = relativeDifference(ours, theirs);
  return {
    ok: worst <= tolerance,
    detail: `${what}: largest difference to PyTorch ${worst.toExponential(1)} of the largest value (tolerance ${
      tolerance.toExponential(0)
    })`,
  };
}

/**
 * ABS inference (lib/models/abs.ts): one `Abs.logits` call on {@linkcode ABS_INFERENCE_BATCH}
 * digits, read back: per class the best of 1,000 cached prototypes, then 5 Adam steps (lr 0.05)
 * on z through the ten decoders, each projected into the ball of radius 5. The class VAEs keep
 * their initial weights (speed does not depend on them); the reference gets the same decoder
 * weights, running statistics, prototypes and digits as .npy.
 */
function absInferenceWorkload(): Workload {
  return {
    name: "abs-inference",
    batch: ABS_INFERENCE_BATCH,
    goal: { ms: 1000, ratio: 2, source: ABS_GOAL_SOURCE },
    async build(rng) {
      const vaes = Array.from({ length: 10 }, (_, c) => classVae(new Rng(c)));
      const options = { prototypes: 1000, steps: 5, seed: 0 };
      const abs = await Abs.create(vaes, options);
      const x = uniformDigits(rng, ABS_INFERENCE_BATCH);
      const dir = Deno.makeTempDirSync({ prefix: "latentlab-bench-abs-" });
      const decoderKeys = (vae: (typeof vaes)[number]) =>
        Object.fromEntries(
          Object.entries({ ...vae.params.entries(""), ...vae.stats.entries("") }).filter(([k]) => k.startsWith("dec")),
        );
      for (const [c, vae] of vaes.entries()) await writeTensors(dir, prefixed(`class${c}_`, decoderKeys(vae)));
      const prototypes = tf.tensor2d(abs.prototypeLatents, [options.prototypes, abs.latents]);
      await writeTensors(dir, { prototypes, x });
      prototypes.dispose();
      const run = () => tf.tidy(() => abs.logits(x));
      const first = run();
      const ours = await first.data() as Float32Array;
      first.dispose();
      // The decoders are the network inference runs (the encoders are not used).
      const parameters = vaes.reduce(
        (n, vae) =>
          n + Object.entries(vae.params.entries("")).reduce((m, [k, v]) => m + (k.startsWith("dec") ? v.size : 0), 0),
        0,
      );
      return {
        parameters,
        async step() {
          const logits = run();
          await logits.data();
          logits.dispose();
        },
        dispose() {
          abs.dispose();
          vaes.forEach((vae) => vae.dispose());
          x.dispose();
          Deno.removeSync(dir, { recursive: true });
        },
        referenceArgs: { directory: dir, classes: 10, steps: options.steps, lr: abs.lr, radius: abs.radius },
        // Adam's first steps move each coordinate by about ±lr whatever the gradient's size, so a
        // coordinate whose gradient is near 0 may step differently on the two sides; logits then
        // agree to float32 rounding of the losses rather than bit for bit.
        check: (reference) => compareValues("logits", ours, reference, 1e-3),
      };
    },
  };
}

/** `record`'s keys with `prefix` in front. */
function prefixed(prefix: string, record: Record<string, tf.Tensor>): Record<string, tf.Tensor> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [`${prefix}${k}`, v]));
}

/**
 * The input gradient of the cross-entropy through the App. A.7 CNN (lib/models/abs_cnn.ts, eval
 * mode) at batch {@linkcode ABS_CNN_BATCH}, by lib/attacks/attack.ts `lossGradient`, read back:
 * one forward and one backward pass to the input, as every gradient attack step takes.
 */
function absCnnGradientWorkload(): Workload {
  return {
    name: "abs-cnn-input-grad",
    batch: ABS_CNN_BATCH,
    async build(rng) {
      const cnn = absCnn(rng);
      const model = absCnnModel(cnn);
      const x = uniformDigits(rng, ABS_CNN_BATCH);
      const labels = tf.tensor1d(Int32Array.from({ length: ABS_CNN_BATCH }, () => rng.int(10)), "int32");
      const dir = Deno.makeTempDirSync({ prefix: "latentlab-bench-abs-cnn-" });
      await writeTensors(dir, { ...cnn.params.entries(""), ...cnn.stats.entries(""), x, labels });
      const run = () =>
        tf.tidy(() => {
          const { gradient, logits, loss } = lossGradient(model, x, (l) => crossEntropy(l, labels));
          tf.dispose([logits, loss]);
          return gradient;
        });
      const first = run();
      const ours = await first.data() as Float32Array;
      first.dispose();
      return {
        parameters: cnn.params.count(),
        async step() {
          const gradient = run();
          await gradient.data();
          gradient.dispose();
        },
        dispose() {
          cnn.dispose();
          tf.dispose([x, labels]);
          Deno.removeSync(dir, { recursive: true });
        },
        referenceArgs: { directory: dir },
        check: (reference) => compareValues("input gradient", ours, reference, 1e-4),
      };
    },
  };
}

/** Compares several named results with the reference's (`{name: values}`), each to its own relative tolerance. */
function compareParts(
  ours: Record<string, Float32Array>,
  reference: unknown,
  tolerances: Record<string, number>,
): { ok: boolean; detail: string } {
  const names = Object.keys(ours);
  if (!reference) {
    return {
      ok: true,
      detail: `${names.map((name) => name.replaceAll("_", " ")).join(", ")} computed (no PyTorch to compare)`,
    };
  }
  const theirs = reference as Record<string, number[] | undefined>;
  const parts = names.map((name) =>
    compareValues(name.replaceAll("_", " "), ours[name], { values: theirs[name] }, tolerances[name])
  );
  return { ok: parts.every((part) => part.ok), detail: parts.map((part) => part.detail).join("; ") };
}

/** The variables' values, concatenated in order. */
async function readFlat(variables: tf.Tensor[]): Promise<Float32Array> {
  const parts = await Promise.all(variables.map((v) => v.data() as Promise<Float32Array>));
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const difference = (after: Float32Array, before: Float32Array) => after.map((v, i) => v - before[i]);

/** bnCnn's one-dimensional parameters, whose layout is the same in PyTorch: biases and BN γ, β, in key order. */
const BN_CNN_VECTORS = ["conv0/b", "bn0/gamma", "bn0/beta", "conv1/b", "bn1/gamma", "bn1/beta", "fc0/b", "fc1/b"];
const BN_CNN_STATS = ["bn0/mean", "bn0/var", "bn1/mean", "bn1/var"];

/**
 * A bnCnn (norm "batch") and `batch` uniform-pixel digits, with its weights, statistics, the digits and `extra`
 * written as .npy into a new folder for the reference. Five training-mode forwards of the digits first move the
 * source statistics off 0 and 1, so that a wrong mixing or variance would show in the check.
 */
async function ttaModel(rng: Rng, batch: number, prefix: string, extra: Record<string, tf.Tensor> = {}) {
  const model = bnCnn(rng, { norm: "batch" });
  const x = uniformDigits(rng, batch);
  for (let i = 0; i < 5; i++) tf.dispose(model.trainLogits(x));
  const directory = Deno.makeTempDirSync({ prefix: `latentlab-bench-${prefix}-` });
  await writeTensors(directory, { ...model.params.entries(""), ...model.stats.entries(""), x, ...extra });
  return { model, x, directory };
}

/** A training step of `model` on `x` and `classes`: `trainLogits`, softmax cross-entropy, every parameter, SGD. */
function bnCnnTrainer(model: BnCnn, x: tf.Tensor4D, classes: tf.Tensor1D) {
  const labels = tf.oneHot(classes, 10);
  const optimizer = tf.train.momentum(TTA_SGD.lr, TTA_SGD.momentum);
  return {
    /** One step; returns the loss (the caller disposes it). */
    minimize: (): tf.Scalar =>
      optimizer.minimize(
        () => tf.losses.softmaxCrossEntropy(labels, model.trainLogits(x)) as tf.Scalar,
        true,
        model.allParams(),
      )!,
    dispose() {
      optimizer.dispose();
      labels.dispose();
    },
  };
}

/** `[n]` int32 random classes. */
const randomClasses = (rng: Rng, n: number) => tf.tensor1d(Int32Array.from({ length: n }, () => rng.int(10)), "int32");

/**
 * `bncnn-train-step-128`: one training step of bnCnn at batch {@linkcode TTA_STEP_BATCH}; the check compares the
 * first step's logits (batch statistics), the update of the biases and BN affine parameters and the running
 * statistics after it with PyTorch's.
 */
function bnCnnTrainWorkload(): Workload {
  return {
    name: "bncnn-train-step-128",
    batch: TTA_STEP_BATCH,
    async build(rng) {
      const classes = randomClasses(rng, TTA_STEP_BATCH);
      const { model, x, directory } = await ttaModel(rng, TTA_STEP_BATCH, "bncnn-train", { labels: classes });
      const trainer = bnCnnTrainer(model, x, classes);
      const vectors = () => BN_CNN_VECTORS.map((key) => model.params.get(key));
      // The training forward normalises with the batch's statistics: its logits are the batch-mode ones.
      const first = model.logits(x, { kind: "batch" });
      const logits = await first.data() as Float32Array;
      first.dispose();
      const before = await readFlat(vectors());
      await readLoss(trainer.minimize());
      const update = difference(await readFlat(vectors()), before);
      const stats = await readFlat(BN_CNN_STATS.map((key) => model.stats.get(key)));
      return {
        parameters: model.params.count(),
        step: () => readLoss(trainer.minimize()),
        dispose() {
          trainer.dispose();
          model.dispose();
          tf.dispose([x, classes]);
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: { directory },
        check: (reference) =>
          compareParts(
            { logits, bias_affine_update: update, running_stats: stats },
            reference,
            { logits: 1e-4, bias_affine_update: 1e-3, running_stats: 1e-4 },
          ),
      };
    },
  };
}

/**
 * `tent-step-128`: one Tent step (`adaptStep`, entropy, "affine") at batch {@linkcode TTA_STEP_BATCH}, paired with
 * PyTorch's and with a `bncnn-train-step-128` step of a second bnCnn on the same digits. The check compares the
 * first step's logits and its update of γ, β with PyTorch's.
 */
function tentStepWorkload(): Workload {
  return {
    name: "tent-step-128",
    batch: TTA_STEP_BATCH,
    alsoReference: true,
    goal: { ratio: TENT_TORCH_RATIO_GOAL, source: "issue 20, Speed: a Tent step (batch 128) ≤ 2.5× PyTorch's" },
    baseline: {
      model: "bncnn-train-step-128",
      ratio: TENT_STEP_RATIO_GOAL,
      paired: true,
      source: "issue 20, Speed: a Tent step (batch 128) ≤ 1.2× a bnCnn training step",
    },
    async build(rng) {
      const { model, x, directory } = await ttaModel(rng, TTA_STEP_BATCH, "tent");
      const optimizer = tf.train.momentum(TTA_SGD.lr, TTA_SGD.momentum);
      const plain = bnCnn(rng, { norm: "batch" }), classes = randomClasses(rng, TTA_STEP_BATCH);
      const trainer = bnCnnTrainer(plain, x, classes);
      const affine = adaptedParams(model, "affine");
      const before = await readFlat(affine);
      const logits = await adaptStep(model, x, entropy, optimizer, "affine");
      const update = difference(await readFlat(affine), before);
      return {
        parameters: model.params.count(),
        async step() {
          await adaptStep(model, x, entropy, optimizer, "affine");
        },
        baselineStep: () => readLoss(trainer.minimize()),
        dispose() {
          optimizer.dispose();
          trainer.dispose();
          model.dispose();
          plain.dispose();
          tf.dispose([x, classes]);
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: { directory },
        check: (reference) =>
          compareParts({ logits, affine_update: update }, reference, { logits: 1e-4, affine_update: 1e-3 }),
      };
    },
  };
}

/**
 * A forward of {@linkcode TTA_FORWARD_BATCH} digits under `mode`, logits read back. The prior mode's entry is
 * paired with the source-mode forward of the same model and digits, its goal a floor on the throughput ratio.
 */
function forwardWorkload(name: "prior-forward-n1" | "source-forward", mode: NormMode): Workload {
  const prior = mode.kind === "prior" ? mode : null;
  return {
    name,
    batch: TTA_FORWARD_BATCH,
    alsoReference: true,
    ...(prior
      ? {
        baseline: {
          model: "source-forward" as const,
          throughputFloor: PRIOR_THROUGHPUT_GOAL,
          paired: true,
          source: `issue 20, Speed: the n = 1 prior forward (N ${prior.N}) ≥ 0.7× the throughput of a source-mode ` +
            "forward, no per-image loop",
        },
      }
      : {}),
    async build(rng) {
      const { model, x, directory } = await ttaModel(rng, TTA_FORWARD_BATCH, name);
      const forward = async (m: NormMode) => {
        const out = model.logits(x, m);
        const values = await out.data() as Float32Array;
        out.dispose();
        return values;
      };
      const logits = await forward(mode);
      return {
        parameters: model.params.count(),
        async step() {
          await forward(mode);
        },
        ...(prior ? { baselineStep: async () => void await forward({ kind: "source" }) } : {}),
        dispose() {
          model.dispose();
          x.dispose();
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: { directory, ...(prior ? { prior: priorWeight(prior.N, prior.n), n: prior.n } : {}) },
        check: (reference) => compareParts({ logits }, reference, { logits: 1e-4 }),
      };
    },
  };
}

/** A `cebra` group step: the encoder, its loss and its optimiser. */
interface CebraStepSpec {
  architecture: CebraArchitecture;
  inputs: number;
  hidden: number;
  output: number;
  distance: Distance;
  lr: number;
}

/**
 * One CEBRA training step at batch {@linkcode CEBRA_BATCH} as lib/contrastive/cebra.ts trains: the reference,
 * positive and negative windows of a fixed time-contrastive index batch gathered from {@linkcode CEBRA_LABEL_ROWS}
 * uniform rows, one forward pass over the three, InfoNCE (τ 1), an Adam step, the loss read back. The weights,
 * data and indices go to bench/cebra_reference.py as .npy; the check compares the reference windows' embeddings
 * before any step and the first two steps' losses.
 */
function cebraStepWorkload(name: ModelName, spec: CebraStepSpec): Workload {
  return {
    name,
    batch: CEBRA_BATCH,
    goal: {
      ratio: CEBRA_TORCH_RATIO_GOAL,
      source: `issue 21, Speed: a CEBRA ${spec.architecture} step at batch ${CEBRA_BATCH} ≤ 2× PyTorch's`,
    },
    async build(rng) {
      const model = cebraModel(spec.architecture, spec, rng);
      const { left, right } = model.offset, width = left + right, rows = CEBRA_LABEL_ROWS;
      const data = tf.tensor2d(Float32Array.from({ length: rows * spec.inputs }, () => rng.uniform()), [
        rows,
        spec.inputs,
      ]);
      const batch = timeSampler(rows, { offset: 1, left, right }).sample(rng, CEBRA_BATCH);
      const all = Int32Array.from([...batch.ref, ...batch.pos, ...batch.neg]);
      // Rows i − left … i + right − 1 of each window, the index built per step as training builds it.
      const windows = (index: Int32Array): tf.Tensor3D => {
        const flat = new Int32Array(index.length * width);
        for (let i = 0; i < index.length; i++) {
          for (let j = 0; j < width; j++) flat[i * width + j] = index[i] - left + j;
        }
        return tf.tidy(() =>
          tf.reshape(tf.gather(data, tf.tensor1d(flat, "int32")), [index.length, width, spec.inputs]) as tf.Tensor3D
        );
      };
      const optimizer = tf.train.adam(spec.lr, 0.9, 0.999, 1e-8);
      const minimize = () =>
        optimizer.minimize(
          () => {
            const [ref, pos, neg] = tf.split(model.apply(windows(all)), 3, 0) as tf.Tensor2D[];
            return infoNce(ref, pos, neg, { distance: spec.distance, temperature: 1 }).total;
          },
          true,
          model.variables,
        )!;
      const directory = Deno.makeTempDirSync({ prefix: `latentlab-bench-${name}-` });
      const indices = {
        ref: tf.tensor1d(batch.ref, "int32"),
        pos: tf.tensor1d(batch.pos, "int32"),
        neg: tf.tensor1d(batch.neg, "int32"),
      };
      await writeTensors(directory, { ...model.state(), data, ...indices });
      tf.dispose(Object.values(indices));
      const first = tf.tidy(() => model.apply(windows(batch.ref)));
      const embedding = await first.data() as Float32Array;
      first.dispose();
      const losses = new Float32Array(2);
      for (let i = 0; i < 2; i++) {
        const loss = minimize();
        losses[i] = (await loss.data())[0];
        loss.dispose();
      }
      return {
        parameters: model.variables.reduce((n, v) => n + v.size, 0),
        step: () => readLoss(minimize()),
        dispose() {
          optimizer.dispose();
          model.dispose();
          data.dispose();
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: {
          directory,
          architecture: spec.architecture,
          inputs: spec.inputs,
          hidden: spec.hidden,
          output: spec.output,
          left,
          right,
          distance: spec.distance,
          temperature: 1,
          lr: spec.lr,
        },
        check: (reference) => compareParts({ losses, embedding }, reference, { losses: 1e-5, embedding: 1e-5 }),
      };
    },
  };
}

/**
 * `[rows, 3]` labels shaped as a place-cell rat's (position on a 1.6 m track as a reflected random walk, then
 * running right and left as 0/1): the layout the samplers' k-d tree meets in cebra-place-cells.
 */
function trackLabels(rng: Rng, rows: number): Matrix {
  const data = new Float64Array(rows * 3);
  let x = 0.8;
  for (let t = 0; t < rows; t++) {
    const step = 0.02 * rng.normal();
    x = Math.min(1.6, Math.max(0, x + step));
    data.set([x, step > 0 ? 1 : 0, step > 0 ? 0 : 1], 3 * t);
  }
  return { data, rows, cols: 3 };
}

/**
 * One draw of {@linkcode CEBRA_BATCH} reference, positive and negative indices over {@linkcode CEBRA_LABEL_ROWS}
 * 3-D labels, offset10's window: `timeDeltaSampler` (Δ 1) or `deltaSampler` (δ 0.1). Ours only: the package draws
 * on the GPU or in torch with another layout, so no reference runs the same work.
 */
function samplerDrawWorkload(name: "time-delta-draw-512" | "delta-draw-512", goalMs?: number): Workload {
  return {
    name,
    batch: CEBRA_BATCH,
    plain: goalMs === undefined ? {} : { goalMs },
    oursOnly: true,
    build(rng) {
      const labels = trackLabels(rng, CEBRA_LABEL_ROWS), window = { left: 5, right: 5 };
      const sampler = name === "time-delta-draw-512"
        ? timeDeltaSampler(labels, { offset: 1, ...window })
        : deltaSampler(labels, { delta: 0.1, ...window });
      const draws = new Rng(1);
      return {
        parameters: 0,
        step() {
          sampler.sample(draws, CEBRA_BATCH);
          return Promise.resolve();
        },
        dispose() {},
      };
    },
  };
}

/** A `vae-pca` group ensemble: members, hidden widths, β (every member) and Adam's rate. */
interface EnsembleStepSpec {
  members: number;
  hidden: number[];
  beta: number;
  lr: number;
}

/**
 * One Adam step of an {@linkcode EnsembleVae} (kind "vae", input 3, latents 2, tanh, squared loss) as
 * lib/train/ensemble_training.ts takes it: member k draws {@linkcode ENSEMBLE_BATCH} of its
 * {@linkcode ENSEMBLE_ROWS} training rows and its posterior noise from streams of its own seed, the batch and noise
 * go up as two tensors, the summed loss is minimised and read back. The weights, rows, a fixed batch and its noise
 * go to bench/vae_pca_reference.py as .npy; the check compares the encoder means of that batch before any step and
 * the losses of two steps on it.
 */
function ensembleStepWorkload(
  name: ModelName,
  spec: EnsembleStepSpec,
  goal: { ms: number; source: string },
  minimum: { warmup: number; steps: number },
): Workload {
  return {
    name,
    batch: ENSEMBLE_BATCH,
    goal,
    minimum,
    async build(rng) {
      const members = spec.members, batch = ENSEMBLE_BATCH, rows = ENSEMBLE_ROWS, input = 3, latents = 2;
      const seeds = Array.from({ length: members }, (_, k) => k);
      const model = new EnsembleVae({
        seeds,
        input,
        latents,
        hidden: spec.hidden,
        activation: "tanh",
        kind: "vae",
        betas: seeds.map(() => spec.beta),
        loss: "squared",
      });
      // Rows of a centred unit cube per member; the step's cost does not depend on their values.
      const data = Float32Array.from({ length: members * rows * input }, () => rng.uniform() - 0.5);
      const batchRngs = seeds.map((s) => Rng.derive(s, "batches", name));
      const noiseRngs = seeds.map((s) => Rng.derive(s, "noise", name));
      const x = new Float32Array(members * batch * input), noise = new Float32Array(members * batch * latents);
      const draw = () => {
        for (let k = 0; k < members; k++) {
          for (let b = 0; b < batch; b++) {
            const r = k * rows + batchRngs[k].int(rows);
            x.set(data.subarray(r * input, (r + 1) * input), (k * batch + b) * input);
          }
          noise.set(noiseRngs[k].normalArray(batch * latents), k * batch * latents);
        }
      };
      const optimizer = tf.train.adam(spec.lr, 0.9, 0.999, 1e-8);
      const variables = model.params.list();
      const minimize = (xs: Float32Array, eps: Float32Array) =>
        optimizer.minimize(
          () => model.loss(tf.tensor3d(xs, [members, batch, input]), tf.tensor3d(eps, [members, batch, latents])).total,
          true,
          variables,
        )!;
      const directory = Deno.makeTempDirSync({ prefix: `latentlab-bench-${name}-` });
      draw();
      const x0 = x.slice(), noise0 = noise.slice();
      const fixed = {
        data: tf.tensor3d(data, [members, rows, input]),
        x0: tf.tensor3d(x0, [members, batch, input]),
        noise0: tf.tensor3d(noise0, [members, batch, latents]),
      };
      await writeTensors(directory, { ...model.params.entries(""), ...fixed });
      const codes = model.encode(fixed.x0);
      const mean = await codes.mean.data() as Float32Array;
      tf.dispose([...Object.values(fixed), codes.mean, codes.logVar!]);
      const losses = new Float32Array(2);
      for (let i = 0; i < 2; i++) {
        const loss = minimize(x0, noise0);
        losses[i] = (await loss.data())[0];
        loss.dispose();
      }
      return {
        parameters: model.params.count(),
        step() {
          draw();
          return readLoss(minimize(x, noise));
        },
        dispose() {
          optimizer.dispose();
          model.dispose();
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: {
          directory,
          members,
          batch,
          inputs: input,
          latents,
          layers: spec.hidden.length + 1,
          betas: seeds.map(() => spec.beta),
          lr: spec.lr,
        },
        check: (reference) => compareParts({ mean, losses }, reference, { mean: 1e-5, losses: 1e-5 }),
      };
    },
  };
}

/** Largest |a − b| over the pairs of `ours` and `theirs`. */
function largestDifference(ours: ArrayLike<number>, theirs: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i] - theirs[i]));
  return worst;
}

/**
 * A fixed float32 Jacobian `[n, rows, cols]`: per sample N(0, 1) entries with column j scaled by 1 − j/cols, then
 * turned by one random rotation of the latents, so that singular values are apart (V well defined, Prop. 1) and V
 * is far from the axes, as a trained decoder's may be. Plain N(0, 1) columns would have nearly equal singular values.
 */
function dtoJacobian(rng: Rng, n: number, rows: number, cols: number): Float32Array {
  // Gram–Schmidt on a Gaussian cols×cols matrix: a random orthogonal Q (rows of q).
  const q: number[][] = [];
  for (let j = 0; j < cols; j++) {
    const v = Array.from({ length: cols }, () => rng.normal());
    for (const u of q) {
      const dot = u.reduce((sum, value, i) => sum + value * v[i], 0);
      u.forEach((value, i) => v[i] -= dot * value);
    }
    const norm = Math.hypot(...v);
    q.push(v.map((value) => value / norm));
  }
  const jac = new Float32Array(n * rows * cols), row = new Float64Array(cols);
  for (let e = 0; e < n * rows; e++) {
    for (let j = 0; j < cols; j++) row[j] = (1 - j / cols) * rng.normal();
    for (let c = 0; c < cols; c++) {
      let sum = 0;
      for (let j = 0; j < cols; j++) sum += row[j] * q[j][c];
      jac[e * cols + c] = sum;
    }
  }
  return jac;
}

/**
 * `dto-500x1024x5`: distanceToOrthogonality of a fixed float32 Jacobian {@linkcode DTO_SHAPE} (`dtoJacobian`),
 * written as .npy for NumPy/SciPy; the check compares DtO, the median singular-value gap and every sample's distance.
 */
function dtoWorkload(): Workload {
  const [n, rows, cols] = DTO_SHAPE;
  return {
    name: "dto-500x1024x5",
    batch: n,
    plain: { goalMs: DTO_GOAL_MS },
    minimum: { warmup: 10, steps: 3 },
    goal: { source: `issue 22, Speed: DtO of ${n} Jacobians ${rows}×${cols} ≤ 1 s` },
    build(rng) {
      const jac = dtoJacobian(rng, n, rows, cols);
      const directory = Deno.makeTempDirSync({ prefix: "latentlab-bench-dto-" });
      const path = `${directory}/jacobians.npy`;
      Deno.writeFileSync(path, formatNpy(jac, [n, rows, cols]));
      const ours = distanceToOrthogonality(jac, n, rows, cols);
      return {
        parameters: 0,
        step() {
          distanceToOrthogonality(jac, n, rows, cols);
          return Promise.resolve();
        },
        dispose: () => Deno.removeSync(directory, { recursive: true }),
        referenceArgs: { jacobians: path },
        check(reference) {
          const summary = `DtO ${ours.dto.toFixed(6)}, singular-value gap ${ours.svGap.toFixed(4)}`;
          if (!reference) return { ok: true, detail: `${summary} (no NumPy to compare)` };
          const theirs = reference as { dto: number; sv_gap: number; per_sample: number[]; library: string };
          if (theirs.per_sample?.length !== n) {
            return { ok: false, detail: `the reference scored ${theirs.per_sample?.length} samples, ours ${n}` };
          }
          // Both sides find JᵀJ's eigenvectors to float64 rounding (Jacobi here, LAPACK there): agreement to 1e-9.
          const perSample = largestDifference(ours.perSample, theirs.per_sample);
          const worst = Math.max(perSample, Math.abs(ours.dto - theirs.dto), Math.abs(ours.svGap - theirs.sv_gap));
          return {
            ok: worst <= 1e-9,
            detail: `${summary}; largest difference to ${theirs.library} ${worst.toExponential(1)} (DtO, gap and ` +
              "every sample's distance; tolerance 1e-9)",
          };
        },
      };
    },
  };
}

/**
 * `ds-5000`: disentanglementScore of {@linkcode DS_ROWS} rows, two latents that are a 30° rotation of two uniform
 * regression factors plus N(0, 0.05²) noise (continuous, so no ties in distance), written as float64 .npy for
 * scikit-learn; the check compares DS and every (factor, latent) score.
 */
function dsWorkload(): Workload {
  return {
    name: "ds-5000",
    batch: DS_ROWS,
    plain: { goalMs: DS_GOAL_MS },
    minimum: { warmup: 30, steps: 10 },
    goal: { source: `issue 22, Speed: DS on ${DS_ROWS.toLocaleString("en-US")} rows × 2 latents × 2 factors ≤ 0.5 s` },
    build(rng) {
      const n = DS_ROWS, c = Math.cos(Math.PI / 6), s = Math.sin(Math.PI / 6);
      const factors = new Float64Array(2 * n), codes = new Float64Array(2 * n);
      for (let i = 0; i < n; i++) {
        const w0 = rng.uniform(), w1 = rng.uniform();
        factors.set([w0, w1], 2 * i);
        codes.set([c * w0 + s * w1 + 0.05 * rng.normal(), -s * w0 + c * w1 + 0.05 * rng.normal()], 2 * i);
      }
      const directory = Deno.makeTempDirSync({ prefix: "latentlab-bench-ds-" });
      const paths = { codes: `${directory}/codes.npy`, factors: `${directory}/factors.npy` };
      Deno.writeFileSync(paths.codes, formatNpy(codes, [n, 2]));
      Deno.writeFileSync(paths.factors, formatNpy(factors, [n, 2]));
      const run = () =>
        disentanglementScore({ data: codes, rows: n, cols: 2 }, { data: factors, rows: n, cols: 2 }, [
          "regression",
          "regression",
        ]);
      const ours = run();
      return {
        parameters: 0,
        step() {
          run();
          return Promise.resolve();
        },
        dispose: () => Deno.removeSync(directory, { recursive: true }),
        referenceArgs: paths,
        check(reference) {
          const summary = `DS ${ours.ds.toFixed(6)}`;
          if (!reference) return { ok: true, detail: `${summary} (no scikit-learn to compare)` };
          const theirs = reference as { ds: number; scores: number[]; library: string };
          const scores = ours.scores.flat();
          if (theirs.scores?.length !== scores.length) {
            return { ok: false, detail: `the reference has ${theirs.scores?.length} scores, ours ${scores.length}` };
          }
          // The same neighbours on both sides, means and square roots in another order: agreement to 1e-9.
          const worst = Math.max(Math.abs(ours.ds - theirs.ds), largestDifference(scores, theirs.scores));
          return {
            ok: worst <= 1e-9,
            detail: `${summary}; largest difference to ${theirs.library} ${worst.toExponential(1)} (DS and every ` +
              "(factor, latent) score; tolerance 1e-9)",
          };
        },
      };
    },
  };
}

/** A `firevnet` group dense net and its training step: width, classes, blocks, the optimizer and the inputs. */
interface DenseFiRevNetSpec {
  dim: number;
  classes: number;
  blocks: number;
  /** Width of each bottleneck's two hidden layers. */
  hidden: number;
  optimizer: "adam" | "adamax";
  /** "pixels": uniform values in [0, 1] with random classes (pooled digits); "spheres": lib/data/spheres.ts points. */
  inputs: "pixels" | "spheres";
}

/** The MNIST quick preset's dense fiRevNet: 2×2-pooled digits (d 196), 10 classes, 8 blocks, h 128, Adamax. */
const FIREVNET_196: DenseFiRevNetSpec = {
  dim: 196,
  classes: 10,
  blocks: 8,
  hidden: 128,
  optimizer: "adamax",
  inputs: "pixels",
};
/** The spheres network (App. B.1): d 100, 2 classes, 4 blocks, h 128, Adam (the quick preset's). */
const FIREVNET_100: DenseFiRevNetSpec = {
  dim: 100,
  classes: 2,
  blocks: 4,
  hidden: 128,
  optimizer: "adam",
  inputs: "spheres",
};
/** Learning rate of every `firevnet` training step (the issue's Adam 1e-3 and Adamax 1e-3). */
const FIREVNET_LR = 1e-3;

/**
 * A dense fiRevNet with its blocks' permutations. CouplingFlow keeps them private, so a copy of `rng`'s stream
 * replays its draws (per block a permutation, then the block's MLP). A replay that drifts from the flow gives
 * PyTorch other permutations, which the forward check against it then reports.
 */
function denseFiRevNet(rng: Rng, spec: DenseFiRevNetSpec): { net: DenseFiRevNet; permutations: Int32Array[] } {
  const replay = Rng.fromState(rng.state());
  const net = new DenseFiRevNet(rng, {
    dim: spec.dim,
    classes: spec.classes,
    blocks: spec.blocks,
    hidden: spec.hidden,
  });
  const scratch = new Params(), half = Math.floor(spec.dim / 2);
  const permutations: Int32Array[] = [];
  for (let k = 0; k < spec.blocks; k++) {
    permutations.push(replay.permutation(spec.dim));
    new Mlp(replay, scratch, `block${k}/`, [half, spec.hidden, spec.hidden, spec.dim - half], { zeroLast: true });
  }
  scratch.dispose();
  return { net, permutations };
}

/**
 * Gives every all-zero variable N(0, 0.02²) values (the zero-initialised last layers, biases and scales): at the
 * initial point the couplings are identities and a check would compare little more than permutations.
 */
async function perturbZeros(params: Params, rng: Rng): Promise<void> {
  for (const variable of params.list()) {
    const values = await variable.data();
    if (values.every((v) => v === 0)) {
      tf.tidy(() => variable.assign(tf.tensor(rng.normalArray(variable.size, 0.02), variable.shape)));
    }
  }
}

/** `[rows, dim]` uniform values in [0, 1]. */
const uniformRows = (rng: Rng, rows: number, dim: number) =>
  tf.tensor2d(Float32Array.from({ length: rows * dim }, () => rng.uniform()), [rows, dim]);

/** z_s and z_n of `x` in inference mode, read back. */
async function readLatents(net: DenseFiRevNet | ConvFiRevNet, x: tf.Tensor) {
  const { zs, zn, logDet } = net.forward(x);
  const out = { zs: await zs.data() as Float32Array, zn: await zn.data() as Float32Array };
  tf.dispose([zs, zn, logDet]);
  return out;
}

/** `count` steps of `minimize`, their losses read back. */
async function firstLosses(minimize: () => tf.Scalar, count = 2): Promise<Float32Array> {
  const losses = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const loss = minimize();
    losses[i] = (await loss.data())[0];
    loss.dispose();
  }
  return losses;
}

/**
 * A training step of the dense fiRevNet with the CE objective: the forward (z_s, z_n and the log-det, as the net
 * computes them), the mean softmax cross-entropy of the logits z_s, backward, an Adam or Adamax step (lr 1e-3,
 * betas 0.9, 0.999, ε 1e-8), the loss read back. The weights (the zero-initialised ones
 * perturbed), permutations, inputs and labels go to bench/firevnet_reference.py as .npy; the check compares z_s
 * and z_n before any step and the first two steps' losses.
 */
function denseFiRevNetStepWorkload(
  name: ModelName,
  spec: DenseFiRevNetSpec,
  batch: number,
  goalMs: number,
): Workload {
  return {
    name,
    batch,
    goal: {
      ms: goalMs,
      source: `issue 23, Speed: a dense fiRevNet training step (d ${spec.dim}, batch ${batch}) ≤ ${goalMs} ms on wasm`,
    },
    minimum: { warmup: 10, steps: 5 },
    async build(rng) {
      const { net, permutations } = denseFiRevNet(rng, spec);
      await perturbZeros(net.params, rng);
      let x: tf.Tensor2D, labels: Int32Array;
      if (spec.inputs === "spheres") {
        const points = sampleSpheres(batch, spec.dim, rng);
        x = tf.tensor2d(points.x, [batch, spec.dim]);
        labels = points.y;
      } else {
        x = uniformRows(rng, batch, spec.dim);
        labels = Int32Array.from({ length: batch }, () => rng.int(spec.classes));
      }
      const directory = Deno.makeTempDirSync({ prefix: `latentlab-bench-${name}-` });
      const fixed = {
        x,
        labels: tf.tensor1d(labels, "int32"),
        ...Object.fromEntries(permutations.map((p, k) => [`perm${k}`, tf.tensor1d(p, "int32")])),
      };
      await writeTensors(directory, { ...net.params.entries(""), ...fixed });
      tf.dispose(Object.values(fixed).filter((t) => t !== x));
      const targets = tf.tidy(() => tf.oneHot(tf.tensor1d(labels, "int32"), spec.classes));
      const optimizer = spec.optimizer === "adamax"
        ? tf.train.adamax(FIREVNET_LR, 0.9, 0.999, 1e-8)
        : tf.train.adam(FIREVNET_LR, 0.9, 0.999, 1e-8);
      const variables = net.params.list();
      const minimize = () =>
        optimizer.minimize(
          () => {
            const { zs } = net.forward(x);
            return tf.losses.softmaxCrossEntropy(targets, net.logits(zs)) as tf.Scalar;
          },
          true,
          variables,
        )!;
      const { zs, zn } = await readLatents(net, x);
      const losses = await firstLosses(minimize);
      return {
        parameters: net.params.count(),
        step: () => readLoss(minimize()),
        dispose() {
          optimizer.dispose();
          net.dispose();
          tf.dispose([x, targets]);
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: {
          directory,
          dim: spec.dim,
          classes: spec.classes,
          blocks: spec.blocks,
          hidden: spec.hidden,
          hidden_layers: 2,
          optimizer: spec.optimizer,
          lr: FIREVNET_LR,
        },
        check: (reference) => compareParts({ zs, zn, losses }, reference, { zs: 1e-5, zn: 1e-5, losses: 1e-5 }),
      };
    },
  };
}

/**
 * `firevnet-conv-32`: a training step of the convolutional fiRevNet (lib/models/firevnet.ts `ConvFiRevNet`: side
 * 32, 3 channels, 2 levels × 4 steps of ActNorm → reverse → additive coupling with 64 filters, dropout 0.1, 10
 * classes) at batch {@linkcode FIREVNET_CONV_BATCH} on uniform digits in the reference's input layout
 * (`firevnetMnistInput`): a training-mode forward (dropout on), the logits through the BatchNorm on the batch, the
 * mean softmax cross-entropy, backward, Adamax 1e-3, the loss read back. The ActNorms initialise on the batch first; the
 * weights (the zero-initialised ones perturbed) and running statistics go to bench/firevnet_reference.py. The check
 * compares z_s and z_n in inference mode and the first two steps' losses, those two taken without dropout (the two
 * sides draw different masks).
 */
function convFiRevNetStepWorkload(): Workload {
  const shape = { side: 32, levels: 2, steps: 4, filters: 64 };
  return {
    name: "firevnet-conv-32",
    batch: FIREVNET_CONV_BATCH,
    alsoWebgpu: true,
    async build(rng) {
      const net = new ConvFiRevNet(rng, shape);
      const batch = FIREVNET_CONV_BATCH;
      const x = firevnetMnistInput(Float32Array.from({ length: batch * 784 }, () => rng.uniform()), rng);
      const labels = Int32Array.from({ length: batch }, () => rng.int(net.classes));
      tf.dispose(Object.values(net.forward(x)));
      await perturbZeros(net.params, rng);
      const directory = Deno.makeTempDirSync({ prefix: "latentlab-bench-firevnet-conv-" });
      const labelTensor = tf.tensor1d(labels, "int32");
      await writeTensors(directory, { ...net.params.entries(""), ...net.stats.entries(""), x, labels: labelTensor });
      const targets = tf.oneHot(labelTensor, net.classes);
      labelTensor.dispose();
      const optimizer = tf.train.adamax(FIREVNET_LR, 0.9, 0.999, 1e-8);
      const variables = net.params.list();
      const minimize = (dropout: boolean) =>
        optimizer.minimize(
          () => {
            const { zs } = net.forward(x, { training: dropout });
            return tf.losses.softmaxCrossEntropy(targets, net.logits(zs, { training: true })) as tf.Scalar;
          },
          true,
          variables,
        )!;
      const { zs, zn } = await readLatents(net, x);
      const losses = await firstLosses(() => minimize(false));
      return {
        parameters: net.params.count(),
        step: () => readLoss(minimize(true)),
        dispose() {
          optimizer.dispose();
          net.dispose();
          tf.dispose([x, targets]);
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: {
          directory,
          levels: shape.levels,
          steps: shape.steps,
          classes: net.classes,
          dropout: 0.1,
          lr: 1e-3,
        },
        check: (reference) => compareParts({ zs, zn, losses }, reference, { zs: 1e-5, zn: 1e-5, losses: 1e-5 }),
      };
    },
  };
}

/**
 * `firevnet-inverse-196`: F⁻¹(z_s, z_n) of {@linkcode FIREVNET_196_BATCH} rows through the MNIST quick preset's
 * dense fiRevNet, read back, paired round by round with its forward of the same rows (z_s and z_n read back); goal:
 * the ratio of their medians ≤ {@linkcode FIREVNET_INVERSE_RATIO_GOAL}. Ours only. The check: the round trip's
 * largest |F⁻¹(F(x)) − x|.
 */
function firevnetInverseWorkload(): Workload {
  return {
    name: "firevnet-inverse-196",
    batch: FIREVNET_196_BATCH,
    minimum: { warmup: 30, steps: 10 },
    baseline: {
      model: "firevnet-forward-196",
      ratio: FIREVNET_INVERSE_RATIO_GOAL,
      source: `issue 23, Speed: a dense fiRevNet's inverse (d 196, batch ${FIREVNET_196_BATCH}) ≤ ` +
        `${FIREVNET_INVERSE_RATIO_GOAL}× its forward`,
    },
    async build(rng) {
      const { net } = denseFiRevNet(rng, FIREVNET_196);
      await perturbZeros(net.params, rng);
      const x = uniformRows(rng, FIREVNET_196_BATCH, FIREVNET_196.dim);
      const { zs, zn, logDet } = net.forward(x);
      logDet.dispose();
      const inverse = async () => {
        const back = await net.inverse(zs, zn);
        const values = await back.data() as Float32Array;
        back.dispose();
        return values;
      };
      const error = largestDifference(await inverse(), await x.data() as Float32Array);
      return {
        parameters: net.params.count(),
        async step() {
          await inverse();
        },
        async baselineStep() {
          const out = net.forward(x);
          await out.zs.data();
          await out.zn.data();
          tf.dispose([out.zs, out.zn, out.logDet]);
        },
        dispose() {
          net.dispose();
          tf.dispose([x, zs, zn]);
        },
        check: () => ({
          ok: error <= 1e-4,
          detail: `round trip: largest |F⁻¹(F(x)) − x| ${error.toExponential(1)} (tolerance 1e-4)`,
        }),
      };
    },
  };
}

/**
 * `firevnet-metamers-196`: lib/models/firevnet.ts `metamers` of {@linkcode FIREVNET_METAMER_PAIRS} pairs of
 * uniform rows through the MNIST quick preset's dense fiRevNet (two forwards, one inverse), read back; goal ≥
 * {@linkcode FIREVNET_METAMERS_GOAL_PER_S} metamers per second. Ours only. The check: the metamers' z_s against
 * z_s(A) and z_n against z_n(B).
 */
function firevnetMetamersWorkload(): Workload {
  const pairs = FIREVNET_METAMER_PAIRS;
  return {
    name: "firevnet-metamers-196",
    batch: pairs,
    oursOnly: true,
    goal: {
      imagesPerS: FIREVNET_METAMERS_GOAL_PER_S,
      source: `issue 23, Speed: metamers of the dense fiRevNet (d 196) ≥ ${
        FIREVNET_METAMERS_GOAL_PER_S.toLocaleString("en-US")
      } images/s, timed on ${pairs.toLocaleString("en-US")} pairs`,
    },
    async build(rng) {
      const { net } = denseFiRevNet(rng, FIREVNET_196);
      await perturbZeros(net.params, rng);
      const xA = uniformRows(rng, pairs, FIREVNET_196.dim), xB = uniformRows(rng, pairs, FIREVNET_196.dim);
      const first = await metamers(net, xA, xB);
      const [met, a, b] = await Promise.all([readLatents(net, first), readLatents(net, xA), readLatents(net, xB)]);
      first.dispose();
      const zsError = relativeDifference(a.zs, met.zs), znError = relativeDifference(b.zn, met.zn);
      return {
        parameters: net.params.count(),
        async step() {
          const out = await metamers(net, xA, xB);
          await out.data();
          out.dispose();
        },
        dispose() {
          net.dispose();
          tf.dispose([xA, xB]);
        },
        check: () => ({
          ok: Math.max(zsError, znError) <= 1e-4,
          detail: `metamers' z_s vs z_s(A) ${zsError.toExponential(1)}, z_n vs z_n(B) ${
            znError.toExponential(1)
          } of the largest value (tolerance 1e-4)`,
        }),
      };
    },
  };
}

/** `count` distinct quadruped frames: identities in turn, each frame index once. */
const poseItems = (count: number) =>
  Array.from({ length: count }, (_, k) => ({ identity: k % IDENTITY_COUNT, frame: k }));

/**
 * `pose-step`: one training step of a {@linkcode PoseNet} ({@linkcode POSE_KEYPOINTS} keypoints,
 * {@linkcode POSE_CONVS_PER_STAGE} convolutions per stage) at batch {@linkcode POSE_STEP_BATCH} on quadruped frames:
 * train-mode forward, DeepLabCut's loss on the frames' targets, backward, Adam, the loss read back. The weights,
 * running statistics, frames and targets go to bench/pose_reference.py as .npy; the check compares eval-mode scores
 * and locref before any step and the first two steps' losses.
 */
function poseStepWorkload(): Workload {
  const batch = POSE_STEP_BATCH, K = POSE_KEYPOINTS;
  return {
    name: "pose-step",
    batch,
    goal: {
      ratio: POSE_TORCH_RATIO_GOAL,
      source: `issue 24, Speed: one pose-net step at batch ${batch} (64×64) ≤ ${POSE_TORCH_RATIO_GOAL}× PyTorch`,
    },
    minimum: { warmup: 5, steps: 5 },
    async build(rng) {
      const net = new PoseNet(rng, { keypoints: K, convsPerStage: POSE_CONVS_PER_STAGE });
      const frames = renderFrames(poseItems(batch), 0);
      const side = POSE_NET_SIDE;
      const x = tf.tensor4d(frames.images, [batch, side, side, 3]);
      const t = poseTargets(frames.keypoints, batch, K, QUADRUPED_SIDE, POSE_TARGETS_64);
      const S = t.size;
      const targets = {
        scmap: tf.tensor4d(t.scmap, [batch, S, S, K]),
        locref: tf.tensor4d(t.locref, [batch, S, S, 2 * K]),
        mask: tf.tensor4d(t.mask, [batch, S, S, 2 * K]),
      };
      const directory = Deno.makeTempDirSync({ prefix: "latentlab-bench-pose-" });
      await writeTensors(directory, {
        ...net.params.entries(""),
        ...net.stats.entries(""),
        x,
        target_scmap: targets.scmap,
        target_locref: targets.locref,
        target_mask: targets.mask,
      });
      const before = net.pose(x, { kind: "source" });
      const scores = await before.scores.data() as Float32Array, locref = await before.locref.data() as Float32Array;
      tf.dispose([before.scores, before.locref]);
      const optimizer = tf.train.adam(POSE_LR, 0.9, 0.999, 1e-8);
      const variables = net.poseVariables();
      const minimize = () =>
        optimizer.minimize(
          () => {
            const out = net.pose(x, { kind: "train" });
            return poseLoss(out.scores, out.locref, targets, POSE_TARGETS_64).total;
          },
          true,
          variables,
        )!;
      const losses = await firstLosses(minimize);
      return {
        parameters: variables.reduce((n, v) => n + v.size, 0),
        step: () => readLoss(minimize()),
        dispose() {
          optimizer.dispose();
          net.dispose();
          tf.dispose([x, ...Object.values(targets)]);
          Deno.removeSync(directory, { recursive: true });
        },
        referenceArgs: {
          directory,
          keypoints: K,
          convs_per_stage: POSE_CONVS_PER_STAGE,
          lr: POSE_LR,
          locref_weight: POSE_TARGETS_64.locrefLossWeight,
        },
        check: (reference) =>
          compareParts({ scores, locref, losses }, reference, { scores: 1e-5, locref: 1e-5, losses: 1e-5 }),
      };
    },
  };
}

/**
 * `pose-render`: lib/data/quadruped.ts `renderFrames` of {@linkcode POSE_RENDER_FRAMES} frames (every identity,
 * distinct frame indices), plain JS on one core; goal ≥ {@linkcode POSE_RENDER_GOAL_PER_S} frames/s. Ours only. The
 * check: every keypoint inside the frame and every normalising unit (nose–eye length) positive.
 */
function poseRenderWorkload(): Workload {
  const items = poseItems(POSE_RENDER_FRAMES);
  return {
    name: "pose-render",
    batch: POSE_RENDER_FRAMES,
    plain: {},
    oursOnly: true,
    goal: {
      imagesPerS: POSE_RENDER_GOAL_PER_S,
      source: `issue 24, Speed: rendering ≥ ${POSE_RENDER_GOAL_PER_S.toLocaleString("en-US")} frames/s, timed on ` +
        `${POSE_RENDER_FRAMES} frames of all 30 identities`,
    },
    minimum: { warmup: 10, steps: 5 },
    build() {
      const frames = renderFrames(items, 0);
      const inside = frames.keypoints.every((v) => v >= 0 && v <= QUADRUPED_SIDE);
      const positive = frames.units.every((u) => u > 0);
      return {
        parameters: 0,
        step() {
          renderFrames(items, 0);
          return Promise.resolve();
        },
        dispose() {},
        check: () => ({
          ok: inside && positive,
          detail: `${frames.n} frames: keypoints inside [0, ${QUADRUPED_SIDE}] ${inside ? "yes" : "NO"}, ` +
            `nose–eye units > 0 ${positive ? "yes" : "NO"}`,
        }),
      };
    },
  };
}

const WORKLOADS: Workload[] = [
  vaeWorkload("conv-vae-64", 64, "conv"),
  vaeWorkload("conv-vae-32", 32, "conv"),
  vaeWorkload("mlp-vae-64", 64, "mlp"),
  dataParallelVaeWorkload("conv-vae-64-dp2", 64, "conv"),
  dataParallelVaeWorkload("conv-vae-32-dp2", 32, "conv"),
  dataParallelVaeWorkload("mlp-vae-64-dp2", 64, "mlp"),
  {
    name: "mnist-cnn",
    batch: MNIST_CNN_BATCH,
    build(rng) {
      const trainer = smallCnnTrainer(rng);
      return {
        parameters: trainer.model.params.count(),
        step: () => readLoss(trainer.minimize()),
        dispose: trainer.dispose,
      };
    },
  },
  antStepWorkload(),
  {
    name: "conv-encoder-infer",
    batch: 256,
    build(rng) {
      const encoder = convEncoder(rng, { size: 64, channels: 1, latents: 10 });
      const x = binaryImages(rng, 256, 64);
      return {
        parameters: encoder.params.count(),
        async step() {
          const { mean, logVar } = tf.tidy(() => encoder.encode(x));
          await mean.data();
          tf.dispose([mean, logVar]);
        },
        dispose() {
          encoder.params.dispose();
          x.dispose();
        },
      };
    },
  },
  regressorWorkload("cnn-regressor-32", cnnRegressor),
  regressorWorkload("mlp-regressor-32", mlpRegressor),
  absInferenceWorkload(),
  absCnnGradientWorkload(),
  splitsWorkload(),
  r2Workload(),
  tentStepWorkload(),
  bnCnnTrainWorkload(),
  forwardWorkload("prior-forward-n1", TTA_PRIOR_MODE),
  forwardWorkload("source-forward", { kind: "source" }),
  cebraStepWorkload("cebra-offset10-step-512", {
    architecture: "offset10-model",
    inputs: 120,
    hidden: 32,
    output: 3,
    distance: "cosine",
    lr: 3e-4,
  }),
  cebraStepWorkload("cebra-offset1-mse-step-512", {
    architecture: "offset1-model-mse",
    inputs: 100,
    hidden: 32,
    output: 2,
    distance: "euclidean",
    lr: 1e-4,
  }),
  samplerDrawWorkload("time-delta-draw-512", TIME_DELTA_DRAW_GOAL_MS),
  samplerDrawWorkload("delta-draw-512"),
  ensembleStepWorkload(
    "linear-ensemble-30",
    { members: 30, hidden: [], beta: 1e-2, lr: 1e-3 },
    {
      ms: LINEAR_ENSEMBLE_GOAL_MS,
      source: `issue 22, Speed: an Adam step of 30 linear VAEs (batch ${ENSEMBLE_BATCH} each) ≤ ` +
        `${LINEAR_ENSEMBLE_GOAL_MS} ms`,
    },
    { warmup: 100, steps: 20 },
  ),
  ensembleStepWorkload(
    "synth-mlp-64",
    { members: 9, hidden: [64, 64], beta: 1e-2, lr: 3e-3 },
    {
      ms: SYNTH_MLP_GOAL_MS,
      source: `issue 22, Speed: an Adam step of 9 tanh 64-64 VAEs (batch ${ENSEMBLE_BATCH} each) ≤ ` +
        `${SYNTH_MLP_GOAL_MS} ms`,
    },
    { warmup: 50, steps: 10 },
  ),
  dtoWorkload(),
  dsWorkload(),
  denseFiRevNetStepWorkload("firevnet-dense-196", FIREVNET_196, FIREVNET_196_BATCH, FIREVNET_196_GOAL_MS),
  denseFiRevNetStepWorkload("firevnet-dense-100", FIREVNET_100, FIREVNET_100_BATCH, FIREVNET_100_GOAL_MS),
  convFiRevNetStepWorkload(),
  firevnetInverseWorkload(),
  firevnetMetamersWorkload(),
  poseStepWorkload(),
  poseRenderWorkload(),
];

/** Median, quartiles (linear interpolation) and range of `values`. */
export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => {
    const position = q * (sorted.length - 1), low = Math.floor(position);
    return sorted[low] + (sorted[Math.min(low + 1, sorted.length - 1)] - sorted[low]) * (position - low);
  };
  return { median: at(0.5), q1: at(0.25), q3: at(0.75), min: sorted[0], max: sorted.at(-1)! };
}

/**
 * The PyTorch worker: one python process answering JSON requests line by
 * line (protocol in bench/torch_reference.py).
 */
class TorchWorker {
  #process: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #lines: AsyncIterator<string>;
  #stderr: Promise<string>;

  private constructor(process: Deno.ChildProcess) {
    this.#process = process;
    this.#writer = process.stdin.getWriter();
    this.#lines = readLines(process.stdout)[Symbol.asyncIterator]();
    this.#stderr = new Response(process.stderr).text();
  }

  /**
   * Starts the worker with the first interpreter that imports torch, or
   * returns null. Under `clean` its environment lacks {@linkcode BLAS_OVERRIDES},
   * under `keep` it has {@linkcode MALLOC_KEEP}; BLAS and OpenMP threads are
   * pinned to `threads` always. `corruptions`: start bench/corruptions_reference.py, which serves the
   * corruption entries besides everything bench/torch_reference.py does, with the same loop.
   */
  static async start(
    threads: number,
    env: "clean" | "inherit",
    malloc: "keep" | "default",
    corruptions = false,
  ): Promise<{ worker: TorchWorker; info: ReferenceInfo } | null> {
    const entry = corruptions ? "./corruptions_reference.py" : "./torch_reference.py";
    const script = fileURLToPath(new URL(entry, import.meta.url));
    const childEnv = Deno.env.toObject();
    const removed: Record<string, string> = {};
    if (env === "clean") {
      for (const key of BLAS_OVERRIDES) {
        if (key in childEnv) removed[key] = childEnv[key];
        delete childEnv[key];
      }
    }
    const set: Record<string, string> = {};
    for (const key of ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"]) set[key] = String(threads);
    if (malloc === "keep") Object.assign(set, MALLOC_KEEP);
    Object.assign(childEnv, set);
    // Debian's python3-torch installs under /usr/bin/python3, which a pyenv python3 on PATH may shadow.
    for (const python of ["/usr/bin/python3", "python3"]) {
      let process: Deno.ChildProcess;
      try {
        process = new Deno.Command(python, {
          args: [script, "--threads", String(threads)],
          env: childEnv,
          clearEnv: true,
          stdin: "piped",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
      } catch {
        continue;
      }
      const worker = new TorchWorker(process);
      const ready = await worker.#next();
      if (ready?.ready) {
        const info: ReferenceInfo = {
          python,
          torch: ready.torch as string,
          threads: ready.threads as number,
          env,
          malloc,
          removed_env: removed,
          set_env: set,
          blas: ready.blas as Record<string, unknown>,
          numpy: (ready.numpy as NumpyInfo | undefined) ?? null,
        };
        return { worker, info };
      }
      await worker.close();
      console.error(`${python}: ${(await worker.#stderr).trim().split("\n").at(-1) ?? "no reply"}`);
    }
    return null;
  }

  async #next(): Promise<Record<string, unknown> | null> {
    const { value, done } = await this.#lines.next();
    return done ? null : JSON.parse(value);
  }

  /** Sends one request and returns the reply; throws with the worker's stderr when it died or failed. */
  async request(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    await this.#writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
    const reply = await this.#next();
    if (!reply) throw new Error(`PyTorch worker exited: ${(await this.#stderr).trim().split("\n").at(-1)}`);
    if (reply.error) throw new Error(`PyTorch worker: ${reply.error}`);
    return reply;
  }

  /** Ends its input and waits for it to exit. */
  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    await this.#process.status;
    await this.#stderr;
  }
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffered = "";
  const decoder = new TextDecoder();
  for await (const bytes of stream) {
    buffered += decoder.decode(bytes, { stream: true });
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      yield buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
    }
  }
  if (buffered) yield buffered;
}

async function timeOurs(step: () => Promise<void>, steps: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < steps; i++) {
    const start = performance.now();
    await step();
    times.push(performance.now() - start);
  }
  return times;
}

async function timeReference(worker: TorchWorker, model: string, steps: number) {
  const reply = await worker.request({ op: "time", model, steps });
  return { times: reply.times_ms as number[], faults: reply.minor_faults as number };
}

/** What {@linkcode timeRounds} measured. */
interface PairedTiming {
  state: WorkloadState;
  referenceParameters: number | null;
  check: { ok: boolean; detail: string } | undefined;
  /**
   * Every timed step of ours, of the reference, of the baseline step and of the reference on N threads (empty where
   * that side is absent).
   */
  ours: number[];
  theirs: number[];
  baseline: number[];
  threaded: number[];
  rounds: Round[];
  /** The reference's minor page faults over its timed steps, and the N-thread reference's over its. */
  faults: number;
  threadedFaults: number;
  loadBefore: number;
  loadAfter: number;
  peakRss: number;
}

/** One side of a round: times `steps` steps. */
type Side = {
  kind: "ours" | "reference" | "baseline" | "reference_threads";
  time(steps: number): Promise<{ times: number[]; faults: number }>;
};

/**
 * Rounds of one piece of work: ours and the other sides take turns, each timing `steps` steps per round, the
 * order reversed every other round (ABBA with one other side, ABC CBA with two, ABCD DCBA with three), which
 * cancels a linear drift in machine load from every ratio. The other sides: the state's `baselineStep` when it has
 * one, the reference worker's builder of the same name when there is no baseline step or `work.alsoReference`
 * (none without a worker), and under `work.alsoThreadedReference` the same builder in `threaded`, the reference
 * worker on more threads (none without it). The state is disposed before returning.
 */
async function timeRounds(
  work: PairedWork,
  worker: TorchWorker | null,
  cfg: { rounds: number; steps: number; warmup: number },
  threaded: TorchWorker | null = null,
): Promise<PairedTiming> {
  const state = await work.build(new Rng(0));
  const remote = work.oursOnly || (state.baselineStep && !work.alsoReference) ? null : worker;
  const remoteThreaded = work.oursOnly || !work.alsoThreadedReference ? null : threaded;
  // Both workers build from the same request, so they run the same weights and arguments.
  const buildRequest = {
    op: "build",
    model: work.name,
    ...(state.referenceArgs ? { args: state.referenceArgs } : {}),
  };
  const built = remote ? await remote.request(buildRequest) : null;
  const builtThreaded = remoteThreaded ? await remoteThreaded.request(buildRequest) : null;
  const referenceParameters = built ? built.parameters as number : null;
  const check = state.check?.(built?.check ?? null);
  if (check && !check.ok) console.error(`${work.name}: FAILED: ${check.detail}`);
  for (const parameters of [referenceParameters, builtThreaded ? builtThreaded.parameters as number : null]) {
    if (parameters !== null && parameters !== state.parameters) {
      console.error(
        `${work.name}: ${state.parameters} parameters here, ${parameters} in PyTorch: not the same network`,
      );
    }
  }
  const local = (kind: Side["kind"], step: () => Promise<void>): Side => ({
    kind,
    time: async (steps) => ({ times: await timeOurs(step, steps), faults: 0 }),
  });
  const sides: Side[] = [local("ours", state.step)];
  if (state.baselineStep) sides.push(local("baseline", state.baselineStep));
  if (remote) sides.push({ kind: "reference", time: (steps) => timeReference(remote, work.name, steps) });
  if (remoteThreaded) {
    sides.push({ kind: "reference_threads", time: (steps) => timeReference(remoteThreaded, work.name, steps) });
  }
  const loadBefore = loadavg()[0];
  for (const side of cfg.warmup ? sides : []) await side.time(cfg.warmup);
  // The warm-up's share is not the rounds'.
  state.takeCommunicationShare?.();
  const ours: number[] = [], theirs: number[] = [], baseline: number[] = [], threadedTimes: number[] = [];
  const rounds: Round[] = [];
  let peakRss = Deno.memoryUsage().rss, faults = 0, threadedFaults = 0;
  for (let r = 0; r < cfg.rounds; r++) {
    const measured = new Map<Side["kind"], number[]>();
    for (const side of r % 2 === 1 ? [...sides].reverse() : sides) {
      const { times, faults: sideFaults } = await side.time(cfg.steps);
      measured.set(side.kind, times);
      if (side.kind === "reference_threads") threadedFaults += sideFaults;
      else faults += sideFaults;
    }
    peakRss = Math.max(peakRss, Deno.memoryUsage().rss);
    const a = measured.get("ours")!, reference = measured.get("reference"), base = measured.get("baseline");
    const threads = measured.get("reference_threads");
    ours.push(...a);
    if (reference) theirs.push(...reference);
    if (base) baseline.push(...base);
    if (threads) threadedTimes.push(...threads);
    const oursMs = spread(a).median;
    const referenceMs = reference ? spread(reference).median : null;
    const baselineMs = base ? spread(base).median : null;
    const threadsMs = threads ? spread(threads).median : null;
    const share = state.takeCommunicationShare?.();
    rounds.push({
      ours_ms: oursMs,
      reference_ms: referenceMs,
      ratio: referenceMs ? oursMs / referenceMs : null,
      ...(baselineMs ? { baseline_ms: baselineMs, baseline_ratio: oursMs / baselineMs } : {}),
      ...(threadsMs
        ? {
          reference_threads_ms: threadsMs,
          reference_threads_ratio: oursMs / threadsMs,
          ...(baselineMs ? { baseline_reference_threads_ratio: baselineMs / threadsMs } : {}),
        }
        : {}),
      ...(share === undefined ? {} : { communication_share: share }),
    });
  }
  state.dispose();
  if (remote) await remote.request({ op: "dispose", model: work.name });
  if (remoteThreaded) await remoteThreaded.request({ op: "dispose", model: work.name });
  return {
    state,
    referenceParameters,
    check,
    ours,
    theirs,
    baseline,
    threaded: threadedTimes,
    rounds,
    faults,
    threadedFaults,
    loadBefore,
    loadAfter: loadavg()[0],
    peakRss,
  };
}

/** The baseline comparison of an entry that has one, with its goal's verdict. */
function baselineComparison(spec: NonNullable<Workload["baseline"]>, t: PairedTiming): BaselineComparison {
  const paired = spread(t.rounds.map((r) => r.baseline_ratio!));
  const ratioOfMedians = spread(t.ours).median / spread(t.baseline).median;
  const judged = spec.paired ? paired.median : ratioOfMedians;
  const common = {
    model: spec.model,
    ms_per_step: spread(t.baseline),
    paired_ratio: paired,
    ratio_of_medians: ratioOfMedians,
    source: spec.source,
    judged_on: spec.paired ? "paired_ratio" as const : "ratio_of_medians" as const,
  };
  const floor = spec.throughputFloor;
  if (floor === undefined) return { ...common, ceiling: spec.ratio!, met: judged <= spec.ratio! };
  const throughput = spread(t.rounds.map((r) => r.baseline_ms! / r.ours_ms));
  const judgedThroughput = spec.paired ? throughput.median : 1 / ratioOfMedians;
  return {
    ...common,
    ceiling: 1 / floor,
    met: judgedThroughput >= floor,
    throughput_ratio: throughput,
    throughput_floor: floor,
  };
}

/** Rounds of one model on one backend (see {@linkcode timeRounds}), summarised with its goal and check. */
export async function timeModel(
  workload: Workload,
  backend: string,
  worker: TorchWorker | null,
  cfg: { rounds: number; steps: number; warmup: number },
  threaded: { worker: TorchWorker; info: ReferenceInfo } | null = null,
): Promise<ModelResult> {
  const raised = workload.minimum &&
    (workload.minimum.warmup > cfg.warmup || workload.minimum.steps > cfg.steps);
  const counts = raised
    ? {
      rounds: cfg.rounds,
      warmup: Math.max(cfg.warmup, workload.minimum!.warmup),
      steps: Math.max(cfg.steps, workload.minimum!.steps),
    }
    : cfg;
  const t = await timeRounds(workload, worker, counts, threaded?.worker ?? null);
  const withReference = t.theirs.length > 0;
  // A floor on images/s is a ceiling on the step: batch / floor.
  const floor = workload.goal?.imagesPerS;
  const goalMs = workload.plain?.goalMs ?? workload.goal?.ms ??
    (floor === undefined ? undefined : workload.batch * 1000 / floor);
  const ratio = withReference ? spread(t.rounds.map((r) => r.ratio!)) : null;
  const goal = goalMs === undefined && !workload.goal ? undefined : {
    ...(goalMs === undefined ? {} : { ms: goalMs, met: spread(t.ours).median <= goalMs }),
    ...(floor === undefined
      ? {}
      : { images_per_s: floor, measured_images_per_s: workload.batch * 1000 / spread(t.ours).median }),
    ...(workload.goal?.ratio !== undefined
      ? { ratio: workload.goal.ratio, ratio_met: ratio ? ratio.median <= workload.goal.ratio : null }
      : {}),
    ...(workload.goal ? { source: workload.goal.source } : {}),
  };
  const baseline = workload.baseline && t.baseline.length ? baselineComparison(workload.baseline, t) : null;
  const shares = t.rounds.flatMap((r) => r.communication_share === undefined ? [] : [r.communication_share]);
  return {
    model: workload.name,
    backend,
    batch: workload.batch,
    parameters: t.state.parameters,
    reference_parameters: t.referenceParameters,
    ms_per_step: spread(t.ours),
    reference_ms_per_step: withReference ? spread(t.theirs) : null,
    reference_page_faults_per_step: withReference ? Math.round(t.faults / t.theirs.length) : null,
    ratio,
    rounds: t.rounds,
    load_before: t.loadBefore,
    load_after: t.loadAfter,
    peak_rss_mb: Math.round(t.peakRss / 2 ** 20),
    ...(raised ? { warmup_steps: counts.warmup, steps_per_round: counts.steps } : {}),
    reference_library: workload.oursOnly || (workload.baseline && !workload.alsoReference)
      ? "none"
      : workload.plain
      ? "numpy"
      : "torch",
    ...(goal ? { goal } : {}),
    ...(t.check ? { check: t.check } : {}),
    ...(baseline ? { baseline } : {}),
    reference_threads: threaded && t.threaded.length ? threadsComparison(t, threaded.info.threads) : null,
    communication_share: shares.length ? spread(shares) : null,
  };
}

/** The times of an entry against PyTorch on `threads` threads, paired round by round (no goal). */
function threadsComparison(t: PairedTiming, threads: number): ThreadsComparison {
  const baselineRatios = t.rounds.flatMap((r) =>
    r.baseline_reference_threads_ratio === undefined ? [] : [r.baseline_reference_threads_ratio]
  );
  return {
    threads,
    ms_per_step: spread(t.threaded),
    page_faults_per_step: Math.round(t.threadedFaults / t.threaded.length),
    ratio: spread(t.rounds.map((r) => r.reference_threads_ratio!)),
    baseline_ratio: baselineRatios.length ? spread(baselineRatios) : null,
  };
}

/**
 * One line on an entry with a goal, a check or a baseline (data-path, ABS, ANT and `tta` entries): absolute
 * times, the paired ratios to the reference and to the baseline step, their goals, the `workers` group's times
 * and ratios against PyTorch on N threads and its communication share, the load and the check.
 */
export function dataEntryLine(r: ModelResult): string {
  const f = (v: number) => v.toFixed(v >= 100 ? 0 : 1), x = (v: number) => v.toFixed(2);
  const iqr = (s: Spread, g = f) => `IQR ${g(s.q1)}–${g(s.q3)}`;
  const range = (s: Spread) => `${iqr(s, x)}, min–max ${x(s.min)}–${x(s.max)}`;
  const verdict = (met: boolean | null | undefined) => met === null ? "not measured" : met ? "met" : "NOT met";
  const q = r.ratio, ref = r.reference_ms_per_step, b = r.baseline;
  const name = r.reference_library === "numpy" ? "NumPy" : "PyTorch";
  const parts = [`ours ${f(r.ms_per_step.median)} ms (${iqr(r.ms_per_step)})`];
  if (b) {
    parts.push(
      `${b.model} step ${f(b.ms_per_step.median)} ms (${iqr(b.ms_per_step)}); ratio of medians ` +
        `${x(b.ratio_of_medians)}, paired ratio ${x(b.paired_ratio.median)} (${range(b.paired_ratio)})` +
        (b.throughput_ratio && b.throughput_floor !== undefined
          ? `, throughput ratio ${x(b.throughput_ratio.median)} (${range(b.throughput_ratio)}); goal ≥ ` +
            `${b.throughput_floor}× throughput ${verdict(b.met)}`
          : `; goal ≤ ${b.ceiling}× ${verdict(b.met)}` +
            (b.judged_on === "paired_ratio" ? " (on the paired ratio)" : "")),
    );
  }
  if (r.reference_library !== "none") {
    parts.push(
      (ref ? `${name} ${f(ref.median)} ms (${iqr(ref)})` : `no ${name}`) +
        (q ? `, ratio ours/${name} ${x(q.median)} (${range(q)})` : ""),
    );
  }
  const goal = r.goal;
  if (goal) {
    const goals = [
      ...(goal.images_per_s !== undefined
        ? [`≥ ${goal.images_per_s} images/s (${goal.measured_images_per_s!.toFixed(0)}) ${verdict(goal.met)}`]
        : goal.ms === undefined
        ? []
        : [`≤ ${goal.ms} ms ${verdict(goal.met)}`]),
      ...(goal.ratio === undefined ? [] : [`ratio ≤ ${goal.ratio} ${verdict(goal.ratio_met)}`]),
    ];
    parts[parts.length - 1] += `; goal ${goals.join(", ")}`;
  }
  const n = r.reference_threads;
  if (n) {
    parts.push(
      `PyTorch on ${n.threads} threads ${f(n.ms_per_step.median)} ms (${iqr(n.ms_per_step)}), ratio ours/PyTorch-` +
        `${n.threads} ${x(n.ratio.median)} (${range(n.ratio)})` +
        (n.baseline_ratio
          ? `, ${r.baseline?.model ?? "baseline"}/PyTorch-${n.threads} ${x(n.baseline_ratio.median)} ` +
            `(${range(n.baseline_ratio)})`
          : "") +
        "; no goal",
    );
  }
  const c = r.communication_share;
  if (c) {
    const pct = (v: number) => `${(100 * v).toFixed(0)}%`;
    parts.push(`communication ${pct(c.median)} of the gradient time (IQR ${(100 * c.q1).toFixed(0)}–${pct(c.q3)})`);
  }
  return `${r.model}${r.backend === "js" ? "" : ` (${r.backend})`}: ${parts.join(", ")}` +
    `; load ${r.load_before.toFixed(2)} → ${r.load_after.toFixed(2)}` +
    (r.check ? `; check ${r.check.ok ? "ok" : "FAILED"}: ${r.check.detail}` : "");
}

/** The PyTorch worker in words: versions, threads, the BLAS it loaded and the environment it got. */
export function torchProcessLine(info: ReferenceInfo): string {
  const openblas = info.blas.openblas as { config: string; core: string; threads: number } | null;
  const blas = openblas
    ? `${openblas.config} (core ${openblas.core}, ${openblas.threads} thread(s))`
    : `${info.blas.blas_info ?? "unknown"} (torch build setting)`;
  const removed = Object.keys(info.removed_env);
  return `PyTorch ${info.torch} in ${info.python} on ${info.threads} thread(s), BLAS ${blas}; ` +
    (info.env === "clean"
      ? removed.length ? `${removed.join(" and ")} unset in its process` : `no ${BLAS_OVERRIDES.join(" or ")} to unset`
      : "inheriting the bench's OPENBLAS_* settings") +
    `; set there: ${Object.entries(info.set_env).map(([k, v]) => `${k}=${v}`).join(" ")}`;
}

/**
 * Single-thread sgemm rates of the active backend in GFLOP/s: an n×n×n
 * matMul and a 1×1 convolution of the same GEMM shape with 8n rows
 * (XNNPACK's GEMM microkernel on wasm), each timed by its fastest of
 * `repeats` runs, since a limit is a best case.
 */
async function backendGemmGflops(n: number, repeats: number): Promise<{ matmul: number; conv1x1: number }> {
  const rng = new Rng(1);
  const fastest = async (run: () => tf.Tensor) => {
    let best = Infinity;
    for (let i = 0; i <= repeats; i++) {
      const start = performance.now();
      const out = run();
      await out.data();
      out.dispose();
      if (i > 0) best = Math.min(best, performance.now() - start);
    }
    return best / 1000;
  };
  const a = tf.tensor2d(rng.normalArray(n * n), [n, n]), b = tf.tensor2d(rng.normalArray(n * n), [n, n]);
  const x = tf.tensor4d(rng.normalArray(8 * n * n), [1, 8 * n, 1, n]), w = tf.reshape(b, [1, 1, n, n]) as tf.Tensor4D;
  const matmul = 2 * n ** 3 / await fastest(() => tf.matMul(a, b)) / 1e9;
  const conv1x1 = 2 * 8 * n ** 3 / await fastest(() => tf.conv2d(x, w, 1, "valid")) / 1e9;
  tf.dispose([a, b, x, w]);
  return { matmul, conv1x1 };
}

const numel = (shape: number[]) => shape.reduce((p, d) => p * d, 1);

/**
 * FLOPs (2 per multiply-add) of one call of a convolution or matrix-product
 * kernel from its input and output shapes, or null for other kernels. Shapes
 * follow the tfjs kernel inputs: Conv2D (x, filter), Conv2DBackpropInput (dy,
 * filter), Conv2DBackpropFilter (x, dy) → filter, BatchMatMul (a, b).
 */
export function kernelFlops(name: string, inputs: number[][], output: number[]): number | null {
  switch (name) {
    case "Conv2D":
    case "FusedConv2D": {
      const [kh, kw, ci] = inputs[1];
      return 2 * numel(output) * kh * kw * ci;
    }
    case "Conv2DBackpropInput": {
      const [kh, kw, ci] = inputs[1];
      return 2 * numel(inputs[0]) * kh * kw * ci;
    }
    case "Conv2DBackpropFilter": {
      const [kh, kw, ci] = output;
      return 2 * numel(inputs[1]) * kh * kw * ci;
    }
    case "BatchMatMul":
    case "_FusedMatMul": {
      // Output [..., m, n]; the shared dimension k = |a| · n / |output| whatever the transposes.
      const n = output.at(-1)!;
      return 2 * numel(output) * (numel(inputs[0]) * n / numel(output));
    }
    default:
      return null;
  }
}

/** Per-kernel time of conv VAE 64×64 Adam steps on the active backend, with GFLOP/s against its sgemm rate. */
async function profileConvVae(
  backend: string,
  torch: ProfileReport["gemm"]["torch"],
  steps = 3,
): Promise<ProfileReport> {
  const n = 512;
  const rates = await backendGemmGflops(n, 7);
  const limit = Math.max(rates.matmul, rates.conv1x1);
  const trainer = vaeTrainer(new Rng(0), 64, "conv");
  for (let i = 0; i < 2; i++) trainer.minimize().dispose();
  const byKernel = new Map<string, { calls: number; ms: number; flops: number | null }>();
  const calls: KernelCall[] = [];
  for (let i = 0; i < steps; i++) {
    const info = await tf.profile(() => trainer.minimize());
    for (const k of info.kernels) {
      const ms = Number(k.kernelTimeMs);
      const flops = kernelFlops(k.name, k.inputShapes as number[][], k.outputShapes[0] as number[]);
      const entry = byKernel.get(k.name) ?? { calls: 0, ms: 0, flops: flops === null ? null : 0 };
      entry.calls++;
      entry.ms += ms;
      if (flops !== null) entry.flops! += flops;
      byKernel.set(k.name, entry);
      if (flops !== null && i === steps - 1) {
        calls.push({ name: k.name, input_shapes: k.inputShapes as number[][], ms, gflops: flops / ms / 1e6 });
      }
    }
    tf.dispose(info.result as tf.Tensor);
  }
  trainer.dispose();
  const total = [...byKernel.values()].reduce((s, k) => s + k.ms, 0);
  const kernels = [...byKernel].sort((a, b) => b[1].ms - a[1].ms).map(([name, k]): KernelProfile => {
    const gflops = k.flops === null ? null : k.flops / k.ms / 1e6;
    return {
      name,
      calls: k.calls / steps,
      ms: k.ms / steps,
      share: k.ms / total,
      gflop: k.flops === null ? null : k.flops / steps / 1e9,
      gflops,
      of_gemm_limit: gflops === null ? null : gflops / limit,
    };
  });
  return {
    backend,
    model: "conv-vae-64",
    steps,
    total_ms: total / steps,
    gemm: { n, backend_matmul_gflops: rates.matmul, backend_conv1x1_gflops: rates.conv1x1, limit_gflops: limit, torch },
    kernels,
    calls: calls.sort((a, b) => b.ms - a.ms),
  };
}

function datasetThroughput(convStepMs: number | null, batches = 30): BenchReport["datasets"] {
  return DATASET_NAMES.map((name) => {
    const dataset = loadDataset(name);
    const rng = new Rng(0);
    sampleBatch(dataset, 64, rng); // warm-up: sprite masks and ray-cast layers are cached lazily
    const times: number[] = [];
    for (let i = 0; i < batches; i++) {
      const start = performance.now();
      sampleBatch(dataset, 64, rng);
      times.push(performance.now() - start);
    }
    const ms = spread(times).median;
    return {
      name,
      images_per_s: Math.round(64_000 / ms),
      batch_ms: ms,
      share_of_conv_vae_64: convStepMs ? ms / convStepMs : null,
    };
  });
}

/** Mean |a − b| over all values: how much a corruption changed the digits. */
function meanAbsoluteChange(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let sum = 0;
  for (let k = 0; k < a.length; k++) sum += Math.abs(a[k] - b[k]);
  return sum / a.length;
}

/**
 * How far apart the two sides' mean changes may be for the sanity check to pass: the draws differ, so one
 * pass over 1,000 digits agrees to a few per cent where the semantics agree, while a corruption that does
 * something else (another scale, a missed step) is off by far more.
 */
const CHANGE_TOLERANCE = { relative: 0.2, absolute: 0.002 };

/**
 * `images` `[n, 28, 28, 1]` digits: a seeded stratified draw of the official test digits (all 10,000 when
 * n ≥ 10,000), then training digits for the rest.
 */
function realDigits(n: number): Observations {
  const test = Math.min(n, MNIST_TEST_TOTAL), train = Math.max(1, n - test);
  const { train: a, test: b } = loadMnist({ seed: 0, train, test });
  const values = new Float32Array(n * 784);
  values.set(b.images.subarray(0, test * 784));
  if (n > test) values.set(a.images.subarray(0, (n - test) * 784), test * 784);
  return { values, n, shape: [28, 28, 1] };
}

/**
 * The `--corruptions` section: each corruption of `images` real digits, ours against the NumPy reference in
 * paired rounds (one pass per side per round), then the 15 MNIST-C corruptions of `allImages` digits, ours, once.
 */
async function corruptionSection(
  worker: TorchWorker | null,
  cfg: { rounds: number; warmup: number; images: number; allImages: number },
): Promise<CorruptionSection> {
  const digits = realDigits(cfg.images);
  const dir = Deno.makeTempDirSync({ prefix: "latentlab-bench-corruptions-" });
  const path = `${dir}/digits.npy`;
  Deno.writeFileSync(path, formatNpy(digits.values, [digits.n, 28, 28, 1]));
  const entries = [
    ...MNIST_C_CORRUPTIONS.map((name) => ({ suite: "mnist_c" as const, name })),
    ...COMMON_CORRUPTIONS.map((name) => ({ suite: "cifar" as const, name })),
  ];
  const results: CorruptionResult[] = [];
  // A pass over 1,000 digits is long enough to time alone, and one warm-up pass compiles every path.
  const rounds = { rounds: cfg.rounds, steps: 1, warmup: Math.min(1, cfg.warmup) };
  try {
    for (const { suite, name } of entries) {
      const run = suite === "mnist_c"
        ? () => mnistC(digits, name as typeof MNIST_C_CORRUPTIONS[number], { seed: 0 })
        : () =>
          corrupt(digits, name as typeof COMMON_CORRUPTIONS[number], CORRUPTION_SEVERITY, { seed: 0, table: "cifar" });
      let ours = NaN, reference: number | null = null, substitute: string | null = null;
      const work: PairedWork = {
        name: `${suite}/${name}`,
        build() {
          ours = meanAbsoluteChange(run().values, digits.values);
          return {
            parameters: 0,
            step() {
              run();
              return Promise.resolve();
            },
            dispose() {},
            referenceArgs: { images: path, seed: 0 },
            check(theirs) {
              const r = theirs as { mean_abs_change: number; substitute: string | null } | null;
              reference = r?.mean_abs_change ?? null;
              substitute = r?.substitute ?? null;
              if (reference === null) return { ok: true, detail: `mean change ${ours.toFixed(4)} (no NumPy)` };
              const gap = Math.abs(ours - reference);
              const ok = gap <= CHANGE_TOLERANCE.absolute + CHANGE_TOLERANCE.relative * Math.max(ours, reference);
              return { ok, detail: `mean |change| ours ${ours.toFixed(4)}, NumPy ${reference.toFixed(4)}` };
            },
          };
        },
      };
      console.error(`timing ${suite}/${name} on ${digits.n} digits beside NumPy ...`);
      const t = await timeRounds(work, worker, rounds);
      const perSecond = (ms: number[]) => spread(ms.map((v) => digits.n * 1000 / v));
      const speed = t.theirs.length ? spread(t.rounds.map((r) => r.reference_ms! / r.ours_ms)) : null;
      const result: CorruptionResult = {
        suite,
        name,
        severity: suite === "cifar" ? CORRUPTION_SEVERITY : null,
        images: digits.n,
        images_per_s: perSecond(t.ours),
        reference_images_per_s: t.theirs.length ? perSecond(t.theirs) : null,
        speed_ratio: speed,
        rounds: t.rounds,
        goal_met: speed ? speed.median >= CORRUPTION_SPEED_GOAL : null,
        check: { ...t.check!, ours, reference },
        reference_substitute: substitute,
        load_before: t.loadBefore,
        load_after: t.loadAfter,
      };
      results.push(result);
      console.error(corruptionLine(result));
    }
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  let all: CorruptionSection["mnist_c_all"] = null;
  if (cfg.allImages > 0) {
    const many = realDigits(cfg.allImages);
    console.error(`timing the 15 MNIST-C corruptions of ${many.n} digits, ours ...`);
    const perCorruption: Record<string, number> = {};
    const loadBefore = loadavg()[0];
    for (const name of MNIST_C_CORRUPTIONS) {
      const start = performance.now();
      mnistC(many, name, { seed: 0 });
      perCorruption[name] = (performance.now() - start) / 1000;
    }
    const seconds = Object.values(perCorruption).reduce((a, b) => a + b, 0);
    // The goal is set for 10,000 digits; a smaller run is reported without a verdict.
    const met = many.n === 10_000 ? seconds <= MNIST_C_SECONDS_GOAL : null;
    all = {
      images: many.n,
      seconds,
      goal_s: MNIST_C_SECONDS_GOAL,
      met,
      per_corruption_s: perCorruption,
      load_before: loadBefore,
      load_after: loadavg()[0],
    };
    console.error(
      `MNIST-C, 15 corruptions of ${many.n} digits: ${seconds.toFixed(1)} s; goal ≤ ${MNIST_C_SECONDS_GOAL} s ` +
        `${met === null ? "not judged (not 10,000 digits)" : met ? "met" : "NOT met"}; load ${
          loadBefore.toFixed(2)
        } → ` +
        `${all.load_after.toFixed(2)}`,
    );
  }
  return {
    digits: "lib/data/mnist.ts loadMnist({ seed: 0 }): official test digits, then training digits",
    images: digits.n,
    rounds: rounds.rounds,
    warmup: rounds.warmup,
    table: "cifar",
    severity: CORRUPTION_SEVERITY,
    speed_goal: CORRUPTION_SPEED_GOAL,
    results,
    mnist_c_all: all,
  };
}

/** One line per corruption: both sides' images/s, the paired speed ratio and its goal, the load and the check. */
export function corruptionLine(r: CorruptionResult): string {
  const f = (v: number) => v.toFixed(0), q = r.speed_ratio, ref = r.reference_images_per_s;
  return `${r.suite}/${r.name}: ours ${f(r.images_per_s.median)} images/s` +
    (ref ? `, NumPy ${f(ref.median)} images/s` : ", no NumPy") +
    (q
      ? `, ours/NumPy ${q.median.toFixed(2)} (IQR ${q.q1.toFixed(2)}–${q.q3.toFixed(2)}, min–max ` +
        `${q.min.toFixed(2)}–${q.max.toFixed(2)}); goal ≥ ${CORRUPTION_SPEED_GOAL} ${r.goal_met ? "met" : "NOT met"}`
      : "") +
    `; load ${r.load_before.toFixed(2)} → ${r.load_after.toFixed(2)}; check ${r.check.ok ? "ok" : "FAILED"}: ` +
    r.check.detail;
}

/** The reference process in words: NumPy's version and BLAS, and the environment it got. */
export function referenceProcessLine(info: ReferenceInfo): string {
  const numpy = info.numpy;
  const blas = numpy?.openblas
    ? `${numpy.openblas.config} (core ${numpy.openblas.core}, ${numpy.openblas.threads} thread(s))`
    : numpy?.library ?? "none found";
  const removed = Object.keys(info.removed_env);
  return `NumPy ${numpy?.version ?? "?"} in ${info.python}, BLAS ${blas}; ` +
    (info.env === "clean"
      ? removed.length ? `${removed.join(" and ")} unset in its process` : `no ${BLAS_OVERRIDES.join(" or ")} to unset`
      : "inheriting the bench's OPENBLAS_* settings") +
    `; set there: ${Object.entries(info.set_env).map(([k, v]) => `${k}=${v}`).join(" ")}`;
}

async function availableBackends(choice: string): Promise<string[]> {
  if (choice === "auto") return [(await selectBackend("auto")).name];
  if (choice !== "all") return [choice];
  const names = ["wasm", "cpu"];
  try {
    const info = await selectBackend("webgpu");
    if (!info.softwareAdapter) names.unshift("webgpu");
  } catch {
    // no adapter: nothing to add
  }
  return names;
}

async function machineInfo(): Promise<BenchReport["machine"]> {
  const load = loadavg();
  return {
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    cores: cpus().length,
    memory_gb: Math.round(totalmem() / 2 ** 30),
    os: `${Deno.build.os} ${Deno.build.arch}`,
    deno: Deno.version.deno,
    v8: Deno.version.v8,
    tfjs: tf.version.tfjs,
    tfjs_wasm: version_wasm,
    wasm_simd: await tf.env().getAsync("WASM_HAS_SIMD_SUPPORT") as boolean,
    wasm_threads: await tf.env().getAsync("WASM_HAS_MULTITHREAD_SUPPORT") as boolean,
    load_start: load,
    load_end: load,
  };
}

async function main(args: string[]): Promise<void> {
  const { flags, positionals } = parseCommandLine(args);
  const jsonPath = flags.get("json"), writeReadme = flags.get("write-readme");
  flags.delete("json");
  flags.delete("write-readme");
  if (flags.has("help")) {
    console.log(
      "usage: deno task bench [--backend auto|wasm|cpu|webgpu|all] [--models a,b] [--rounds N] [--steps N] " +
        "[--warmup N] [--threads N] [--torch auto|off] [--torch_env clean|inherit] [--torch_malloc keep|default] " +
        "[--profile] [--corruptions] [--corruption_images N] [--mnist_c_images N] [--only group] [--json path] " +
        "[--write-readme]\n" +
        `models: ${MODEL_NAMES.join(", ")} (default: all but ant-step, which --corruptions adds, and the groups')\n` +
        `groups: ${Object.entries(BENCH_GROUPS).map(([name, group]) => `${name} = ${group.join(", ")}`).join("; ")}`,
    );
    return;
  }
  let cfg;
  try {
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    if (jsonPath === true) throw new UsageError("--json needs a path");
    if (writeReadme !== undefined && writeReadme !== true) throw new UsageError("--write-readme takes no value");
    cfg = resolveConfig(OPTIONS, {}, flags, ["json", "write-readme"]);
    if (cfg.only.length && flags.has("models")) {
      throw new UsageError("give --models or --only, not both: --only times its groups' entries instead");
    }
    if (cfg.only.length && writeReadme) {
      throw new UsageError("--write-readme rewrites the whole speed table, which --only would cut to its groups");
    }
  } catch (error) {
    if (error instanceof UsageError) exitWithUsageError(error.message);
    throw error;
  }
  const chosenModels: readonly string[] = cfg.only.length
    ? MODEL_NAMES.filter((name) => cfg.only.some((group) => (BENCH_GROUPS[group] as readonly string[]).includes(name)))
    : cfg.models;
  // The issue's speed goals come as one: the corruption section brings the ANT step with it.
  const models: string[] = cfg.corruptions && !chosenModels.includes("ant-step")
    ? MODEL_NAMES.filter((name) => chosenModels.includes(name) || name === "ant-step")
    : [...chosenModels];
  const backends = await availableBackends(cfg.backend);
  const machine = await machineInfo();
  const started = cfg.torch === "auto"
    ? await TorchWorker.start(
      cfg.threads,
      cfg.torch_env as "clean" | "inherit",
      cfg.torch_malloc as "keep" | "default",
      cfg.corruptions,
    )
    : null;
  if (!started && cfg.torch === "auto") console.error("no python3 with torch found: running without the reference");
  if (started) console.error(`reference: ${torchProcessLine(started.info)}`);
  // The `workers` group's entries run PyTorch on as many threads as they have shards too, in a worker of its own.
  const threaded = started && WORKLOADS.some((w) => w.alsoThreadedReference && models.includes(w.name))
    ? await TorchWorker.start(
      DATA_PARALLEL_SHARDS,
      cfg.torch_env as "clean" | "inherit",
      cfg.torch_malloc as "keep" | "default",
    )
    : null;
  if (threaded) console.error(`reference on ${DATA_PARALLEL_SHARDS} threads: ${torchProcessLine(threaded.info)}`);
  console.error(`1-minute load average at the start: ${machine.load_start[0].toFixed(2)} on ${machine.cores} cores`);
  const worker = started?.worker ?? null;
  const report: BenchReport = {
    schema: "latentlab-bench/1",
    date: new Date().toISOString(),
    argv: args,
    config: {
      rounds: cfg.rounds,
      steps: cfg.steps,
      warmup: cfg.warmup,
      threads: cfg.threads,
      torch_env: cfg.torch_env as "clean" | "inherit",
      torch_malloc: cfg.torch_malloc as "keep" | "default",
      models,
      backends,
      corruptions: cfg.corruptions,
      only: cfg.only,
    },
    machine,
    reference: started?.info ?? null,
    reference_threads: threaded?.info ?? null,
    results: [],
    datasets: [],
    profile: null,
  };
  try {
    const chosen = WORKLOADS.filter((w) => models.includes(w.name));
    const onBackends = chosen.filter((w) => !w.plain), plain = chosen.filter((w) => w.plain);
    for (const backend of onBackends.length ? backends : []) {
      const info = await selectBackend(backend as "wasm" | "cpu" | "webgpu");
      if (backend === "webgpu") report.machine.webgpu_adapter = info.adapter;
      for (const workload of onBackends) {
        console.error(`timing ${workload.name} on ${backend} ...`);
        const result = await timeModel(workload, backend, worker, cfg, threaded);
        report.results.push(result);
        if (result.goal || result.check || result.baseline) console.error(dataEntryLine(result));
      }
    }
    const webgpuToo = onBackends.filter((w) => w.alsoWebgpu && !backends.includes("webgpu"));
    if (webgpuToo.length) {
      const info = await selectBackend("webgpu").catch(() => null);
      if (info && !info.softwareAdapter) {
        report.machine.webgpu_adapter = info.adapter;
        for (const workload of webgpuToo) {
          console.error(`timing ${workload.name} on webgpu ...`);
          const result = await timeModel(workload, "webgpu", worker, cfg);
          report.results.push(result);
          console.error(dataEntryLine(result));
        }
      } else {
        // A software adapter runs the shaders on this CPU: its times say nothing about a GPU.
        const reason = info
          ? `the only WebGPU adapter, "${info.adapter}", renders in software on this CPU (--backend webgpu times it)`
          : "no WebGPU adapter";
        report.not_timed = webgpuToo.map((w) => ({ model: w.name, backend: "webgpu", reason }));
        for (const w of webgpuToo) console.error(`${w.name} not timed on webgpu: ${reason}`);
      }
      await selectBackend(backends.at(-1) as "wasm" | "cpu" | "webgpu");
    }
    if (started && plain.some((w) => !w.oursOnly)) {
      console.error(`NumPy reference: ${referenceProcessLine(started.info)}`);
    }
    for (const workload of plain) {
      console.error(`timing ${workload.name} (plain JS)${workload.oursOnly ? "" : " beside NumPy"} ...`);
      const result = await timeModel(workload, "js", worker, cfg);
      report.results.push(result);
      console.error(dataEntryLine(result));
    }
    if (cfg.corruptions) {
      if (started) console.error(`corruption reference: ${referenceProcessLine(started.info)}`);
      report.corruptions = await corruptionSection(worker, {
        rounds: cfg.rounds,
        warmup: cfg.warmup,
        images: cfg.corruption_images,
        allImages: cfg.mnist_c_images,
      });
    }
    if (cfg.profile) {
      const backend = backends.find((b) => b !== "cpu") ?? backends[0];
      await selectBackend(backend as "wasm" | "cpu" | "webgpu");
      console.error(`profiling conv-vae-64 on ${backend} ...`);
      const torchGemm = worker
        ? await worker.request({ op: "gemm", n: 512, repeats: 7 }) as { gflops: number; cpu_per_wall: number }
        : null;
      report.profile = await profileConvVae(backend, torchGemm);
    }
  } finally {
    await worker?.close();
    await threaded?.worker.close();
  }
  const convStep = report.results.find((r) => r.model === "conv-vae-64" && r.backend === backends[0]);
  // --only times its groups and nothing else.
  if (!cfg.only.length) report.datasets = datasetThroughput(convStep?.ms_per_step.median ?? null);
  report.machine.load_end = loadavg();
  // The same tables README.md shows, so what the terminal says is what the README will say.
  console.log(`\n${speedSection(report)}`);
  if (typeof jsonPath === "string") {
    Deno.writeTextFileSync(jsonPath, JSON.stringify(report, null, 2) + "\n");
    console.error(`wrote ${jsonPath}`);
  }
  if (writeReadme) {
    writeSpeedTable(report, README_PATH);
    console.error(`wrote the speed table of ${README_PATH}`);
  }
  const failed: string[] = [
    ...report.results.filter((r) => r.check && !r.check.ok).map((r) => r.model),
    ...(report.corruptions?.results ?? []).filter((r) => !r.check.ok).map((r) => `${r.suite}/${r.name}`),
  ];
  if (failed.length) {
    console.error(`FAILED: ${failed.join(", ")}: results failed their check (see above)`);
    Deno.exitCode = 1;
  }
}

if (import.meta.main) await main(Deno.args);
