/// <reference lib="dom" />
/**
 * One metric's chart card: its lines drawn by chart.js in the page's colour
 * scheme, published values as dashed lines, a legend listing every line, and
 * a button to save the chart as a PNG.
 *
 * @module
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Chart, type Plugin, registerables } from "chart.js";
import zoomPlugin from "chartjs-plugin-zoom";
import {
  applyHidden,
  chartConfig,
  type ChartView,
  isolated,
  type Line,
  pointCount,
  toggleLine,
} from "./chart_lines.ts";
import { ChartLegend, type LegendEntry } from "./chart_legend.tsx";
import { chartTheme, useDarkMode } from "./chart_theme.ts";
import type { Reference } from "./published_lines.ts";

// chart.js draws nothing unregistered: lines, linear and log scales, the legend and the band fill all come from here.
// The zoom plugin's types describe its module, not its default export (the plugin object).
Chart.register(...registerables, zoomPlugin as unknown as Plugin);

type XRange = { min: number; max: number };

/**
 * Charts still to be made, each in a task of its own: twenty charts made in
 * one task block the page for a second; made one per task, the first shows
 * at once and input is handled between them.
 */
const pendingCharts: (() => void)[] = [];
function makeInOwnTask(make: () => void): () => void {
  pendingCharts.push(make);
  if (pendingCharts.length === 1) setTimeout(makeNextChart, 0);
  return () => {
    const at = pendingCharts.indexOf(make);
    if (at >= 0) pendingCharts.splice(at, 1);
  };
}
function makeNextChart(): void {
  pendingCharts.shift()?.();
  if (pendingCharts.length) setTimeout(makeNextChart, 0);
}

/**
 * Tells the page that a chart was made or updated (`latentlab:drawn`, bubbling from its card): whoever waits for
 * what a chart shows (the browser tests, the screenshot and bench scripts) waits on this, not on a clock.
 */
function announceDrawn(canvas: HTMLCanvasElement, metric: string): void {
  canvas.dispatchEvent(new CustomEvent("latentlab:drawn", { bubbles: true, detail: { metric } }));
}

/** Props of {@linkcode ChartPanel}. */
export interface ChartPanelProps {
  metric: string;
  lines: Line[];
  smoothing: number;
  logY: boolean;
  /** "time" plots against seconds since the start; anything else against steps. */
  xAxis: string;
  /** Published values drawn as dashed lines with their tolerance bands. */
  references?: Reference[];
}

const NO_REFERENCES: Reference[] = [];

/**
 * The card of one metric (`.card[data-metric]`, with its point count in
 * `data-points`). The chart is made once and updated in place, so a live
 * run's growing curve does not flicker. Dragging across it zooms into those
 * steps, shift-dragging pans, ctrl + wheel zooms; a double click or "reset
 * zoom" shows everything again. The zoomed range (`data-x-range`) is kept
 * while live points arrive. The legend under the canvas hides and shows
 * lines (alt-click: only that line, or all again); a hidden line stays
 * hidden as its points grow.
 */
