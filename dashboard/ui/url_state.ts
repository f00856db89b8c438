/**
 * The view state lives in the URL hash, so a view can be bookmarked and
 * shared: `#/?sel=a,b&smooth=0.6&q=text&log=1&x=time&diff=1&group=1&by=lr&reduce=last&cols=a,b&metrics=mcc`
 * on the runs page, `#/run/<experiment>/<id>` and `#/scorecard` for the others.
 *
 * @module
 */
import type { Reducers } from "../run_index.ts";
import { DEFAULT_SORT, type SortState } from "./run_rows.ts";

/** A hash split into its page path and its parameters. */
export interface HashState {
  page: string;
  params: URLSearchParams;
}

/** Changes to URL parameters: a value sets one, null or "" removes it. */
export type ParamChanges = Record<string, string | null>;

/**
 * Splits a hash such as `location.hash` into page and parameters; an empty
 * hash is the runs page.
 *
 * @example
 * ```ts
 * parseHash("#/?sel=a/1&log=1"); // { page: "/", params: sel=a/1, log=1 }
 * ```
 */
export function parseHash(hash: string): HashState {
  const [path, query] = hash.slice(1).split("?");
  return { page: path || "/", params: new URLSearchParams(query ?? "") };
}

/**
 * The hash (without `#`) of `state` with `changes` applied; parameters not
 * named keep their value and their place.
 *
 * @example
 * ```ts
 * hashWith(parseHash("#/?q=vae&log=1"), { log: null, x: "time" }); // "/?q=vae&x=time"
 * ```
 */
export function hashWith(state: HashState, changes: ParamChanges): string {
  const params = new URLSearchParams(state.params);
  for (const [k, v] of Object.entries(changes)) v === null || v === "" ? params.delete(k) : params.set(k, v);
  return `${state.page}?${params}`;
}

/** The runs page's view as the URL states it, with each parameter's default filled in. */
export interface ViewState {
  /** Keys (`experiment/id`) of the runs to chart. */
  selected: Set<string>;
  /** EMA weight; 0.6 by default, as in TensorBoard. */
  smoothing: number;
  /** Text a run's experiment, status, config or tags must contain. */
  query: string;
  /** Show only the config keys whose values differ between runs. */
  onlyDiff: boolean;
  /** Which reducer the metric columns show. */
  reducer: keyof Reducers;
  logY: boolean;
  /** "time" plots against seconds since the start; anything else against steps. */
  xAxis: string;
  /** Draw runs that differ only in seed as one mean line with a band. */
  group: boolean;
  /**
   * Config keys to group by instead (`by=method,lr`): runs of one experiment
   * with equal values of these keys become one line, whatever else differs.
   */
  groupBy: string[];
  /** The metric columns of the runs table (`cols=a,b`); empty: the first twelve. */
  columns: string[];
  /** Only metric names (charts and column choices) containing this text, case blind (`metrics=`). */
  metricFilter: string;
  /** The band of a group: one sample s.d., or the 95% confidence interval of the mean. */
  band: "sd" | "ci95";
  /** The runs table's sort (`sort=column&desc=0|1`); newest first by default. */
  sort: SortState;
}

/**
 * Reads the runs page's view from URL parameters.
 *
 * @example
 * ```ts
 * readView(new URLSearchParams("sel=a/1,b/2&log=1")).logY; // true
 * ```
 */
export function readView(params: URLSearchParams): ViewState {
  return {
    selected: new Set(list(params.get("sel"))),
    smoothing: Number(params.get("smooth") ?? "0.6"),
    query: params.get("q") ?? "",
    onlyDiff: params.get("diff") === "1",
    reducer: (params.get("reduce") ?? "last") as keyof Reducers,
    logY: params.get("log") === "1",
    xAxis: params.get("x") ?? "step",
    group: params.get("group") === "1",
    groupBy: list(params.get("by")),
    columns: list(params.get("cols")),
    metricFilter: params.get("metrics") ?? "",
    band: params.get("band") === "ci95" ? "ci95" : "sd",
    sort: params.has("sort") ? { column: params.get("sort")!, descending: params.get("desc") !== "0" } : DEFAULT_SORT,
  };
}

/** The items of a comma-separated parameter, empty ones left out. */
function list(value: string | null): string[] {
  return (value ?? "").split(",").filter((item) => item);
}

/**
 * The `sel` parameter after toggling one run: added at the end when absent,
 * removed when present.
 *
 * @example
 * ```ts
 * toggledSelection(new Set(["a/1", "b/2"]), "a/1"); // "b/2"
 * ```
 */
export function toggledSelection(selected: Set<string>, key: string): string {
  const next = new Set(selected);
  next.has(key) ? next.delete(key) : next.add(key);
  return [...next].join(",");
}

/** The page a hash path shows. */
export type Route =
  | { page: "runs" }
  | { page: "run"; experiment: string; id: string }
  | { page: "scorecard" }
  | { page: "sweeps" }
  | { page: "hparams" }
  | { page: "sweep"; id: string };

/**
 * Which page a hash path shows; any path that is not a run, a sweep, the
 * sweeps or the scorecard shows the runs table.
 *
 * @example
 * ```ts
 * route("/run/ica-toy/20240101-120000-abcdef"); // { page: "run", experiment: "ica-toy", id: "20240101-120000-abcdef" }
 * ```
 */
export function route(path: string): Route {
  const run = /^\/run\/([^/]+)\/([^/]+)$/.exec(path);
  if (run) return { page: "run", experiment: decoded(run[1]), id: decoded(run[2]) };
  const sweep = /^\/sweep\/([^/]+)$/.exec(path);
  if (sweep) return { page: "sweep", id: sweep[1] };
  return path === "/scorecard"
    ? { page: "scorecard" }
    : path === "/sweeps"
    ? { page: "sweeps" }
    : path === "/hparams"
    ? { page: "hparams" }
    : { page: "runs" };
}

/** A percent-encoded path segment decoded; one that is malformed stays as it is (and names no run). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
