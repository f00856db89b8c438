/**
 * The classifiers and regressors beside the VAEs in the speed table, each beside the same network in PyTorch
 * (bench/torch_reference.py):
 *
 * - `mnist-cnn`: one Adam 1e-3 step of the small MNIST CNN (lib/models/small_cnn.ts) at batch
 *   {@linkcode MNIST_CNN_BATCH}, lib/models/cross_entropy_step.ts, the step of lib/train/classifier.ts.
 * - `ant-step`: one step of adversarial noise training of that CNN, an Adam step of the noise generator
 *   (lib/train/noise_training.ts `antGeneratorStep`, ε 10) and the classifier's step on the ANT batch
 *   (`antClassifierBatch` after epoch 0: 30% current generator, two 10% slices from saved generators, 50% clean),
 *   paired round by round with a plain `mnist-cnn` step in the same process; goal: the ratio of their medians ≤
 *   {@linkcode ANT_STEP_RATIO_GOAL}. It is not in the default model list; `--models ant-step` or `--corruptions`
 *   adds it.
 * - `cnn-regressor-32`, `mlp-regressor-32`: the generalization benchmark's regressors on 32×32×1 images with 5
 *   factors, one Adam 5e-4 step of the MSE at batch 64 (lib/models/regressors.ts `regressionStep`).
 * - ABS (Schott et al. 2019, App. A.7), each with an absolute goal per call and a ceiling on the paired ratio:
 *   `abs-inference` is one `Abs.logits` call on {@linkcode ABS_INFERENCE_BATCH} digits (ten class decoders, 1,000
 *   prototypes, 5 Adam steps; goal ≤ 1 s per call and ≤ 2× PyTorch); `abs-cnn-input-grad` is the input gradient of
 *   the cross-entropy through the App. A.7 CNN at batch {@linkcode ABS_CNN_BATCH}, the step every gradient attack
 *   repeats. Both sides run the same weights (ours, untrained, handed over as .npy), and their results are compared
 *   once before timing; a mismatch fails the entry.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";
import { Rng } from "../../lib/core/rng.ts";
import { crossEntropy, lossGradient } from "../../lib/attacks/attack.ts";
import { Abs } from "../../lib/models/abs.ts";
import { classVae } from "../../lib/models/abs_vae.ts";
import { absCnn, absCnnModel } from "../../lib/models/abs_cnn.ts";
import {
  cnnRegressor,
  mlpRegressor,
  regressionStep,
  type Regressor,
  type RegressorOptions,
} from "../../lib/models/regressors.ts";
import { type Classifier, smallCnn } from "../../lib/models/small_cnn.ts";
import { crossEntropyStep } from "../../lib/models/cross_entropy_step.ts";
import {
  antClassifierBatch,
  antGeneratorStep,
  createAnt,
  disposeAnt,
  saveGeneratorState,
} from "../../lib/train/noise_training.ts";
import {
  binaryImages,
  compareValues,
  prefixed,
  randomClasses,
  readLoss,
  uniformDigits,
  writeTensors,
} from "../harness/checks.ts";
import type { ModelName } from "../harness/names.ts";
import type { Workload } from "../harness/rounds.ts";

/** Images per step of `mnist-cnn` and `ant-step`. */
export const MNIST_CNN_BATCH = 128;
/** Ceiling on an ANT step's median over a plain smallCnn step's. */
export const ANT_STEP_RATIO_GOAL = 3;
/** Digits of the ABS entries: `abs-inference` classifies this many per call. */
export const ABS_INFERENCE_BATCH = 30;
/** Images per input gradient of the `abs-cnn-input-grad` entry. */
export const ABS_CNN_BATCH = 100;
/** The ABS entries' goal. */
const ABS_GOAL_SOURCE = "an ABS logits call ≤ 1 s on 30 digits, at most 2× PyTorch's time";

/**
 * The `mnist-cnn` step: lib/models/small_cnn.ts on {@linkcode MNIST_CNN_BATCH} uniform-pixel images with random
 * classes, one Adam 1e-3 step of the softmax cross-entropy.
 */
