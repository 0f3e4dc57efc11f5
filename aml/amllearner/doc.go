// Package amllearner is the AML task's learner: one bank's transaction
// classifier (an aml/edgegnn model over the bank's own rows, Data) as a
// federated learner (Learner, built by New from a Config). It trains on
// stratified batches, exchanges what it releases about its boundary
// accounts with the banks hosting their other endpoints
// (learner.Exchanger, ExchangeScheduler: layer-0 features by default,
// release_features.go; or CE-FedGNN's per-layer estimators, narrowed to
// shared bases, release_dims.go), pools what it receives (remote.go),
// optionally runs CE-FedGNN's optimizer and shares its gradient estimator
// (cefed.go, learner.GradSharer), scores a bounded sample every round and
// every transaction at the end (eval.go, learner.FinalEvaluator), and keeps
// its grid counts out of the agent's log (learner.ScoreLogger). The score
// keys it writes are aml/eval's.
package amllearner
