/**
 * The bibliography: the five source documents every experiment reproduces, and the papers reprinted inside
 * Schott's thesis, each under the short key that `source` fields, comments and docs cite ("Locatello2019 Table 3",
 * "Schott2019 Table 1", "Schneider2023 Table 2.1").
 *
 * @module
 */

/** One citable work. */
export interface Paper {
  /** Author + year where the document prints a year; the key cited everywhere. */
  key: string;
  /** As the document prints them (surnames, "et al." for many). */
  authors: string;
  /** Full title. */
  title: string;
  /** What the year rests on when the document does not print one. */
  year: string;
  /** Journal, conference or institution (for a thesis). */
  venue: string;
  /** A source document the toolkit was built from, or a paper reprinted inside one (its key). */
  reprintedIn?: string;
  /** How the reprinted paper is labelled inside its thesis, and whose numbering a citation uses. */
  numbering: string;
  /** A phrase in the opening of the document's technical report, used to find the report beside a clone. */
  reportMarker?: string;
}

/** The five source documents, then the four papers reprinted in Schott's thesis. */
export const PAPERS: readonly Paper[] = [
  {
    key: "SchottThesis",
    authors: "Lukas Schott",
    title:
      "PhD thesis on inductive biases for generalization in visual representation learning (title page not in the text)",
    year: "not printed in the text; its latest reprinted paper is from 2022",
    venue: "PhD thesis, University of Tübingen (cumulative: Ch. 1–4, reprints of four papers in App. A–D)",
    numbering: 'Thesis chapters as "SchottThesis §2.x"; each reprint keeps its own numbering and is cited by its key',
    reportMarker: "Lukas Schott",
  },
  {
    key: "Schneider2023",
    authors: "Steffen Schneider",
    title: "PhD thesis on robust machine learning for neuroscientific inference (full title not in the text)",
    year: "2023 (preface dated 21 December 2023)",
    venue: "PhD thesis, EPFL (Mathis lab, with Matthias Bethge, Tübingen)",
    numbering:
      "Thesis chapters: Ch. 2 BN adaptation (NeurIPS 2020), Ch. 3 self-learning (TMLR 2022), Ch. 4 RDumb/CCC " +
      "(NeurIPS 2023), Ch. 5 pose out of domain (WACV 2021), Ch. 6 contrastive learning inverts the data-generating " +
      "process (ICML 2021), Ch. 7 CEBRA (Nature 2023), Ch. 8 regularized contrastive attribution; tables and figures " +
      "numbered per chapter (Table 2.1, Fig. 7.6)",
    reportMarker: "Steffen Schneider",
  },
  {
    key: "Locatello2019",
    authors: "Francesco Locatello, Stefan Bauer, Mario Lucic, Sylvain Gelly, Bernhard Schölkopf, Olivier Bachem",
    title: "Challenging Common Assumptions in the Unsupervised Learning of Disentangled Representations",
    year: "2019 (ICML); the document is the preliminary arXiv preprint 1811.12359 of late 2018",
    venue: "arXiv 1811.12359; ICML 2019",
    numbering: "The preprint's own sections, tables and figures",
    reportMarker: "Challenging Common Assumptions",
  },
  {
    key: "Zietlow2022",
    authors: "Urs Dominik Zietlow",
    title: "An Analysis of the Inner Workings of Variational Autoencoders",
    year: "2022 (oral exam 16 November 2022)",
    venue: "PhD thesis, University of Tübingen",
    numbering: "Thesis chapters, equations, tables and figures",
    reportMarker: "Zietlow",
  },
  {
    key: "Jacobsen2019",
    authors: "Jörn-Henrik Jacobsen, Jens Behrmann, Richard Zemel, Matthias Bethge",
    title: "Excessive Invariance Causes Adversarial Vulnerability",
    year: "2019 (ICLR); the document is the early arXiv version 1811.00401",
    venue: "ICLR 2019",
    numbering: "The paper's own sections, tables and figures",
    reportMarker: "Jacobsen",
  },
  {
    key: "Klindt2021",
    authors:
      "David Klindt, Lukas Schott, Yash Sharma, Ivan Ustyuzhaninov, Wieland Brendel, Matthias Bethge, Dylan Paiton",
    title: "Towards nonlinear disentanglement in natural data with temporal sparse coding",
    year: "2021",
    venue: "ICLR 2021 (SlowVAE)",
    reprintedIn: "SchottThesis",
    numbering: "Reprinted as Paper A (App. A) of Schott's thesis, with its own numbering",
  },
  {
    key: "Schott2022",
    authors: "Lukas Schott, Julius von Kügelgen, Frederik Träuble, Peter Gehler, Chris Russell, Matthias Bethge, " +
      "Bernhard Schölkopf, Francesco Locatello, Wieland Brendel",
    title: "Visual representation learning does not generalize strongly within the same domain",
    year: "2022",
    venue: "ICLR 2022",
    reprintedIn: "SchottThesis",
    numbering: "Reprinted as Paper B (App. B) of Schott's thesis, with its own numbering",
  },
  {
    key: "Rusak2020",
    authors: "Evgenia Rusak, Lukas Schott, Roland S. Zimmermann, Julian Bitterwolf, Oliver Bringmann, Matthias " +
      "Bethge, Wieland Brendel",
    title: "A simple way to make neural networks robust against diverse image corruptions",
    year: "2020",
    venue: "ECCV 2020 (GNT/ANT)",
    reprintedIn: "SchottThesis",
    numbering: "Reprinted as Paper C (App. C) of Schott's thesis, with its own numbering",
  },
  {
    key: "Schott2019",
    authors: "Lukas Schott, Jonas Rauber, Matthias Bethge, Wieland Brendel",
    title: "Towards the first adversarially robust neural network model on MNIST",
    year: "2019",
    venue: "ICLR 2019 (ABS)",
    reprintedIn: "SchottThesis",
    numbering: "Reprinted as Paper D (App. D) of Schott's thesis, with its own numbering",
  },
];

/** The keys cited in `text`, in order of first appearance. */
export function citedPapers(text: string): string[] {
  const keys = PAPERS.map((p) => p.key).filter((key) => new RegExp(`\\b${key}\\b`).test(text));
  return keys.sort((a, b) => text.search(new RegExp(`\\b${a}\\b`)) - text.search(new RegExp(`\\b${b}\\b`)));
}

/** The paper of `key`; throws on an unknown key. */
export function paper(key: string): Paper {
  const found = PAPERS.find((p) => p.key === key);
  if (found === undefined) throw new Error(`unknown paper key ${key}; known: ${PAPERS.map((p) => p.key).join(", ")}`);
  return found;
}

/** The source document a citation of `key` rests on (the thesis for a reprinted paper). */
export function sourceDocumentOf(key: string): Paper {
  const cited = paper(key);
  return cited.reprintedIn === undefined ? cited : paper(cited.reprintedIn);
}
