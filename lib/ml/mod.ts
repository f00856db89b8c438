/**
 * Classical estimators the metrics need. disentanglement_lib's scores are
 * defined by scikit-learn models, so these reproduce sklearn's objectives and
 * are tested against sklearn fixtures (tests/metrics/fixtures). They are
 * written here because the npm options do not match those models:
 * ml-logistic-regression is one-vs-rest gradient descent for a fixed number
 * of steps (not sklearn's multinomial L2 optimum), the ml-cart /
 * ml-random-forest family has no gradient boosting, and no package follows
 * liblinear's LinearSVC or sklearn's Lasso. Assignment uses the npm package
 * munkres (lib/metrics/mcc.ts).
 *
 * @module
 */
export * from "./gradient_boosting.ts";
export * from "./lasso.ts";
export * from "./linalg.ts";
export * from "./linear_svm.ts";
export * from "./logistic_regression.ts";
export * from "./roc_auc.ts";
