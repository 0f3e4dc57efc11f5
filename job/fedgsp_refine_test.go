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

// TestRefineStage: the chosen row's variants run as trials one setting at
// a time, each against the best so far, and replace the choice only with
// a higher score; a setting the caller fixed, or features that row
// normalisation leaves alone, are not varied.
func TestRefineStage(t *testing.T) {
	lr := 0.02
	for _, tt := range []struct {
		name       string
		o          fedgsp.Overrides
		rawMatters bool
		scores     map[string]float64
		fail       error
		chosen     string
		ran        []string
		wantError  string
	}{
		{name: "raw wins, then slow on top", rawMatters: true,
			scores: map[string]float64{"heterophilic+raw": 0.6, "heterophilic+raw+slow": 0.7},
			chosen: "heterophilic+raw+slow", ran: []string{"heterophilic+raw", "heterophilic+raw+slow"}},
		{name: "raw loses, slow of the row wins", rawMatters: true,
			scores: map[string]float64{"heterophilic+raw": 0.4, "heterophilic+slow": 0.51},
			chosen: "heterophilic+slow", ran: []string{"heterophilic+raw", "heterophilic+slow"}},
		{name: "a tie keeps the row", rawMatters: true,
			scores: map[string]float64{"heterophilic+raw": 0.5, "heterophilic+slow": 0.5},
			chosen: "heterophilic", ran: []string{"heterophilic+raw", "heterophilic+slow"}},
		{name: "a NaN trial never wins", rawMatters: true, scores: map[string]float64{},
			chosen: "heterophilic", ran: []string{"heterophilic+raw", "heterophilic+slow"}},
		{name: "normalisation changes nothing: no raw trial", scores: map[string]float64{"heterophilic+slow": 0.9},
			chosen: "heterophilic+slow", ran: []string{"heterophilic+slow"}},
		{name: "the caller fixed the rate", o: fedgsp.Overrides{LR1: &lr}, rawMatters: true, scores: map[string]float64{"heterophilic+raw": 0.9},
			chosen: "heterophilic+raw", ran: []string{"heterophilic+raw"}},
		{name: "a trial fails", rawMatters: true, fail: errors.New("server gone"), wantError: "federated trial of heterophilic+raw: server gone"},
	} {
		var ran []string
		run := func(_ context.Context, c fedgsp.Candidate, rounds int) (trialResult, error) {
			ref, _ := fedgsp.Preset(c.Name)
			tt.o.Apply(&ref)
			if rounds != DefaultFedGSPTrialRounds || !reflect.DeepEqual(c.Config, ref) {
				t.Errorf("%s: trial of %s over %d rounds with %+v, want %d rounds of %+v", tt.name, c.Name, rounds, c.Config, DefaultFedGSPTrialRounds, ref)
			}
			ran = append(ran, c.Name)
			if tt.fail != nil {
				return trialResult{}, tt.fail
			}
			s, ok := tt.scores[c.Name]
			if !ok {
				s = math.NaN()
			}
			// The best round says the opposite of the late ones: the
			// late ones decide.
			return trialResult{Final: map[string]map[string]float64{"client-0": {"val_n": 10, "best_val_score": 1 - s}}, Late: []float64{s - 0.1, s + 0.1, s}}, nil
		}
		out := FedGSPSelection{Selection: fedgsp.Selection{Chosen: "heterophilic"}, RawMatters: tt.rawMatters,
			Federated: []FederatedTrial{{Name: "cora", Score: 0.9, LateScore: 0.45}, {Name: "heterophilic", Score: 0.1, LateScore: 0.5}}, TrialRounds: 40}
		err := refineStage(context.Background(), &out, tt.o, FedGSPSelect{}, run, zerolog.Nop())
		if tt.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantError) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantError)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if out.Chosen != tt.chosen || !reflect.DeepEqual(ran, tt.ran) || len(out.Federated) != 2+len(tt.ran) || out.TrialRounds != 40+20*len(tt.ran) {
			t.Errorf("%s: chose %s after %v (%d trials, %d rounds), want %s after %v", tt.name, out.Chosen, ran, len(out.Federated), out.TrialRounds, tt.chosen, tt.ran)
		}
		for _, tr := range out.Federated[2:] {
			if want, ok := tt.scores[tr.Name]; ok && math.Abs(tr.LateScore-want) > 1e-12 {
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
