package scenarios

import (
	"errors"
	"fmt"

	"github.com/rs/zerolog"

	"graphfed/gnn"
	"graphfed/learner"
	"graphfed/lpsfed"
)

// LPSFedClient is one client's prepared input to an LPSFed job: its
// user–item subgraph, its Φ lowest-frequency eigenvectors (n×Φ, n =
// Data.Nodes()) and its low-pass kernel K^c over the same Φ frequencies.
type LPSFedClient struct {
	ID      string
	Data    *lpsfed.Data
	Vectors *gnn.Tensor
	Kernel  []float64
}

// LPSFedLearners builds one learner per prepared client for algo (fedavg,
// lpsfed-bpr or lpsfed), with the ids to run them under. Every client's
// model takes model's configuration; its loss follows the algorithm and
// its seed is its own. Run by RunSim with Task deploy.TaskRec they are a
// recommendation job: there is no second simulation path for LPSFed.
func LPSFedLearners(clients []LPSFedClient, algo string, model lpsfed.Config, strict bool, seed uint64, log zerolog.Logger) ([]learner.Learner, []string, error) {
	if len(clients) == 0 {
		return nil, nil, errors.New("scenarios: lpsfed learners: no clients")
	}
	learners := make([]learner.Learner, len(clients))
	ids := make([]string, len(clients))
	for i, pc := range clients {
		mc := model
		mc.Loss = lpsfed.LossFor(algo)
		mc.Seed = seed*1000003 + uint64(i) + 1
		m, err := lpsfed.NewModel(pc.Data, pc.Vectors, mc)
		if err != nil {
			return nil, nil, fmt.Errorf("scenarios: lpsfed learners: client %s: %w", pc.ID, err)
		}
		l, err := lpsfed.NewLearner(lpsfed.LearnerConfig{Strict: strict, Log: log.With().Str("client", pc.ID).Logger()}, m, pc.Kernel)
		if err != nil {
			return nil, nil, fmt.Errorf("scenarios: lpsfed learners: client %s: %w", pc.ID, err)
		}
		learners[i], ids[i] = l, pc.ID
	}
	return learners, ids, nil
}
