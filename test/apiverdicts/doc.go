// Package apiverdicts proves that `opm bundle validate` gives at least
// operator-sdk's default verdict: it runs operator-framework/api's default
// validators (with operator-registry's format check and bundle loading, as
// operator-sdk's `bundle validate` composes them) and opm's built binary
// over the same bundles, and compares pass/fail bundle by bundle. Every
// difference must be one of the deliberate differences listed in
// docs/validation.md. TestOperatorHubVerdicts does the same for the
// optional OperatorHub validators (suite=operatorframework, name=operatorhub)
// against `opm bundle validate --select operatorhub`, verdict and rule by
// rule. It is a module of its own so that the product never
// imports operator-framework code.
package apiverdicts
