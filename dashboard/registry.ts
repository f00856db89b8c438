/**
 * The registries as the dashboard serves them (GET /api/registry): every
 * experiment with its config keys, presets, targets and claims, the
 * objectives and the metrics with their output keys. The same registries
 * `list`, `eval` and the experiments read.
 *
 * @module
 */
import { EXPERIMENTS } from "../experiments/mod.ts";
import { type ConfigSpec, describeAllowed } from "../lib/core/config.ts";
import { METRICS } from "../lib/metrics/registry.ts";
import { PAIR_OBJECTIVES } from "../lib/train/slow_vae.ts";
import { VAE_OBJECTIVES } from "../lib/train/vae_objectives.ts";

/** What GET /api/registry answers. */
export interface RegistrySnapshot {
  experiments: {
    name: string;
    description: string;
    source: string;
    config: Record<string, { doc: string; default: unknown; allowed: string }>;
    presets: Record<string, Record<string, unknown>>;
    targets: { metric: string; paper: number; source: string; tolerance: number; direction: string }[];
    claims: { text: string; source: string }[];
  }[];
  objectives: { registry: string; name: string; description: string; source: string }[];
  metrics: { name: string; description: string; source: string; kind: string; outputs: readonly string[] }[];
}

/** The registries as plain JSON. */
export function registrySnapshot(): RegistrySnapshot {
  return {
    experiments: EXPERIMENTS.map((e) => ({
      name: e.name,
      description: e.description,
      source: e.source,
      config: Object.fromEntries(
        Object.entries(e.config as ConfigSpec).map(([key, spec]) => [key, {
          doc: spec.doc,
          default: spec.default,
          allowed: describeAllowed(spec),
        }]),
      ),
      presets: e.presets,
      targets: e.targets.map(({ metric, paper, source, tolerance, direction }) => ({
        metric,
        paper,
        source,
        tolerance,
        direction,
      })),
      claims: e.claims.map(({ text, source }) => ({ text, source })),
    })),
    objectives: [VAE_OBJECTIVES, PAIR_OBJECTIVES].flatMap((registry) =>
      registry.entries.map(({ name, description, source }) => ({ registry: registry.kind, name, description, source }))
    ),
    metrics: METRICS.entries.map(({ name, description, source, kind, outputs }) => ({
      name,
      description,
      source,
      kind,
      outputs,
    })),
  };
}
