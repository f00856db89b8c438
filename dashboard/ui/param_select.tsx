/// <reference lib="dom" />
/**
 * A select bound to one URL parameter.
 *
 * @module
 */
import type { ParamControl } from "./use_hash.ts";

/** A select stored in the URL as `name=option`; the first option is the default. */
export function ParamSelect({ name, label, options, params, update }: ParamControl & { options: string[] }) {
  return (
    <label>
      {label}{" "}
      <select
        value={params.get(name) ?? options[0]}
        onChange={(e) => update({ [name]: (e.target as HTMLSelectElement).value })}
      >
        {options.map((option) => <option key={option}>{option}</option>)}
      </select>
    </label>
  );
}
