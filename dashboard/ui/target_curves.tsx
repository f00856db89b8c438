/// <reference lib="dom" />
/**
 * A completed run's learning curve of each target, with the published value
 * as a dashed line: the same drawing as the README scorecard's.
 *
 * @module
 */
import type { RunSummary } from "../../lib/core/run_layout.ts";
import { summaryCurvesSvg } from "../../lib/core/curves.ts";

/** The card `#target-curves`, or nothing when no target of the run has a curve. */
export function TargetCurves({ summary }: { summary: RunSummary }) {
  const svg = summaryCurvesSvg(summary);
  if (!svg) return null;
  return (
    <div class="card" id="target-curves">
      <h3>
        <span>learning curves toward the published values</span>
      </h3>
      {/* The SVG is built here from numbers and escaped text (lib/core/curves.ts), never from raw HTML. */}
      <div class="curves" dangerouslySetInnerHTML={{ __html: svg }}></div>
    </div>
  );
}
