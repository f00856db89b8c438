/// <reference lib="dom" />
/**
 * The runs page's controls: filter, column and chart options (all kept in
 * the URL) and the table exports.
 *
 * @module
 */
import type { ParamChanges } from "./url_state.ts";
import type { TableFormat } from "./table_export.ts";
import { ParamCheckbox } from "./param_checkbox.tsx";
import { ParamSelect } from "./param_select.tsx";

/** Props of {@linkcode ViewControls}. */
export interface ViewControlsProps {
  params: URLSearchParams;
  update: (changes: ParamChanges) => void;
  /** The smoothing weight the URL states, its default filled in. */
  smoothing: number;
  /** Whether any run is selected, so that there is something to export. */
  canExport: boolean;
  onExport: (format: TableFormat) => void;
  /** Config keys runs can be grouped by. */
  configKeys: string[];
}

/** The `.controls` bar above the runs table. */
export function ViewControls({ params, update, smoothing, canExport, onExport, configKeys }: ViewControlsProps) {
  return (
    <div class="controls">
      <input
        placeholder="filter: lr<0.01 status:failed seed=3 mcc>=0.9 or any word"
        value={params.get("q") ?? ""}
        onInput={(e) => update({ q: (e.target as HTMLInputElement).value })}
      />
      <ParamCheckbox name="diff" label="only keys that differ" params={params} update={update} />
      <ParamSelect name="reduce" label="reducer" options={["last", "min", "max"]} params={params} update={update} />
      <label>
        smoothing{" "}
        <input
          type="range"
          min="0"
          max="0.99"
          step="0.01"
          value={smoothing}
          onInput={(e) => update({ smooth: (e.target as HTMLInputElement).value })}
        />
        {smoothing.toFixed(2)}
      </label>
      <ParamCheckbox name="log" label="log y" params={params} update={update} />
      <ParamSelect name="x" label="x" options={["step", "time"]} params={params} update={update} />
      <ParamCheckbox name="group" label="group seeds" params={params} update={update} />
      <label>
        group by{" "}
        <select
          aria-label="group by"
          value={params.get("by") ?? ""}
          onChange={(e) => update({ by: (e.target as HTMLSelectElement).value })}
        >
          <option value="">—</option>
          {configKeys.map((k) => <option key={k} value={k}>{k}</option>)}
        </select>
      </label>
      <ParamSelect name="band" label="band" options={["sd", "ci95"]} params={params} update={update} />
      <input
        aria-label="metric filter"
        placeholder="metrics: mcc, L1/"
        value={params.get("metrics") ?? ""}
        onInput={(e) => update({ metrics: (e.target as HTMLInputElement).value })}
      />
      <button type="button" disabled={!canExport} onClick={() => onExport("markdown")}>
        Markdown table
      </button>
      <button type="button" disabled={!canExport} onClick={() => onExport("latex")}>
        LaTeX table
      </button>
    </div>
  );
}