export function ChartPanel(props: ChartPanelProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  // A chart is drawn once its card comes near the screen: a run with thousands of metrics stays responsive.
  const [seen, setSeen] = useState(typeof IntersectionObserver === "undefined");
  // Every update replaces the chart's options, so the zoom lives here rather than in the chart.
  const [xRange, setXRange] = useState<XRange | null>(null);
  const [hidden, setHidden] = useState<ReadonlySet<string>>(new Set());
  const dark = useDarkMode();
  const references = props.references ?? NO_REFERENCES;
  const view: ChartView = { smoothing: props.smoothing, logY: props.logY, xAxis: props.xAxis, xRange, dark, hidden };
  const configOf = () => {
    const config = chartConfig(props.lines, view, references);
    const remember = ({ chart }: { chart: Chart }) => setXRange({ min: chart.scales.x.min, max: chart.scales.x.max });
    const zoom = {
      zoom: {
        drag: { enabled: true, backgroundColor: "rgba(127,127,127,0.2)" },
        wheel: { enabled: true, modifierKey: "ctrl" },
        mode: "x",
        onZoomComplete: remember,
      },
      pan: { enabled: true, mode: "x", modifierKey: "shift", onPanComplete: remember },
    };
    return { ...config, options: { ...config.options, plugins: { ...config.options.plugins, zoom } } };
  };
  const latestConfig = useRef(configOf);
  latestConfig.current = configOf;
  useEffect(() => {
    if (seen) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        setSeen(true);
        observer.disconnect();
      }
    }, { rootMargin: "400px" });
    observer.observe(canvas.current!);
    return () => observer.disconnect();
  }, [seen]);
  useEffect(() => {
    if (!seen) return;
    if (!chart.current) {
      return makeInOwnTask(() => {
        // The latest render's config: the legend may have hidden a line while the chart waited for its task.
        chart.current = new Chart(canvas.current!, latestConfig.current() as never);
        announceDrawn(canvas.current!, props.metric);
      });
    }
    // At most one redraw per animation frame: live rows that come faster than frames replace the pending update.
    // The frame draws the latest render's config: a legend click between this effect and the frame is kept.
    const frame = requestAnimationFrame(() => {
      if (!chart.current) return;
      const config = latestConfig.current();
      chart.current.data = config.data as never;
      chart.current.options = config.options as never;
      chart.current.update();
      announceDrawn(canvas.current!, props.metric);
    });
    return () => cancelAnimationFrame(frame);
    // The hidden set is left out: a click hides a line in the chart as it is (toggleLine), no rebuild.
  }, [seen, props.lines, references, props.smoothing, props.logY, props.xAxis, xRange?.min, xRange?.max, dark]);
  useEffect(() => () => chart.current?.destroy(), []);
  const toggle = (label: string) => {
    if (chart.current) toggleLine(chart.current, label);
    setHidden((before) => {
      const after = new Set(before);
      if (!after.delete(label)) after.add(label);
      return after;
    });
  };
  const legend = useMemo(() => {
    const entries: LegendEntry[] = props.lines.map((l) => ({ label: l.label, color: l.color }));
    const referenceColor = chartTheme(dark).reference;
    for (const r of references) entries.push({ label: r.label, color: referenceColor, dashed: true });
    const isolate = (label: string) => {
      const after = isolated(entries.map((e) => e.label), hidden, label);
      if (chart.current) applyHidden(chart.current, after);
      setHidden(after);
    };
    return <ChartLegend entries={entries} hidden={hidden} onToggle={toggle} onIsolate={isolate} />;
  }, [props.lines, references, hidden, dark]);
  // Drawn again off screen for the file: twice the resolution, light colours on white, the metric as its title,
  // and the canvas legend (the HTML one is not part of the image).
  const download = () => {
    const config = chartConfig(props.lines, { ...view, dark: false }, references);
    const off = document.createElement("canvas");
    off.width = 900;
    off.height = 540;
    const whiteBackground = {
      id: "whiteBackground",
      beforeDraw: (c: Chart) => {
        c.ctx.save();
        c.ctx.fillStyle = "#fff";
        c.ctx.fillRect(0, 0, c.width, c.height);
        c.ctx.restore();
      },
    };
    const exported = new Chart(off, {
      ...config,
      options: {
        ...config.options,
        responsive: false,
        devicePixelRatio: 2,
        plugins: {
          ...config.options.plugins,
          legend: { ...config.options.plugins.legend, display: true },
          title: { ...config.options.plugins.title, display: true, text: props.metric },
        },
      },
      plugins: [...config.plugins, whiteBackground],
    } as never);
    const a = document.createElement("a");
    a.href = off.toDataURL("image/png");
    a.download = `${props.metric.replaceAll("/", "_")}.png`;
    a.click();
    exported.destroy();
  };
  return (
    <div
      class="card"
      data-metric={props.metric}
      data-points={pointCount(props.lines)}
      data-x-range={xRange ? `${xRange.min},${xRange.max}` : ""}
    >
      <h3>
        <span>{props.metric}</span>
        <span>
          {xRange && <button type="button" onClick={() => setXRange(null)}>reset zoom</button>}
          <button type="button" onClick={download}>PNG</button>
        </span>
      </h3>
      <canvas ref={canvas} onDblClick={() => setXRange(null)}></canvas>
      {/* Listed once the chart is drawn: a page of many unseen charts holds no legends. */}
      {seen && legend}
    </div>
  );
}
