package agent

import (
	"fmt"
	"graphfed/learner"
	"math"
	"math/rand/v2"
)

// LogisticConfig describes a LogisticLearner's synthetic task and data.
type LogisticConfig struct {
	Dim     int // features; the model has Dim weights and a bias
	Samples int // local examples; the last quarter is held out for testing
	// TaskSeed draws the true separating hyperplane, shared by every client
	// of a job; DataSeed draws this client's examples (and a client-specific
	// shift of their mean, so that clients are not identically distributed).
	TaskSeed, DataSeed uint64
	LR                 float64 // gradient-descent step; default 0.5
	LabelNoise         float64 // std of the noise added to the margin before labelling; default 0.5
}

// LogisticLearner is logistic regression trained by full-batch gradient
// descent on seeded synthetic data: a real model, small enough that the
// deterministic simulator trains thousands of jobs a second, and a pure
// function of its seeds (no map iteration, no goroutines, float64 sums in a
// fixed order).
type LogisticLearner struct {
	cfg    LogisticConfig
	x      []float64 // Samples×Dim, row-major
	y      []float64 // labels in {0, 1}
	nTrain int
	w      []float64 // Dim weights, then the bias
}

var _ learner.Learner = (*LogisticLearner)(nil)

// NewLogisticLearner draws the data and initialises the model from seed 0.
func NewLogisticLearner(cfg LogisticConfig) (*LogisticLearner, error) {
	if cfg.Dim < 1 || cfg.Samples < 4 {
		return nil, fmt.Errorf("agent: logistic learner: dim %d and samples %d must be at least 1 and 4", cfg.Dim, cfg.Samples)
	}
	if cfg.LR == 0 {
		cfg.LR = 0.5
	}
	if cfg.LabelNoise == 0 {
		cfg.LabelNoise = 0.5
	}
	task := rand.New(rand.NewPCG(cfg.TaskSeed, 0x7a5c))
	truth := make([]float64, cfg.Dim+1)
	for i := range truth {
		truth[i] = task.NormFloat64()
	}
	data := rand.New(rand.NewPCG(cfg.DataSeed, 0xda7a))
	shift := make([]float64, cfg.Dim)
	for i := range shift {
		shift[i] = 0.5 * data.NormFloat64()
	}
	l := &LogisticLearner{cfg: cfg, x: make([]float64, cfg.Samples*cfg.Dim), y: make([]float64, cfg.Samples),
		nTrain: cfg.Samples - cfg.Samples/4}
	for s := range cfg.Samples {
		row := l.x[s*cfg.Dim : (s+1)*cfg.Dim]
		margin := truth[cfg.Dim]
		for i := range row {
			row[i] = data.NormFloat64() + shift[i]
			margin += truth[i] * row[i]
		}
		if margin+cfg.LabelNoise*data.NormFloat64() > 0 {
			l.y[s] = 1
		}
	}
	l.Init(0)
	return l, nil
}

// SchemaHash implements Learner.
func (l *LogisticLearner) SchemaHash() string { return fmt.Sprintf("logistic-%d", l.cfg.Dim) }

// NumParams implements Learner.
func (l *LogisticLearner) NumParams() int { return l.cfg.Dim + 1 }

// TrainSize implements Learner.
func (l *LogisticLearner) TrainSize() int { return l.nTrain }

// Init implements Learner: small weights drawn from the job's seed.
func (l *LogisticLearner) Init(seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x1417))
	l.w = make([]float64, l.cfg.Dim+1)
	for i := range l.w {
		l.w[i] = 0.01 * r.NormFloat64()
	}
}

// Params implements Learner.
func (l *LogisticLearner) Params() []float32 {
	p := make([]float32, len(l.w))
	for i, v := range l.w {
		p[i] = float32(v)
	}
	return p
}

// SetParams implements Learner.
func (l *LogisticLearner) SetParams(p []float32) error {
	if len(p) != len(l.w) {
		return fmt.Errorf("agent: logistic learner: %d parameters, want %d", len(p), len(l.w))
	}
	for i, v := range p {
		l.w[i] = float64(v)
	}
	return nil
}

// margin is w·x + b for sample s.
func (l *LogisticLearner) margin(s int) float64 {
	d := l.cfg.Dim
	z := l.w[d]
	for i, v := range l.x[s*d : (s+1)*d] {
		z += l.w[i] * v
	}
	return z
}

// Train implements Learner: full-batch gradient descent on the mean
// logistic loss of the training examples; it returns the loss before the
// last step.
func (l *LogisticLearner) Train(epochs int) float64 {
	d := l.cfg.Dim
	grad := make([]float64, d+1)
	var loss float64
	for range epochs {
		clear(grad)
		loss = 0
		for s := range l.nTrain {
			z := l.margin(s)
			p := 1 / (1 + math.Exp(-z))
			loss += softplus(z) - l.y[s]*z
			g := p - l.y[s]
			for i, v := range l.x[s*d : (s+1)*d] {
				grad[i] += g * v
			}
			grad[d] += g
		}
		n := float64(l.nTrain)
		loss /= n
		for i := range l.w {
			l.w[i] -= l.cfg.LR * grad[i] / n
		}
	}
	return loss
}

// softplus is log(1 + e^z) without overflow.
func softplus(z float64) float64 {
	if z > 30 {
		return z
	}
	return math.Log1p(math.Exp(z))
}

// Evaluate implements Learner: accuracy and loss on the held-out quarter.
func (l *LogisticLearner) Evaluate() map[string]float64 {
	var correct, loss float64
	n := l.cfg.Samples - l.nTrain
	for s := l.nTrain; s < l.cfg.Samples; s++ {
		z := l.margin(s)
		if (z > 0) == (l.y[s] == 1) {
			correct++
		}
		loss += softplus(z) - l.y[s]*z
	}
	return map[string]float64{"test_acc": correct / float64(n), "test_loss": loss / float64(n), "test_n": float64(n)}
}
