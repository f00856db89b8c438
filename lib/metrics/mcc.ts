/**
 * Mean correlation coefficient (MCC): the mean absolute correlation between
 * ground-truth sources and learned codes under the best one-to-one matching
 * (Hungarian algorithm on |corr|). Identifiability up to permutation and
 * elementwise rescaling gives MCC = 1. As in Klindt2021 App. C: Pearson
 * ("linear") or Spearman ("rank") correlation, and no random padding when codes outnumber sources.
 *
 * @module
 */
import { munkres } from "munkres";
import { correlationMatrix, type CorrelationMethod, type Matrix } from "../core/matrix.ts";

/** The result of {@linkcode meanCorrelationCoefficient}. */
export interface MccResult {
  /** Mean |corr| over the matched pairs, in [0, 1]. */
  mcc: number;
  /** `matching[i]` is the code matched to source i (−1 if codes ran out). */
  matching: number[];
  /** |corr| of each source with its matched code. */
  perSource: number[];
  /** Full |corr| matrix `[sources][codes]`. */
  absCorrelation: number[][];
}

/**
 * MCC between `sources` `[n, k]` and `codes` `[n, d]`: the best one-to-one
 * matching of sources to codes maximising total |corr|, averaged over the
 * min(k, d) matched pairs.
 */
export function meanCorrelationCoefficient(
  sources: Matrix,
  codes: Matrix,
  method: CorrelationMethod = "pearson",
): MccResult {
  const absCorrelation = correlationMatrix(sources, codes, method).map((row) => row.map(Math.abs));
  const pairs = munkres(absCorrelation.map((row) => row.map((v) => -v)));
  const matching = new Array(sources.cols).fill(-1);
  const perSource = new Array(sources.cols).fill(0);
  for (const [source, code] of pairs) {
    matching[source] = code;
    perSource[source] = absCorrelation[source][code];
  }
  const matched = pairs.length;
  const mcc = pairs.reduce((sum, [s, c]) => sum + absCorrelation[s][c], 0) / matched;
  return { mcc, matching, perSource, absCorrelation };
}
