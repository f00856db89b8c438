/** Command lines shown or written for bash: the sbatch scripts of sweeps, the `--resume` command of the dashboard. */

/** A word as bash reads it: bare when it has nothing special, else single-quoted. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
