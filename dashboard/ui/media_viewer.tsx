/// <reference lib="dom" />
/**
 * The images a run logged under one name, with a slider over their steps.
 *
 * @module
 */
import { useState } from "preact/hooks";
import type { MediaEntry } from "../../lib/core/run_layout.ts";

/** Props of {@linkcode MediaViewer}. */
export interface MediaViewerProps {
  /** The run's API path, `/api/runs/<experiment>/<id>`. */
  base: string;
  /** One name's images, in logging order. */
  items: MediaEntry[];
}

/** A media card that opens on the latest image. */
export function MediaViewer(props: MediaViewerProps) {
  const [index, setIndex] = useState(props.items.length - 1);
  // Clamped: moving to another run's page reuses this card for that run's images of the same name, maybe fewer.
  const item = props.items[Math.min(index, props.items.length - 1)];
  return (
    <div class="card media">
      <h3>
        <span>{item.name}</span>
        <span>step {item.step}</span>
      </h3>
      {props.items.length > 1 && (
        <input
          type="range"
          min="0"
          max={props.items.length - 1}
          value={index}
          onInput={(e) => setIndex(Number((e.target as HTMLInputElement).value))}
        />
      )}
      <img src={`${props.base}/media/${item.path}`} alt={item.name} />
    </div>
  );
}
