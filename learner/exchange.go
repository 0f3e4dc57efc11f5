package learner

// Exchanger is a Learner that exchanges boundary-node embeddings with the
// clients hosting its cross-client neighbours (CE-FedGNN). After every
// round of local steps the agent asks it for the embeddings to release to
// each neighbour, passes them through the privacy gate (normalized to the
// unit sphere, σ0 noise) and publishes them on gf.<job>.emb.<from>.<to>;
// embeddings received from neighbours are handed back through Receive and
// stand in for those nodes until the next exchange.
type Exchanger interface {
	Learner
	// Neighbours lists the client ids hosting nodes adjacent to ours, sorted.
	Neighbours() []string
	// Boundary returns what to release to neighbour to: the global ids of
	// our nodes adjacent to its nodes, and their latest embeddings as a flat
	// row-major len(ids)×dim matrix (the layer the receiver needs).
	Boundary(to string) (ids []int64, rows []float32, dim int)
	// Receive stores a neighbour's released embeddings of its nodes (global
	// ids) for use until the next exchange. Unknown ids are ignored; a
	// width other than the model's is an error.
	Receive(from string, ids []int64, rows []float32, dim int) error
}

// ExchangeScheduler is an Exchanger that releases its embeddings only in
// some rounds. Every release costs privacy per node, so releasing every
// E-th round at noise σ0 spends what every round at σ0·sqrt(E) would;
// between releases neighbours keep the last released values.
type ExchangeScheduler interface {
	Exchanger
	// ExchangeDue reports whether round's boundary embeddings are released.
	ExchangeDue(round uint64) bool
}

// GradSharer is a Learner whose moving-average gradient estimator G is
// averaged across clients together with the parameters (CE-FedGNN,
// Algorithm 1 line 6).
type GradSharer interface {
	Learner
	// Grad returns a copy of the gradient estimator, NumParams long, or
	// nil when this learner shares none in this job (its optimizer keeps
	// no estimator, or the algorithm does not average one): nothing is
	// released then.
	Grad() []float32
	// SetGrad loads an averaged gradient estimator.
	SetGrad(g []float32) error
}