export function smallCnnTrainer(rng: Rng) {
  const model: Classifier = smallCnn(rng);
  const images = uniformDigits(rng, MNIST_CNN_BATCH);
  const classes = randomClasses(rng, MNIST_CNN_BATCH);
  const optimizer = tf.train.adam(1e-3);
  return {
    model,
    images,
    /** `[batch]` int32 classes. */
    classes,
    /** One Adam step on `x` (default: its own images) with its classes; returns the loss (the caller disposes it). */
    minimize: (x: tf.Tensor4D = images): tf.Scalar =>
      crossEntropyStep(optimizer, model.params.list(), () => model.logits(x), classes),
    dispose() {
      model.params.dispose();
      optimizer.dispose();
      tf.dispose([images, classes]);
    },
  };
}

const MNIST_CNN_WORKLOAD: Workload = {
  name: "mnist-cnn",
  batch: MNIST_CNN_BATCH,
  build(rng) {
    const trainer = smallCnnTrainer(rng);
    return {
      parameters: trainer.model.params.count(),
      step: () => readLoss(trainer.minimize()),
      record: () => trainer.minimize(),
      dispose: trainer.dispose,
    };
  },
};

/**
 * One ANT step on the `mnist-cnn` classifier and batch: a generator Adam step (ε 10, lr 1e-3, the quick preset's)
 * maximising the classifier's cross-entropy, then a classifier Adam step on the ANT batch of a later epoch, which
 * has all three parts (30% current generator, two 10% slices of saved generators, 50% clean). Paired with a plain
 * `mnist-cnn` step of a second, identical classifier.
 */
const ANT_STEP_WORKLOAD: Workload = {
  name: "ant-step",
  batch: MNIST_CNN_BATCH,
  baseline: {
    model: "mnist-cnn",
    ratio: ANT_STEP_RATIO_GOAL,
    source: "an ANT step at most 3× a smallCnn step",
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

/** The MNIST CNN's step, then its ANT step, in the order they are timed. */
export const MNIST_CNN_WORKLOADS: Workload[] = [MNIST_CNN_WORKLOAD, ANT_STEP_WORKLOAD];

/** Images per step of the regressor entries. */
export const REGRESSOR_BATCH = 64;
/** The regressor entries' input: 32×32×1 images and 5 factors. */
export const REGRESSOR_OPTIONS = { size: 32, channels: 1, outputs: 5 } as const satisfies RegressorOptions;

/**
 * A regressor entry's step: `build`'s model on {@linkcode REGRESSOR_BATCH} binary 32×32×1 images and 5 uniform
 * factors, one Adam 5e-4 step of the benchmark's MSE.
 */
export function regressorTrainer(rng: Rng, build: (rng: Rng, options: RegressorOptions) => Regressor) {
  const model = build(rng, REGRESSOR_OPTIONS);
  const x = binaryImages(rng, REGRESSOR_BATCH, 32);
  const y = tf.tensor2d(
    Float32Array.from({ length: REGRESSOR_BATCH * 5 }, () => rng.uniform()),
    [REGRESSOR_BATCH, 5],
  );
  const optimizer = tf.train.adam(5e-4);
  return {
    model,
    /** `[batch, 32, 32, 1]` images. */
    x,
    /** `[batch, 5]` targets. */
    y,
    /** One Adam step; resolves when its loss is read. */
    async step() {
      await regressionStep(model, optimizer, x, y);
    },
    dispose() {
      model.params.dispose();
      optimizer.dispose();
      tf.dispose([x, y]);
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
    batch: REGRESSOR_BATCH,
    build(rng) {
      const trainer = regressorTrainer(rng, build);
      return { parameters: trainer.model.params.count(), step: trainer.step, dispose: trainer.dispose };
    },
  };
}

/** The benchmark's two regressors, in the order they are timed. */
export const REGRESSOR_WORKLOADS: Workload[] = [
  regressorWorkload("cnn-regressor-32", cnnRegressor),
  regressorWorkload("mlp-regressor-32", mlpRegressor),
];

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

/** The two ABS entries, in the order they are timed. */
export const ABS_WORKLOADS: Workload[] = [absInferenceWorkload(), absCnnGradientWorkload()];
