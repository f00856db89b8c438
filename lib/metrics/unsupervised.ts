/**
 * Unsupervised scores of a representation as disentanglement_lib's
 * `unsupervised_metrics.py` computes them: Gaussian total correlation and
 * Wasserstein correlation of the code covariance, and the mean pairwise
 * discrete mutual information between codes.
 *
 * @module
 */
import type { Matrix } from "../core/matrix.ts";
import { histogramDiscretize, mutualInfoMatrix } from "./discrete.ts";
import { covariance, logAbsDet, traceSqrtmScaled } from "../ml/linalg.ts";

function checkSquare(cov: number[][]): void {
  if (cov.length === 0 || cov.some((row) => row.length !== cov.length)) {
    throw new Error("expected a non-empty square covariance matrix");
  }
}

/**
 * Total correlation of a Gaussian with covariance `cov` `[d][d]`:
 * ½(Σ log diag − log |det|), the KL divergence from the product of its
 * marginals.
 */
export function gaussianTotalCorrelation(cov: number[][]): number {
  checkSquare(cov);
  const logDiag = cov.reduce((s, row, i) => s + Math.log(row[i]), 0);
  return 0.5 * (logDiag - logAbsDet(cov));
}

/**
 * Wasserstein correlation of `cov` `[d][d]`: 2 tr(cov) − 2 tr(sqrtm(D·cov))
 * with D = diag(cov), i.e. numpy's `cov * np.diag(cov)[:, None]`.
 */
export function gaussianWassersteinCorrelation(cov: number[][]): number {
  checkSquare(cov);
  const diag = cov.map((row, i) => row[i]);
  const trace = diag.reduce((s, v) => s + v, 0);
  return 2 * trace - 2 * traceSqrtmScaled(cov, diag);
}

/** {@linkcode gaussianWassersteinCorrelation} divided by tr(cov). */
export function gaussianWassersteinCorrelationNorm(cov: number[][]): number {
  const trace = cov.reduce((s, row, i) => s + row[i], 0);
  return gaussianWassersteinCorrelation(cov) / trace;
}

/** Options of {@linkcode unsupervisedScores}. */
export interface UnsupervisedOptions {
  /** Histogram bins per code for the mutual information. */
  bins?: number;
}

/** The result of {@linkcode unsupervisedScores}. */
export interface UnsupervisedScores {
  /** {@linkcode gaussianTotalCorrelation} of the code covariance (nats). */
  gaussian_total_correlation: number;
  /** {@linkcode gaussianWassersteinCorrelation} of the code covariance. */
  gaussian_wasserstein_correlation: number;
  /** The same divided by tr(cov). */
  gaussian_wasserstein_correlation_norm: number;
  /** Mean pairwise MI between distinct discretised codes (nats). */
  mutual_info_score: number;
}

/**
 * The unsupervised scores of `codes` `[n, d]` (n ≥ 2, d ≥ 2): covariance
 * scores of `np.cov` (ddof = 1), and the mean off-diagonal entry of the MI
 * matrix between histogram-discretised codes.
 */
export function unsupervisedScores(codes: Matrix, { bins = 20 }: UnsupervisedOptions = {}): UnsupervisedScores {
  if (codes.rows < 2) throw new Error(`unsupervised scores need at least 2 rows, got ${codes.rows}`);
  if (codes.cols < 2) throw new Error(`unsupervised scores need at least 2 codes, got ${codes.cols}`);
  if (codes.data.length !== codes.rows * codes.cols) {
    throw new Error(`matrix holds ${codes.data.length} values, expected ${codes.rows}×${codes.cols}`);
  }
  const cov = covariance(codes);
  const d = codes.cols;
  const discrete = histogramDiscretize(codes, bins);
  const mi = mutualInfoMatrix(discrete, d, { data: discrete, rows: codes.rows, cols: d });
  let offDiagonal = 0;
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) if (i !== j) offDiagonal += mi[i][j];
  return {
    gaussian_total_correlation: gaussianTotalCorrelation(cov),
    gaussian_wasserstein_correlation: gaussianWassersteinCorrelation(cov),
    gaussian_wasserstein_correlation_norm: gaussianWassersteinCorrelationNorm(cov),
    mutual_info_score: offDiagonal / (d * d - d),
  };
}
