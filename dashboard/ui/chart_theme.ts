/// <reference lib="dom" />
/**
 * The colours chart.js draws its axes, grid, tooltip and reference lines in,
 * for the light and the dark colour scheme, and a hook that follows the
 * system's scheme (`prefers-color-scheme`) as it changes.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";

/** What a chart draws besides its lines, in one colour scheme. */
export interface ChartTheme {
  /** Tick labels, axis titles and the chart's title. */
  text: string;
  /** Grid lines and the axes' borders. */
  grid: string;
  tooltipBackground: string;
  tooltipText: string;
  tooltipBorder: string;
  /** A published value's dashed line and its label. */
  reference: string;
  /** The tolerance band around a published value. */
  referenceBand: string;
}

/**
 * The chart colours of the light or the dark scheme: the dark one's text and
 * grid are light on the page's dark cards (chart.js's own defaults are dark
 * grey on any background).
 */
export function chartTheme(dark: boolean): ChartTheme {
  return dark
    ? {
      text: "#c9ccd2",
      grid: "rgba(255, 255, 255, 0.12)",
      tooltipBackground: "rgba(40, 43, 49, 0.96)",
      tooltipText: "#e6e8eb",
      tooltipBorder: "#4a4f57",
      reference: "#d0d3d8",
      referenceBand: "rgba(208, 211, 216, 0.12)",
    }
    : {
      text: "#454b55",
      grid: "rgba(0, 0, 0, 0.1)",
      tooltipBackground: "rgba(29, 36, 48, 0.92)",
      tooltipText: "#ffffff",
      tooltipBorder: "rgba(0, 0, 0, 0)",
      reference: "#444a54",
      referenceBand: "rgba(68, 74, 84, 0.1)",
    };
}

const DARK_QUERY = "(prefers-color-scheme: dark)";

/** Whether the system asks for the dark scheme now; false where there is no `matchMedia` (tests, old browsers). */
export function prefersDark(): boolean {
  return typeof matchMedia === "function" && matchMedia(DARK_QUERY).matches;
}

/** Whether the page is in the dark scheme, updated when the system's scheme changes, so charts redraw in it. */
export function useDarkMode(): boolean {
  const [dark, setDark] = useState(prefersDark);
  useEffect(() => {
    if (typeof matchMedia !== "function") return;
    const query = matchMedia(DARK_QUERY);
    const follow = () => setDark(query.matches);
    query.addEventListener("change", follow);
    return () => query.removeEventListener("change", follow);
  }, []);
  return dark;
}
