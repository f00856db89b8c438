/// <reference lib="dom" />
/**
 * The folders of the store a listing passed over, each with why, so that no
 * run or sweep vanishes without notice.
 *
 * @module
 */

/** A folder a listing passed over, and why. */
export interface SkippedFolder {
  folder: string;
  why: string;
}

/** Props of {@linkcode SkippedFolders}. */
export interface SkippedFoldersProps {
  id: string;
  /** What the folders would have been: "run" or "sweep". */
  what: string;
  skipped: SkippedFolder[];
}

/** A count of the skipped folders that opens to the list of them with their reasons; nothing when there are none. */
export function SkippedFolders(props: SkippedFoldersProps) {
  if (!props.skipped.length) return null;
  const n = props.skipped.length;
  return (
    <details id={props.id} class="skipped-folders">
      <summary>
        ⚠ {n} {props.what} folder{n > 1 ? "s" : ""} skipped
      </summary>
      <ul>
        {props.skipped.map((s) => (
          <li key={s.folder} data-folder={s.folder}>
            <code>{s.folder}</code>: {s.why}
          </li>
        ))}
      </ul>
    </details>
  );
}
