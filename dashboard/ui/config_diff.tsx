/// <reference lib="dom" />
/**
 * A run's config against another run's, key by key where they differ.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import type { RunRow } from "../run_index.ts";
import { getJson, type RunDetail } from "./api.ts";
import { differingKeys } from "./config_keys.ts";
import { formatValue, runKey } from "./format.ts";

/** Props of {@linkcode ConfigDiff}. */
export interface ConfigDiffProps {
  /** The config of the run whose page this is. */
  config: Record<string, unknown>;
  /** The run's id, left out of the runs to compare with. */
  id: string;
  runs: RunRow[];
}

/** A card with a picker of the other run and a table of the keys whose values differ. */
export function ConfigDiff(props: ConfigDiffProps) {
  const [other, setOther] = useState("");
  const [otherConfig, setOtherConfig] = useState<Record<string, unknown> | null>(null);
  useEffect(() => {
    if (other) {
      getJson<RunDetail>(`/api/runs/${other.split("/").map(encodeURIComponent).join("/")}`).then((d) =>
        setOtherConfig(d.config)
      );
    }
  }, [other]);
  const keys = otherConfig ? differingKeys([props.config, otherConfig]) : [];
  return (
    <div class="card">
      <h3>config diff</h3>
      <select value={other} onChange={(e) => setOther((e.target as HTMLSelectElement).value)}>
        <option value="">compare with…</option>
        {props.runs.filter((r) => r.id !== props.id).map((r) => (
          <option key={runKey(r)} value={runKey(r)}>{runKey(r)}</option>
        ))}
      </select>
      <table>
        {keys.map((k) => (
          <tr>
            <td>{k}</td>
            <td>{formatValue(props.config[k])}</td>
            <td>{formatValue(otherConfig?.[k])}</td>
          </tr>
        ))}
      </table>
    </div>
  );
}
