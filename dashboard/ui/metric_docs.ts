/**
 * What a metric key means, from the registry the server sends: the
 * registered metric whose outputs a key reports.
 *
 * @module
 */
import type { RegistrySnapshot } from "../registry.ts";

/**
 * The registered metric a summary key reports, e.g. "slowvae_lap/dci_disentanglement" → dci, "mcc/slowflow/L1"
 * → mcc: the metric one of whose outputs is a segment of the key; undefined when none is.
 */
export function metricOfKey(metrics: RegistrySnapshot["metrics"], key: string) {
  // A parameter after "@" names a setting (degeneracy/dto@1.2), not another metric.
  const segments = key.split("/").map((segment) => segment.replace(/@.*$/, ""));
  return metrics.find((m) => m.outputs.some((output) => segments.includes(output)));
}

/** The tooltip of a metric key: the metric's description and where it is defined, or "". */
export function metricTitle(metrics: RegistrySnapshot["metrics"] | undefined, key: string): string {
  const metric = metrics && metricOfKey(metrics, key);
  return metric ? `${metric.name}: ${metric.description} (${metric.source})` : "";
}
