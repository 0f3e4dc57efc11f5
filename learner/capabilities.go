package learner

// Optional learner capabilities beyond Exchanger, ExchangeScheduler and
// GradSharer (exchange.go). The agent's machine checks for each with a
// type assertion, so a learner implements only what its algorithm needs;
// LPSFed's learner implements AlgoReceiver to ScalarReleaser, FedGSP's
// DescriptorReleaser, the AML learner FinalEvaluator and ScoreLogger.

// AlgoReceiver is a learner that must know the job's algorithm (LPSFed:
// the loss and the scalars to release follow it). An error refuses the
// join on the agent's side: the agent stops.
type AlgoReceiver interface {
	Learner
	SetAlgo(algo string) error
}

// HelloCounter is a learner that announces counts of its data with its
// hello (LPSFed's subgraph users, items and edges, for the reference
// graph). Counts only; zeros send nothing (strict mode).
type HelloCounter interface {
	Learner
	HelloCounts() (users, items, edges int)
}

// RoundPayloadReceiver is a learner that takes the strategy payload of a
// round opening. The machine decodes the payload (bus.LPSFedRound, the one
// payload today) and hands over the reference kernel K^R and its version.
type RoundPayloadReceiver interface {
	Learner
	SetReference(version uint64, kernel []float64)
}

// MarginReceiver is a learner that loads a personalized margin sent with
// its model (LPSFed's M̄·ρ̄_c + M^c·(1 − ρ̄_c)).
type MarginReceiver interface {
	Learner
	SetMargin(m float64)
}

// The kinds of released scalars: which field of the update each fills.
const (
	ScalarRho    = "rho"    // Update.Rho and RhoVersion
	ScalarMargin = "margin" // Update.Margin
)

// Scalar is one value a ScalarReleaser wants released after a round, on
// privacy.ChannelMargin, clipped to Clip; Version is, for ScalarRho, the
// reference kernel version it was computed against.
type Scalar struct {
	Kind    string
	Value   float64
	Clip    float64
	Version uint64
}

// ScalarReleaser is a learner that releases scalars with its update
// (LPSFed's structural divergence ρ_c and mean margin M^c). The machine
// asks only when the parameters went out, releases each through the gate
// in order, and confirms each one that did.
type ScalarReleaser interface {
	Learner
	Scalars(round uint64) []Scalar
	ScalarReleased(s Scalar)
}

// FinalEvaluator is a learner whose final evaluation differs from the
// per-round one: the AML learner scores a bounded sample each round and
// every transaction at the end. The machine calls it once, on the final
// model, instead of Evaluate.
type FinalEvaluator interface {
	Learner
	EvaluateFinal() map[string]float64
}

// ScoreLogger is a learner whose final scores hold keys meant for pooling
// rather than for reading (the AML learner's confusion counts at every
// threshold of its decision grid: hundreds of keys). The agent's
// "finished" log line shows LogScores(scores), and how many keys it left
// out, instead of every score; Result.Final keeps them all.
type ScoreLogger interface {
	Learner
	LogScores(scores map[string]float64) (shown map[string]float64, omitted int)
}

// Descriptor is FedGSP's spectral descriptors (the FedGSP contract, laid
// out as package fedgsp documents at DescriptorRows): 4·Orders·Principal
// rows of Dim values, row-major, each row of norm at most 1.
type Descriptor struct {
	Orders, Principal, Dim int
	Rows                   []float32
}

// DescriptorReleaser is a learner with data-derived descriptors to release
// once (FedGSP's principal directions of its bases). The machine asks for
// them as it prepares the first update it sends, releases them through the
// gate on privacy.ChannelDescriptor (clip 1 per row, σ =
// MachineConfig.DescriptorSigma), attaches them to that update and
// confirms with DescriptorsReleased. A restarted agent whose ledger holds
// the release confirms without releasing again. A budget refusal sends the
// update without them (the aggregator then keeps uniform rows for the
// client).
type DescriptorReleaser interface {
	Learner
	Descriptors() (d Descriptor, ok bool) // ok=false: nothing (left) to release
	DescriptorsReleased()                 // the gate released them and they went out: never offer again
}
