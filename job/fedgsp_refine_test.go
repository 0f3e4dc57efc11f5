package job

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/fedgsp"
)

// TestRefineStage: the chosen row's raw-feature variant runs as a short
// trial compared by where it ends; then the choice and each slower decade
// run over the job's rounds, compared by their best validation rounds, and
// the best is kept. A setting the caller fixed, or features that row
// normalisation leaves alone, are not varied.
func TestRefineStage(t *testing.T) {
	const long = 100
	lr := 0.02
	for _, tt := range []struct {
		name       string
		o          fedgsp.Overrides
		rawMatters bool
		// scores decide: a short trial's by name, a long one's by
		// name@long; a missing one is NaN.
		scores    map[string]float64
		fail      error
		chosen    string
		ran       []string
		wantError string
	}{
		{name: "raw wins, then the slowest decade", rawMatters: true,
			scores: map[string]float64{"heterophilic+raw": 0.6, "heterophilic+raw@long": 0.3, "heterophilic+raw+slow@long": 0.2, "heterophilic+raw+slow2@long": 0.4},
			chosen: "heterophilic+raw+slow2", ran: []string{"heterophilic+raw", "heterophilic+raw@long", "heterophilic+raw+slow@long", "heterophilic+raw+slow2@long"}},
		{name: "raw loses, one decade wins", rawMatters: true,
			scores: map[string]float64{"heterophilic+raw": 0.4, "heterophilic@long": 0.5, "heterophilic+slow@long": 0.51, "heterophilic+slow2@long": 0.1},
			chosen: "heterophilic+slow", ran: []string{"heterophilic+raw", "heterophilic@long", "heterophilic+slow@long", "heterophilic+slow2@long"}},
		{name: "a tie keeps the row", rawMatters: true,
			scores: map[string]float64{"heterophilic+raw": 0.5, "heterophilic@long": 0.5, "heterophilic+slow@long": 0.5, "heterophilic+slow2@long": 0.5},
			chosen: "heterophilic", ran: []string{"heterophilic+raw", "heterophilic@long", "heterophilic+slow@long", "heterophilic+slow2@long"}},
		{name: "a NaN trial never wins", rawMatters: true, scores: map[string]float64{},
			chosen: "heterophilic", ran: []string{"heterophilic+raw", "heterophilic@long", "heterophilic+slow@long", "heterophilic+slow2@long"}},
		{name: "a finite decade beats a NaN choice", scores: map[string]float64{"heterophilic+slow2@long": 0.1},
			chosen: "heterophilic+slow2", ran: []string{"heterophilic@long", "heterophilic+slow@long", "heterophilic+slow2@long"}},
		{name: "normalisation changes nothing: no raw trial", scores: map[string]float64{"heterophilic@long": 0.1, "heterophilic+slow@long": 0.9},
			chosen: "heterophilic+slow", ran: []string{"heterophilic@long", "heterophilic+slow@long", "heterophilic+slow2@long"}},
		{name: "the caller fixed the rate", o: fedgsp.Overrides{LR1: &lr}, rawMatters: true, scores: map[string]float64{"heterophilic+raw": 0.9},
			chosen: "heterophilic+raw", ran: []string{"heterophilic+raw"}},
		{name: "a trial fails", rawMatters: true, fail: errors.New("server gone"), wantError: "federated trial of heterophilic+raw: server gone"},
	} {
		var ran []string
		rounds := 40
		run := func(_ context.Context, c fedgsp.Candidate, n int) (trialResult, error) {
			ref, _ := fedgsp.Preset(c.Name)
			tt.o.Apply(&ref)
			if (n != DefaultFedGSPTrialRounds && n != long) || !reflect.DeepEqual(c.Config, ref) {
				t.Errorf("%s: trial of %s over %d rounds with %+v, want %d or %d rounds of %+v", tt.name, c.Name, n, c.Config, DefaultFedGSPTrialRounds, long, ref)
			}
			rounds += n
			key := c.Name
			if n == long {
				key += "@long"
			}
			ran = append(ran, key)
			if tt.fail != nil {
				return trialResult{}, tt.fail
			}
			s, ok := tt.scores[key]
			if !ok {
				s = math.NaN()
			}
			// The score that does not decide says the opposite.
			best, late := 1-s, s
			if n == long {
				best, late = s, 1-s
			}
			return trialResult{Final: map[string]map[string]float64{"client-0": {"val_n": 10, "best_val_score": best}}, Late: []float64{late - 0.1, late + 0.1, late}}, nil
		}
		out := FedGSPSelection{Selection: fedgsp.Selection{Chosen: "heterophilic"}, RawMatters: tt.rawMatters,
			Federated: []FederatedTrial{{Name: "cora", Score: 0.9, LateScore: 0.45}, {Name: "heterophilic", Score: 0.1, LateScore: 0.5}}, TrialRounds: 40}
		err := refineStage(context.Background(), &out, tt.o, FedGSPSelect{RefineRounds: long}, run, zerolog.Nop())
		if tt.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantError) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantError)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if out.Chosen != tt.chosen || !reflect.DeepEqual(ran, tt.ran) || len(out.Federated) != 2+len(tt.ran) || out.TrialRounds != rounds {
			t.Errorf("%s: chose %s after %v (%d trials, %d rounds), want %s after %v (%d rounds)", tt.name, out.Chosen, ran, len(out.Federated), out.TrialRounds, tt.chosen, tt.ran, rounds)
		}
		for i, tr := range out.Federated[2:] {
			if want, ok := tt.scores[tt.ran[i]]; ok && tr.Rounds == DefaultFedGSPTrialRounds && math.Abs(tr.LateScore-want) > 1e-12 {
				t.Errorf("%s: refinement %s late score %v, want the late rounds' mean %v", tt.name, tr.Name, tr.LateScore, want)
			}
			if tr.Refines == "" {
				t.Errorf("%s: refinement %s does not say what it refined", tt.name, tr.Name)
			}
		}
	}
	// Without a federated stage there is no score to refine against.
	out := FedGSPSelection{Selection: fedgsp.Selection{Chosen: "cora"}, RawMatters: true}
	called := false
	run := func(context.Context, fedgsp.Candidate, int) (trialResult, error) {
		called = true
		return trialResult{}, nil
	}
	if err := refineStage(context.Background(), &out, fedgsp.Overrides{}, FedGSPSelect{}, run, zerolog.Nop()); err != nil || called || out.Chosen != "cora" {
		t.Errorf("refined without a federated stage: err %v, ran %v, chose %s", err, called, out.Chosen)
	}
}
