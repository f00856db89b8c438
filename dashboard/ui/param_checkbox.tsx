/// <reference lib="dom" />
/**
 * A checkbox bound to one URL parameter.
 *
 * @module
 */
import type { ParamControl } from "./use_hash.ts";

/** A checkbox stored in the URL as `name=1` (absent when off). */
export function ParamCheckbox({ name, label, params, update }: ParamControl) {
  return (
    <label>
      <input
        type="checkbox"
        checked={params.get(name) === "1"}
        onChange={(e) => update({ [name]: (e.target as HTMLInputElement).checked ? "1" : null })}
      />
      {label}
    </label>
  );
}
