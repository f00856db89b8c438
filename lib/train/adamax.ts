/**
 * Adamax (Kingma & Ba 2015, §7.1) whose state can be saved: tfjs 4.22's
 * AdamaxOptimizer computes the same update but throws on getWeights and
 * setWeights, so a run that checkpoints with it could not resume. The
 * moments are saved as `<variable>/m` and `<variable>/v` after the step
 * count, the order of tfjs' other optimizers; lib/train/loop.ts saves the
 * accumulated β₁ beside them.
 *
 * @module
 */
import * as tf from "@tensorflow/tfjs";

/** A named tensor as optimizers save them (tfjs does not export the type). */
type NamedTensor = { name: string; tensor: tf.Tensor };
type Moment = { originalName: string; variable: tf.Variable };
/** The fields of tfjs' AdamaxOptimizer this class reads and restores. */
interface AdamaxState {
  accumulatedFirstMoment: Moment[];
  accumulatedWeightedInfNorm: Moment[];
  iteration: tf.Variable;
}

/**
 * tfjs' Adamax with getWeights/setWeights (β₁, β₂, ε as torch's defaults unless given).
 *
 * @internal
 */
export class Adamax extends tf.AdamaxOptimizer {
  constructor(learningRate: number, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8) {
    super(learningRate, beta1, beta2, epsilon);
  }

  #state(): AdamaxState {
    return this as unknown as AdamaxState;
  }

  override async getWeights(): Promise<NamedTensor[]> {
    const state = this.#state();
    const moments = [...state.accumulatedFirstMoment, ...state.accumulatedWeightedInfNorm];
    return [await this.saveIterations(), ...moments.map((m) => ({ name: m.originalName, tensor: m.variable }))];
  }

  override async setWeights(weightValues: NamedTensor[]): Promise<void> {
    const values = await this.extractIterations(weightValues);
    const state = this.#state();
    const half = values.length / 2;
    const restore = (part: NamedTensor[]) =>
      part.map((w) => ({ originalName: w.name, variable: w.tensor.variable(false) }));
    tf.dispose([...state.accumulatedFirstMoment, ...state.accumulatedWeightedInfNorm].map((m) => m.variable));
    state.accumulatedFirstMoment = restore(values.slice(0, half));
    state.accumulatedWeightedInfNorm = restore(values.slice(half));
    // The step count drives only the (unused) decay; kept consistent with it.
    tf.tidy(() => state.iteration.assign(tf.scalar(this.iterations)));
  }
}
