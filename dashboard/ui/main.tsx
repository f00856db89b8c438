/// <reference lib="dom" />
/**
 * Entry point of the dashboard bundle: renders the app into the page's
 * `#app` element.
 *
 * @module
 */
import { render } from "preact";
import { App } from "./app.tsx";

const root = document.getElementById("app")!;
// The page's "loading…" placeholder is not Preact's to replace: clear it first.
root.textContent = "";
render(<App />, root);
