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
// is refined, one setting at a time, each variant a federated trial that
// replaces the choice only when it does better.
//
// The two settings need different trials. Raw features against
// normalised ones show within the finalists' short trials, compared by
// where each ends (LateScore) rather than its best round: a faster
// setting peaks early and then falls. A slower rate does not show there
// at all: on actor (seed 1, raw features) twenty rounds at MLP rates of
// 10⁻², 10⁻³ and 10⁻⁴ ended at validation 0.266, 0.272 and 0.270, while
// over the job's hundred rounds the best validation rounds were 0.309,
// 0.303 and 0.326 and the test scores at them 27.9, 27.8 and 30.1. So the
// rate is refined over the job's own rounds (FedGSPSelect.RefineRounds)
// and compared as the job is scored, at each client's best validation
// round (Score): the choice itself over those rounds, then each slower
// decade. That is the stage's cost: up to three trials as long as the
// job.

// refineStage tries the variants of out.Chosen (fedgsp.Refinements) as
// federated trials after the finalists', each against the best so far.
// Nothing is refined when the federated stage did not run (there is no
// trial score to compare with) or run is nil.
func refineStage(ctx context.Context, out *FedGSPSelection, o fedgsp.Overrides, opt FedGSPSelect, run trialRunner, log zerolog.Logger) error {
	if run == nil || len(out.Federated) == 0 {
		return nil
	}
	short, long := opt.TrialRounds, opt.RefineRounds
	if short == 0 {
		short = DefaultFedGSPTrialRounds
	}
	if long == 0 {
		long = short
	}
	best := math.Inf(-1)
	for _, t := range out.Federated {
		if t.Name == out.Chosen && !math.IsNaN(t.LateScore) {
			best = t.LateScore
		}
	}
	for _, step := range fedgsp.Refinements(o, out.RawMatters) {
		if step == fedgsp.SlowSuffix {
			return slowLadder(ctx, out, o, long, run, log)
		}
		name, ok := fedgsp.WithStep(out.Chosen, step)
		if !ok {
			continue
		}
		t, err := refineTrial(ctx, out, o, name, out.Chosen, short, run, log)
		if err != nil {
			return err
		}
		if t.LateScore > best { // NaN never wins
			out.Chosen, best = name, t.LateScore
		}
	}
	return nil
}

// slowLadder runs out.Chosen over rounds rounds, then each of its slower
// variants (fedgsp.MaxSlowDecades of them), and leaves the best scoring
// in out.Chosen, the choice itself on a tie. Every decade runs, not only
// while each improves: validation need not fall monotonically with the
// rate (actor's seed 1 above: 0.309, 0.303, 0.326).
func slowLadder(ctx context.Context, out *FedGSPSelection, o fedgsp.Overrides, rounds int, run trialRunner, log zerolog.Logger) error {
	anchor, err := refineTrial(ctx, out, o, out.Chosen, out.Chosen, rounds, run, log)
	if err != nil {
		return err
	}
	best, chosen := anchor.Score, out.Chosen
	for name, ok := fedgsp.WithStep(out.Chosen, fedgsp.SlowSuffix); ok; name, ok = fedgsp.WithStep(name, fedgsp.SlowSuffix) {
		t, err := refineTrial(ctx, out, o, name, out.Chosen, rounds, run, log)
		if err != nil {
			return err
		}
		if t.Score > best || math.IsNaN(best) && !math.IsNaN(t.Score) {
			best, chosen = t.Score, name
		}
	}
	out.Chosen = chosen
	return nil
}

// refineTrial runs preset name (with the caller's settings o on top) as a
// refinement trial of choice.
func refineTrial(ctx context.Context, out *FedGSPSelection, o fedgsp.Overrides, name, choice string, rounds int, run trialRunner, log zerolog.Logger) (FederatedTrial, error) {
	c, _ := fedgsp.Preset(name)
	o.Apply(&c)
	t, err := runTrial(ctx, out, fedgsp.Candidate{Name: name, Config: c}, rounds, run, log)
	if err != nil {
		return t, err
	}
	out.Federated[len(out.Federated)-1].Refines = choice
	return t, nil
}
