import { assertEquals } from "../assert.ts";
import { hashWith, parseHash, readView, route, toggledSelection } from "../../dashboard/ui/url_state.ts";

const entries = (params: URLSearchParams) => [...params.entries()];

Deno.test("parseHash splits page and parameters; no hash is the runs page", () => {
  assertEquals(parseHash("").page, "/");
  assertEquals(entries(parseHash("").params), []);
  const state = parseHash("#/?sel=a/1,b/2&smooth=0");
  assertEquals(state.page, "/");
  assertEquals(entries(state.params), [["sel", "a/1,b/2"], ["smooth", "0"]]);
  assertEquals(parseHash("#/scorecard").page, "/scorecard");
  assertEquals(parseHash("#/run/vae/20240101-120000-abcdef").page, "/run/vae/20240101-120000-abcdef");
});

Deno.test("hashWith sets, replaces in place and removes (null or empty) parameters", () => {
  const state = parseHash("#/?q=vae&log=1");
  assertEquals(hashWith(state, { log: null, x: "time" }), "/?q=vae&x=time");
  assertEquals(hashWith(state, { q: "gan" }), "/?q=gan&log=1");
  assertEquals(hashWith(state, { q: "" }), "/?log=1");
  assertEquals(hashWith(parseHash("#/scorecard"), {}), "/scorecard?");
  // The state it was given is left as it was.
  assertEquals(entries(state.params), [["q", "vae"], ["log", "1"]]);
});

Deno.test("hashWith encodes values so that parseHash reads them back", () => {
  const hash = hashWith(parseHash(""), { sel: "a/1,b/2", q: "β = 4 & more" });
  assertEquals(hash, "/?sel=a%2F1%2Cb%2F2&q=%CE%B2+%3D+4+%26+more");
  const back = parseHash(`#${hash}`).params;
  assertEquals([back.get("sel"), back.get("q")], ["a/1,b/2", "β = 4 & more"]);
});

Deno.test("readView fills in each default", () => {
  assertEquals(readView(new URLSearchParams("")), {
    selected: new Set<string>(),
    smoothing: 0.6,
    query: "",
    onlyDiff: false,
    reducer: "last",
    logY: false,
    xAxis: "step",
    group: false,
    groupBy: [],
    columns: [],
    metricFilter: "",
    band: "sd",
    sort: { column: "created", descending: true },
  });
});

Deno.test("readView reads every parameter, dropping empty run keys", () => {
  const params = new URLSearchParams(
    "sel=a/1,,b/2&smooth=0&q=lr&diff=1&reduce=max&log=1&x=time&group=1&band=ci95&sort=metric:mcc&desc=0&by=method,lr&cols=mcc,,loss&metrics=L1/",
  );
  assertEquals(readView(params), {
    selected: new Set(["a/1", "b/2"]),
    smoothing: 0,
    query: "lr",
    onlyDiff: true,
    reducer: "max",
    logY: true,
    xAxis: "time",
    group: true,
    groupBy: ["method", "lr"],
    columns: ["mcc", "loss"],
    metricFilter: "L1/",
    band: "ci95",
    sort: { column: "metric:mcc", descending: false },
  });
  // Switches are on only at "1".
  assertEquals(readView(new URLSearchParams("log=true&diff=0")).logY, false);
});

Deno.test("toggledSelection adds a run at the end or removes it", () => {
  const selected = new Set(["a/1", "b/2"]);
  assertEquals(toggledSelection(selected, "c/3"), "a/1,b/2,c/3");
  assertEquals(toggledSelection(selected, "a/1"), "b/2");
  assertEquals(toggledSelection(new Set(["a/1"]), "a/1"), "");
  assertEquals([...selected], ["a/1", "b/2"]);
});

Deno.test("route names the page of a path; anything unknown is the runs page", () => {
  assertEquals(route("/"), { page: "runs" });
  assertEquals(route("/scorecard"), { page: "scorecard" });
  assertEquals(route("/run/ica-toy/20240101-120000-abcdef"), {
    page: "run",
    experiment: "ica-toy",
    id: "20240101-120000-abcdef",
  });
  assertEquals(route("/run/ica-toy"), { page: "runs" });
  assertEquals(route("/run/a/b/c"), { page: "runs" });
  assertEquals(route("/nowhere"), { page: "runs" });
  assertEquals(route("/sweeps"), { page: "sweeps" });
  assertEquals(route("/hparams"), { page: "hparams" });
  assertEquals(route("/sweep/ica-toy-1a2b3c4d"), { page: "sweep", id: "ica-toy-1a2b3c4d" });
  assertEquals(route("/sweep/a/b"), { page: "runs" });
});
