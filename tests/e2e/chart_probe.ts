/**
 * What the dashboard's charts draw, read in the page. The page bundle keeps
 * chart.js's `Chart` to itself, so {@linkcode CHART_PROBE}, run before the
 * bundle (`Browser.launch`'s `initScript`), catches the class as the first
 * chart is made: chart.js sets `$proxies` on every chart in its constructor,
 * and a setter for that name on Object.prototype sees the chart once, then
 * removes itself. `Chart.getChart(canvas)` then finds a card's chart.
 *
 * @module
 */

/** Installs `__chartOf(card)` and `__chartData(metric)` in the page (see the module doc). */
export const CHART_PROBE = `
Object.defineProperty(Object.prototype, "$proxies", {
  configurable: true,
  set(value) {
    delete Object.prototype.$proxies;
    window.__Chart = this.constructor;
    this.$proxies = value;
  },
});
window.__chartOf = (card) => {
  const canvas = card && card.querySelector("canvas");
  return canvas && window.__Chart ? window.__Chart.getChart(canvas) ?? null : null;
};
window.__chartData = (metric) => {
  const chart = window.__chartOf(document.querySelector('.card[data-metric="' + CSS.escape(metric) + '"]'));
  return chart && chart.data.datasets.map((d) => ({
    label: d.label,
    x: d.data.map((p) => p.x),
    y: d.data.map((p) => p.y),
  }));
};
`;

/** One chart.js dataset as {@linkcode chartData} reads it. */
export interface DrawnLine {
  label: string;
  x: number[];
  y: number[];
}

/**
 * A page expression: the datasets of `metric`'s chart, null while the card
 * has no chart (not drawn yet: charts are drawn once their card nears the screen).
 */
export function chartData(metric: string): string {
  return `window.__chartData(${JSON.stringify(metric)})`;
}
