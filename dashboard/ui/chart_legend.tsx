/// <reference lib="dom" />
/**
 * A chart's legend in HTML, under its canvas: every line with its colour,
 * however many (chart.js's canvas legend showed a few and cut the rest).
 *
 * @module
 */
/** One entry of {@linkcode ChartLegend}. */
export interface LegendEntry {
  label: string;
  color: string;
  /** A published value: its swatch is dashed like its line. */
  dashed?: boolean;
}

/** Props of {@linkcode ChartLegend}. */
export interface ChartLegendProps {
  entries: LegendEntry[];
  /** Labels of the lines hidden: struck through and faded. */
  hidden: ReadonlySet<string>;
  /** Hides the line of `label` when shown, shows it when hidden. */
  onToggle: (label: string) => void;
  /** Shows the line of `label` alone, or every line when it already is (an alt-click). */
  onIsolate: (label: string) => void;
}

/**
 * The list `.chart-legend` (scrolling when long): a button per line that
 * hides or shows it (`aria-pressed` while shown), or, alt-clicked, shows it alone. Plain elements, one per
 * line (the card memoizes the list, so it is diffed again only when its
 * entries or the hidden set change): 200 runs cost 200 buttons, no chart work.
 */
export function ChartLegend(props: ChartLegendProps) {
  if (!props.entries.length) return null;
  return (
    <ul class="chart-legend">
      {props.entries.map((entry) => {
        const hidden = props.hidden.has(entry.label);
        return (
          <li key={entry.label}>
            <button
              type="button"
              class={hidden ? "legend-hidden" : ""}
              aria-pressed={!hidden}
              title={`${entry.label}\nclick: ${hidden ? "show" : "hide"} · alt-click: this line alone, or all`}
              onClick={(event) => event.altKey ? props.onIsolate(entry.label) : props.onToggle(entry.label)}
            >
              <span
                class={entry.dashed ? "legend-swatch legend-dashed" : "legend-swatch"}
                style={entry.dashed ? { borderColor: entry.color } : { background: entry.color }}
              >
              </span>
              {entry.label}
            </button>
          </li>
        );
      })}
    </ul>
  );
}
