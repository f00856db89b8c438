/// <reference lib="dom" />
/**
 * The URL hash as component state: re-renders on navigation, and writes
 * changes back to the URL (which re-renders through the same event).
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { type HashState, hashWith, type ParamChanges, parseHash } from "./url_state.ts";

/** The current hash, and the way to change its parameters. */
export interface HashControl extends HashState {
  update: (changes: ParamChanges) => void;
}

/** What a control bound to one URL parameter needs: its name, its label, and the parameters with their updater. */
export interface ParamControl {
  name: string;
  label: string;
  params: URLSearchParams;
  update: (changes: ParamChanges) => void;
}

/** The hash of `location`, kept current across navigation. */
export function useHash(): HashControl {
  const [hash, setHash] = useState(parseHash(location.hash));
  useEffect(() => {
    const listener = () => setHash(parseHash(location.hash));
    addEventListener("hashchange", listener);
    return () => removeEventListener("hashchange", listener);
  }, []);
  const update = (changes: ParamChanges) => {
    location.hash = hashWith(hash, changes);
  };
  return { ...hash, update };
}
