package job

import (
	"fmt"

	"github.com/rs/zerolog"

	"graphfed/deploy"
	"graphfed/learner"
	"graphfed/seeds"
	"graphfed/workload/rec"
)

// buildLearners builds one learner per client through
// deploy.BuildLearner, client i under ids[i] with its own learner stream
// of the job's seed (seeds.Party).
func buildLearners(task, algo string, data []deploy.Data, ids []string, o deploy.LearnerOptions, seed uint64, log zerolog.Logger) ([]learner.Learner, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("job: %s learners: no clients", task)
	}
	if len(ids) != len(data) {
		return nil, fmt.Errorf("job: %s learners: %d ids for %d clients", task, len(ids), len(data))
	}
	out := make([]learner.Learner, len(data))
	for i := range data {
		l, err := deploy.BuildLearner(task, algo, data[i], o, deploy.Party{ID: ids[i], Seed: seeds.Party(seed, i, seeds.Learner)},
			log.With().Str("client", ids[i]).Logger())
		if err != nil {
			return nil, fmt.Errorf("job: %w", err)
		}
		out[i] = l.Learner
	}
	return out, nil
}

// RecLearners builds one LPSFed learner per prepared client for algo
// (fedavg, lpsfed-bpr or lpsfed) with the options' model and strictness,
// with the ids to run them under.
func RecLearners(clients []rec.PreparedClient, algo string, o deploy.RecOptions, seed uint64, log zerolog.Logger) ([]learner.Learner, []string, error) {
	data := make([]deploy.Data, len(clients))
	ids := make([]string, len(clients))
	for i := range clients {
		data[i], ids[i] = deploy.Data{Rec: &clients[i].Prepared}, clients[i].ID
	}
	lo := deploy.DefaultLearnerOptions()
	lo.Rec = o
	ls, err := buildLearners(deploy.TaskRec, algo, data, ids, lo, seed, log)
	return ls, ids, err
}
