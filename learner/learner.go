package learner

// Learner is a client's local model and data.
type Learner interface {
	// SchemaHash identifies the parameter layout; all clients of a job agree.
	SchemaHash() string
	// NumParams is the length of Params.
	NumParams() int
	// TrainSize is the number of local training examples (the FedAvg weight).
	TrainSize() int
	// Init re-initialises the parameters from a seed shared by the job, so
	// that every client starts from the same model.
	Init(seed uint64)
	// Params returns a copy of the flat parameter vector.
	Params() []float32
	// SetParams loads a flat parameter vector.
	SetParams(p []float32) error
	// Train runs the given number of local epochs and returns the last loss.
	Train(epochs int) float64
	// Evaluate scores the current parameters on the local data; keys follow
	// the CLI contract (test_acc, test_macro_f1, val_acc, ...).
	Evaluate() map[string]float64
}
