package lpsfed

import (
	"fmt"
	"math"

	"github.com/rs/zerolog"

	"graphfed/learner"
)

// Algorithms a client can be asked to run (the aggregator's names).
const (
	AlgoFedAvg    = "fedavg"     // BPR model, sample-weighted average, nothing but the MLPs released
	AlgoLPSFedBPR = "lpsfed-bpr" // BPR model, ρ-personalized mixing: MLPs and ρ_c released
	AlgoLPSFed    = "lpsfed"     // BC model: MLPs, ρ_c and M^c released
)

// LossFor is the loss a client must train with under algo.
func LossFor(algo string) string {
	if algo == AlgoLPSFed {
		return LossBC
	}
	return LossBPR
}

// Clips of the scalars, their natural ranges: M^c ∈ [0, π]; ρ_c is a KL
// divergence of Φ-point distributions, rarely above a few nats. (The MLPs'
// σ and clip, and the scalars' σ, are the agent's.)
const (
	DefaultMarginClip = math.Pi
	DefaultRhoClip    = 10
)

// LearnerConfig configures a Learner.
type LearnerConfig struct {
	Strict     bool    // send no subgraph counts with the hello
	MarginClip float64 // clip of M^c; default π
	RhoClip    float64 // clip of ρ_c; default DefaultRhoClip
	Log        zerolog.Logger
}

// Learner is one LPSFed client's model, data and kernel as a federated
// learner: the agent runtime trains it, releases its MLPs on the model
// channel and its scalars (ρ_c, M^c) on the margin channel, and loads the
// personalized model and margin the aggregator sends back. It implements
// learner.Learner and the optional capabilities learner.AlgoReceiver,
// HelloCounter, RoundPayloadReceiver, MarginReceiver and ScalarReleaser;
// this package imports neither agent nor bus.
type Learner struct {
	cfg    LearnerConfig
	model  *Model
	kernel []float64 // K^c, the client's own low-pass kernel (Eq. 6/16)

	algo       string
	ref        []float64 // K^R
	refVersion uint64
	rhoSent    uint64 // K^R version of the last released ρ_c
}

// NewLearner wraps model m, whose own kernel is kernel (K^c over Φ
// frequencies).
func NewLearner(cfg LearnerConfig, m *Model, kernel []float64) (*Learner, error) {
	if m == nil {
		return nil, fmt.Errorf("lpsfed: learner: no model")
	}
	if cfg.MarginClip == 0 {
		cfg.MarginClip = DefaultMarginClip
	}
	if cfg.RhoClip == 0 {
		cfg.RhoClip = DefaultRhoClip
	}
	return &Learner{cfg: cfg, model: m, kernel: kernel}, nil
}

// SchemaHash identifies the layout of the shared MLPs.
func (l *Learner) SchemaHash() string { return l.model.SchemaHash() }

// NumParams is the length of the shared MLP vector.
func (l *Learner) NumParams() int { return l.model.NumShared() }

// TrainSize is the number of training edges (the FedAvg weight).
func (l *Learner) TrainSize() int { return l.model.data.NumTrain() }

// Init initialises the shared MLPs from the job's seed.
func (l *Learner) Init(seed uint64) { l.model.InitShared(seed) }

// Params returns the shared MLPs, flat.
func (l *Learner) Params() []float32 { return l.model.Shared() }

// SetParams loads a (personalized) shared MLP vector θ^c.
func (l *Learner) SetParams(p []float32) error { return l.model.SetShared(p) }

// Train runs local epochs and returns the last loss.
func (l *Learner) Train(epochs int) float64 { return l.model.Train(epochs) }

// Evaluate ranks the held-out items and names the metrics by the CLI
// contract.
func (l *Learner) Evaluate() map[string]float64 {
	s := l.model.Evaluate()
	out := map[string]float64{
		fmt.Sprintf("recall_at_%d", s.K): s.Recall, fmt.Sprintf("ndcg_at_%d", s.K): s.NDCG,
		"eval_users": float64(s.Users), "test_users": float64(s.TestUsers),
	}
	if m, ok := l.model.MeanMargin(); ok {
		out["mean_margin"] = m
	}
	l.addValidation(out)
	return out
}

// SetAlgo checks that the model trains with the loss algo needs.
func (l *Learner) SetAlgo(algo string) error {
	if want := LossFor(algo); want != l.model.cfg.Loss {
		return fmt.Errorf("lpsfed: algo %s trains with loss %s, model has %s", algo, want, l.model.cfg.Loss)
	}
	l.algo = algo
	return nil
}

// HelloCounts are the subgraph's users, items and training edges (counts
// only), for the server's reference graph; none in strict mode.
func (l *Learner) HelloCounts() (users, items, edges int) {
	if l.cfg.Strict {
		return 0, 0, 0
	}
	d := l.model.data
	return d.Users, d.Items, d.NumTrain()
}

// SetReference takes the server's reference kernel K^R of a round opening.
func (l *Learner) SetReference(version uint64, kernel []float64) {
	if version == l.refVersion && l.ref != nil {
		return
	}
	l.ref, l.refVersion = kernel, version
}

// SetMargin loads the personalized margin (Eq. 14).
func (l *Learner) SetMargin(m float64) { l.model.SetGlobalMargin(m) }

var (
	_ learner.AlgoReceiver         = (*Learner)(nil)
	_ learner.HelloCounter         = (*Learner)(nil)
	_ learner.RoundPayloadReceiver = (*Learner)(nil)
	_ learner.MarginReceiver       = (*Learner)(nil)
	_ learner.ScalarReleaser       = (*Learner)(nil)
)
