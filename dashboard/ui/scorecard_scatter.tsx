/// <reference lib="dom" />
/**
 * The scorecard as a picture: each measured target at (published, ours) in
 * plain SVG, beside the y = x diagonal, with its tolerance and 95% interval,
 * coloured by verdict and shaped by class; targets without a value are
 * listed under it.
 *
 * @module
 */
import {
  type AxisScale,
  axisTicks,
  type Placement,
  placeTarget,
  plotFrame,
  pointTitle,
  type ScatterEntry,
  tickLabel,
  VERDICT_COLOURS,
  verdictColour,
  type VerdictName,
  xPixel,
  yPixel,
} from "./scorecard_points.ts";

/** The plot area inside the SVG's viewBox: room on the left and below for the tick labels and axis titles. */
const AREA = { left: 58, top: 12, size: 480 };
const WIDTH = AREA.left + AREA.size + 14;
const HEIGHT = AREA.top + AREA.size + 44;

/** Shows a target's row in the table below: scrolled to and briefly marked. */
function showRow(id: string): void {
  const row = document.getElementById(id);
  if (!row) return;
  row.scrollIntoView({ block: "center" });
  row.classList.remove("scorecard-flash");
  // Read layout once so the class added again starts its animation anew.
  void row.offsetWidth;
  row.classList.add("scorecard-flash");
}

/** What the axes are, in words, for the note under the plot. */
function scaleText(scale: AxisScale): string {
  if (scale.kind === "linear") return "linear axes";
  if (scale.kind === "log") return "log–log axes";
  return `symlog axes: linear within ±${tickLabel(scale.constant)} (so 0 and negative values have a place), ` +
    `a decade per step beyond`;
}

/** A point's marker: a filled circle for a like-for-like target, a hollow one for an analogue. */
function Marker({ x, y, colour, analogue }: { x: number; y: number; colour: string; analogue: boolean }) {
  return analogue
    ? <circle class="sc-marker" cx={x} cy={y} r={4} fill="none" stroke={colour} stroke-width={2} />
    : <circle class="sc-marker" cx={x} cy={y} r={4.5} fill={colour} />;
}

/** A target's tolerance segment and interval bar (drawn under every point). */
function Whiskers({ at, colour }: { at: Placement; colour: string }) {
  const tol = at.tolerance;
  const arrow = tol?.open === "up"
    ? `M${at.x - 3.5},${tol.top + 4} L${at.x},${tol.top - 1} L${at.x + 3.5},${tol.top + 4}`
    : tol?.open === "down"
    ? `M${at.x - 3.5},${tol.bottom - 4} L${at.x},${tol.bottom + 1} L${at.x + 3.5},${tol.bottom - 4}`
    : null;
  return (
    <g>
      {tol && <line class="sc-tolerance" x1={at.x} x2={at.x} y1={tol.top} y2={tol.bottom} />}
      {arrow && <path class="sc-tolerance-open" d={arrow} />}
      {at.interval && (
        <line
          class="sc-interval"
          x1={at.x}
          x2={at.x}
          y1={at.interval.top}
          y2={at.interval.bottom}
          stroke={colour}
        />
      )}
    </g>
  );
}

