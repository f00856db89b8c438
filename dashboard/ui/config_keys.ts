/**
 * Which config keys tell runs apart: the runs table can hide the rest, and a
 * run page diffs its config against another run's.
 *
 * @module
 */
import { formatValue } from "./format.ts";

/**
 * Every key of any of the configs, in the order each first appears.
 *
 * @example
 * ```ts
 * configKeys([{ b: 1 }, { a: 2, b: 3 }]); // ["b", "a"]
 * ```
 */
export function configKeys(configs: Record<string, unknown>[]): string[] {
  return [...new Set(configs.flatMap((c) => Object.keys(c)))];
}

/**
 * The keys of {@linkcode configKeys} whose values are not all equal (as
 * JSON); a key that some configs lack differs.
 *
 * @example
 * ```ts
 * differingKeys([{ lr: 0.1, seed: 1 }, { lr: 0.1, seed: 2 }]); // ["seed"]
 * ```
 */
export function differingKeys(configs: Record<string, unknown>[]): string[] {
  return configKeys(configs).filter((k) => new Set(configs.map((c) => JSON.stringify(c[k]))).size > 1);
}

/**
 * A run's setting as a label: its experiment, then `key=value` for each of
 * `keys` (usually the {@linkcode differingKeys} of the runs shown with it).
 *
 * @example
 * ```ts
 * settingLabel("vae", { beta: 4, lr: 0.1 }, ["beta"]); // "vae beta=4"
 * ```
 */
export function settingLabel(experiment: string, config: Record<string, unknown>, keys: string[]): string {
  return [experiment, ...keys.map((k) => `${k}=${formatValue(config[k])}`)].join(" ");
}
