/**
 * Classical estimators on plain arrays, after their scikit-learn counterparts (tier 1: imports only
 * lib/core): linear and logistic regression, Lasso, linear SVM, k-nearest neighbours, gradient-boosted
 * trees, PCA, ROC-AUC, and the small dense linear algebra the metrics use.
 *
 * @module
 */
export * from "./gradient_boosting.ts";
export * from "./knn.ts";
export * from "./lasso.ts";
export * from "./linalg.ts";
export * from "./linear_regression.ts";
export * from "./linear_svm.ts";
export * from "./logistic_regression.ts";
export * from "./pca.ts";
export * from "./roc_auc.ts";
// A type of lib/core that this folder's API names, so that its documentation is complete.
export type * from "../core/shared_types.ts";
