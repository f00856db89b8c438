/// <reference lib="dom" />
/**
 * One metric's chart card: its lines drawn by chart.js, and a button to save
 * the chart as a PNG.
 *
 * @module
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { Chart, registerables } from "chart.js";
import { chartConfig, type Line, pointCount } from "./chart_lines.ts";

// chart.js draws nothing unregistered: lines, linear and log scales, the legend and the band fill all come from here.
Chart.register(...registerables);

/** Props of {@linkcode ChartPanel}. */
export interface ChartPanelProps {
  metric: string;
  lines: Line[];
  smoothing: number;
  logY: boolean;
  /** "time" plots against seconds since the start; anything else against steps. */
  xAxis: string;
}

/**
 * The card of one metric (`.card[data-metric]`, with its point count in
 * `data-points`). The chart is made once and updated in place, so a live
 * run's growing curve does not flicker.
 */
export function ChartPanel(props: ChartPanelProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  // A chart is drawn once its card comes near the screen: a run with thousands of metrics stays responsive.
  const [seen, setSeen] = useState(typeof IntersectionObserver === "undefined");
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
    const config = chartConfig(props.lines, { smoothing: props.smoothing, logY: props.logY, xAxis: props.xAxis });
    if (!chart.current) chart.current = new Chart(canvas.current!, config as never);
    else {
      chart.current.data = config.data as never;
      chart.current.options = config.options as never;
      chart.current.update();
    }
  }, [seen, props.lines, props.smoothing, props.logY, props.xAxis]);
  useEffect(() => () => chart.current?.destroy(), []);
  // Drawn again off screen for the file: twice the resolution, a white background, the metric as its title.
  const download = () => {
    const config = chartConfig(props.lines, { smoothing: props.smoothing, logY: props.logY, xAxis: props.xAxis });
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
        plugins: { ...config.options.plugins, title: { display: true, text: props.metric } },
      },
      plugins: [whiteBackground],
    } as never);
    const a = document.createElement("a");
    a.href = off.toDataURL("image/png");
    a.download = `${props.metric.replaceAll("/", "_")}.png`;
    a.click();
    exported.destroy();
  };
  return (
    <div class="card" data-metric={props.metric} data-points={pointCount(props.lines)}>
      <h3>
        <span>{props.metric}</span>
        <button type="button" onClick={download}>PNG</button>
      </h3>
      <canvas ref={canvas}></canvas>
    </div>
  );
}
