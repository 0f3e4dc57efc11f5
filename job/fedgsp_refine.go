package job

import (
	"context"
	"math"

	"github.com/rs/zerolog"

	"graphfed/fedgsp"
)

// The selection's third stage. The grid's rows were tuned on datasets
// that agree on two settings which belong to the data more than to the
// method: whether row normalisation suits the features, and how far one
// local Adam step may move the MLP (fedgsp.RawSuffix, fedgsp.SlowSuffix).
// Actor disagrees on both, and with the rows alone the selection lost to
// FedAvg there. Doubling the grid along them would double the local
// trial and fill the shortlist with near-copies; so only the chosen row
// is refined, one setting at a time, each variant a federated trial like
// the finalists' that replaces the choice only when it ends higher: the
// comparison is each trial's validation score over its last quarter of
// rounds (LateScore), not its best round. A faster setting peaks early
// and then falls, a slower one is still rising: on actor (seed 1) the
// heterophilic row on raw features had the best round of its 20 (0.302
// against the slower one's 0.294), yet over 100 rounds scored 27.9 to
// the slower one's 29.6 at a twentieth of the rate. Where a trial ends
// is what the job goes on from.

// refineStage tries the variants of out.Chosen (fedgsp.Refinements) as
// federated trials after the finalists', each against the best so far.
// Nothing is refined when the federated stage did not run (there is no
// trial score to compare with) or run is nil.
func refineStage(ctx context.Context, out *FedGSPSelection, o fedgsp.Overrides, opt FedGSPSelect, run trialRunner, log zerolog.Logger) error {
	if run == nil || len(out.Federated) == 0 {
		return nil
	}
	rounds := opt.TrialRounds
	if rounds == 0 {
		rounds = DefaultFedGSPTrialRounds
	}
	best := math.Inf(-1)
	for _, t := range out.Federated {
		if t.Name == out.Chosen && !math.IsNaN(t.LateScore) {
			best = t.LateScore
		}
	}
	for _, step := range fedgsp.Refinements(o, out.RawMatters) {
		name, ok := fedgsp.WithStep(out.Chosen, step)
		if !ok {
			continue
		}
		c, _ := fedgsp.Preset(name)
		o.Apply(&c)
		t, err := runTrial(ctx, out, fedgsp.Candidate{Name: name, Config: c}, rounds, run, log)
		if err != nil {
			return err
		}
		out.Federated[len(out.Federated)-1].Refines = out.Chosen
		if t.LateScore > best { // NaN never wins
			out.Chosen, best = name, t.LateScore
		}
	}
	return nil
}
