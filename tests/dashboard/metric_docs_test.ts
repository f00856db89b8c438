import { assertEquals } from "../assert.ts";
import { metricOfKey, metricTitle } from "../../dashboard/ui/metric_docs.ts";
import { registrySnapshot } from "../../dashboard/registry.ts";

const { metrics } = registrySnapshot();

Deno.test("a summary key is explained by the registered metric whose output it reports", () => {
  assertEquals(metricOfKey(metrics, "slowvae_lap/dci_disentanglement")?.name, "dci");
  assertEquals(metricOfKey(metrics, "mcc/slowflow/L1")?.name, "mcc");
  assertEquals(metricOfKey(metrics, "beta_vae_score")?.name, "beta_vae_score");
  assertEquals(metricOfKey(metrics, "selection/same_metric"), undefined);
  assertEquals(metricTitle(undefined, "mig"), "");
  assertEquals(metricTitle(metrics, "mig").startsWith("mig: mutual information gap"), true);
});

Deno.test("every target of every experiment names a metric of the registry or a study analysis", () => {
  const { experiments } = registrySnapshot();
  const known = experiments.flatMap((e) =>
    e.targets.map((t) => [e.name, t.metric, metricOfKey(metrics, t.metric)?.name])
  );
  // Analyses of many models, not one metric: the dislib-study's Table 1 statistic, gen-benchmark's DCI–R² correlation.
  assertEquals(known.filter(([, , name]) => name === undefined).map(([e, m]) => `${e} ${m}`), [
    "dislib-study selection/same_metric",
    "gen-benchmark dci_r2_pearson",
    "gen-benchmark dci_r2_spearman",
  ]);
});
