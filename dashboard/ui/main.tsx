/// <reference lib="dom" />
/**
 * Entry point of the dashboard bundle: renders the app into the page's
 * `#app` element.
 *
 * @module
 */
import { render } from "preact";
import { App } from "./app.tsx";

render(<App />, document.getElementById("app")!);