/** The legend beside the plot: verdict colours (with how many targets each), classes' shapes and the lines. */
function Legend({ plotted, unmeasured }: { plotted: readonly ScatterEntry[]; unmeasured: number }) {
  const swatch = (colour: string, analogue = false) => (
    <svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true">
      <Marker x={7} y={7} colour={colour} analogue={analogue} />
    </svg>
  );
  const line = (cls: string) => (
    <svg width="14" height="14" viewBox="0 0 14 14" aria-hidden="true">
      <line
        class={cls}
        x1={cls === "sc-diagonal" ? 1 : 7}
        x2={cls === "sc-diagonal" ? 13 : 7}
        y1={13}
        y2={1}
        stroke={cls === "sc-interval" ? "currentColor" : undefined}
      />
    </svg>
  );
  const verdicts = Object.keys(VERDICT_COLOURS) as VerdictName[];
  return (
    <ul class="scorecard-legend" id="scorecard-legend">
      {verdicts.map((v) => (
        <li key={v} data-verdict={v}>
          {swatch(VERDICT_COLOURS[v])} {v} {v === "not measured" && unmeasured > 0
            ? `(${unmeasured}: listed below, not drawn)`
            : v === "not measured"
            ? "(0)"
            : `(${plotted.filter((e) => e.target.verdict === v).length})`}
        </li>
      ))}
      <li>{swatch("currentColor")} like-for-like</li>
      <li>{swatch("currentColor", true)} analogue (a stand-in for the document's data, model or scale)</li>
      <li>{line("sc-diagonal")} ours = published</li>
      <li>{line("sc-tolerance")} tolerance around the published value (arrow: or beyond)</li>
      <li>{line("sc-interval")} 95% interval of the mean (≥ 3 seeds)</li>
    </ul>
  );
}

/**
 * The scatter `#scorecard-scatter` of `plotted` targets, each point a link:
 * to its run when this store holds one (`#/run/<experiment>/<id>`), else to
 * its row in the table; `unmeasured` targets are named under it.
 */
export function ScorecardScatter(
  { plotted, unmeasured }: { plotted: readonly ScatterEntry[]; unmeasured: readonly ScatterEntry[] },
) {
  const frame = plotFrame(plotted.map((e) => e.target), AREA);
  const ticks = axisTicks(frame.scale, frame.from, frame.to);
  const placed = plotted.map((entry) => ({ entry, at: placeTarget(frame, entry.target)! }));
  // Like-for-like points over analogues: they are the ones the headline counts first.
  const drawOrder = [...placed].sort((a, b) =>
    Number(a.entry.target.kind === "like-for-like") - Number(b.entry.target.kind === "like-for-like")
  );
  const bottom = AREA.top + AREA.size, right = AREA.left + AREA.size;
  return (
    <div class="scorecard-figure">
      <div class="scorecard-plot">
        <svg
          id="scorecard-scatter"
          viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
          role="img"
          aria-label="published against measured value of each target"
          data-scale={frame.scale.kind}
          data-points={plotted.length}
        >
          <rect class="sc-frame" x={AREA.left} y={AREA.top} width={AREA.size} height={AREA.size} />
          {ticks.map((v) => {
            const x = xPixel(frame, v), y = yPixel(frame, v);
            return (
              <g key={v} class="sc-tick">
                <line class="sc-grid" x1={x} x2={x} y1={AREA.top} y2={bottom} />
                <line class="sc-grid" x1={AREA.left} x2={right} y1={y} y2={y} />
                <text x={x} y={bottom + 14} text-anchor="middle">{tickLabel(v)}</text>
                <text x={AREA.left - 5} y={y + 4} text-anchor="end">{tickLabel(v)}</text>
              </g>
            );
          })}
          {/* Both axes share one scale and range, so y = x is the square's diagonal. */}
          <line class="sc-diagonal" x1={AREA.left} y1={bottom} x2={right} y2={AREA.top} />
          <text class="sc-axis-title" x={AREA.left + AREA.size / 2} y={HEIGHT - 6} text-anchor="middle">
            published
          </text>
          <text
            class="sc-axis-title"
            transform={`translate(12 ${AREA.top + AREA.size / 2}) rotate(-90)`}
            text-anchor="middle"
          >
            ours (mean over seeds)
          </text>
          <g class="sc-whiskers">
            {drawOrder.map(({ entry, at }) => (
              <Whiskers key={entry.row} at={at} colour={verdictColour(entry.target.verdict)} />
            ))}
          </g>
          {drawOrder.map(({ entry, at }) => (
            <a
              key={entry.row}
              class="scorecard-point"
              href={entry.run ? `#/run/${entry.run}` : "#/scorecard"}
              onClick={entry.run ? undefined : (event: MouseEvent) => {
                event.preventDefault();
                showRow(entry.row);
              }}
              data-verdict={entry.target.verdict}
              data-kind={entry.target.kind}
              data-experiment={entry.experiment}
              data-metric={entry.target.metric}
              data-link={entry.run ? `run:${entry.run}` : `row:${entry.row}`}
            >
              <title>{pointTitle(entry)}</title>
              <Marker
                x={at.x}
                y={at.y}
                colour={verdictColour(entry.target.verdict)}
                analogue={entry.target.kind === "analogue"}
              />
            </a>
          ))}
        </svg>
        <p class="note">{scaleText(frame.scale)}</p>
      </div>
      <div class="scorecard-side">
        <Legend plotted={plotted} unmeasured={unmeasured.length} />
        {unmeasured.length > 0 && (
          <p id="scorecard-unmeasured" class="note">
            not measured ({unmeasured.length}): {unmeasured.map((e, i) => (
              <span key={e.row}>
                {i > 0 && "; "}
                <a
                  href="#/scorecard"
                  onClick={(event: MouseEvent) => {
                    event.preventDefault();
                    showRow(e.row);
                  }}
                >
                  {e.experiment} {e.target.metric}
                </a>
              </span>
            ))}
          </p>
        )}
      </div>
    </div>
  );
}
