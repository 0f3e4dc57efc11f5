package job

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/fedgsp"
	"graphfed/graph"
)

func TestFinalists(t *testing.T) {
	nan := math.NaN()
	sel := fedgsp.Selection{Scores: []fedgsp.CandidateScore{
		{Name: "a", Score: 0.5, Coverage: 1},
		{Name: "b", Score: 0.7, Coverage: 1},
		{Name: "c", Score: 0.9, Coverage: 0.4}, // too few clients scored it
		{Name: "d", Score: 0.7, Coverage: 0.6}, // ties b: b comes first in the grid
		{Name: "e", Score: nan},
		{Name: "f", Score: 0.6, Coverage: 1},
	}}
	for _, tt := range []struct {
		n    int
		want []string
	}{
		{0, []string{}},
		{1, []string{"b"}},
		{3, []string{"b", "d", "f"}},
		{9, []string{"b", "d", "f", "a"}},
	} {
		if got := finalists(sel, tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("finalists(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

func TestTrialScore(t *testing.T) {
	for _, tt := range []struct {
		name    string
		final   map[string]map[string]float64
		want    float64
		clients int
	}{
		{"weighted by validation count", map[string]map[string]float64{
			"c0": {"best_val_score": 0.9, "val_n": 10}, "c1": {"best_val_score": 0.6, "val_n": 30}}, 0.675, 2},
		{"a NaN score or no validation nodes is left out", map[string]map[string]float64{
			"c0": {"best_val_score": 0.8, "val_n": 5}, "c1": {"best_val_score": math.NaN(), "val_n": 50},
			"c2": {"best_val_score": 0.1, "val_n": 0}, "c3": {"val_n": 9}}, 0.8, 1},
		{"nothing scored", map[string]map[string]float64{"c0": {"best_val_score": math.Inf(1), "val_n": 5}}, math.NaN(), 0},
	} {
		got, n := trialScore(tt.final)
		if n != tt.clients || !(math.Abs(got-tt.want) < 1e-12 || math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("%s: %v over %d clients, want %v over %d", tt.name, got, n, tt.want, tt.clients)
		}
	}
}

// TestFederatedTrialJSON: a trial nobody scored still encodes, its score
// as null, so that the summary of a job whose trials all failed to score
// is written.
func TestFederatedTrialJSON(t *testing.T) {
	for _, tt := range []struct {
		score float64
		want  string
	}{{0.5, `"score":0.5`}, {math.NaN(), `"score":null`}, {math.Inf(-1), `"score":null`}} {
		b, err := json.Marshal(FederatedTrial{Name: "cora", Score: tt.score, Clients: 2})
		if err != nil || !strings.Contains(string(b), tt.want) || !strings.Contains(string(b), `"name":"cora"`) {
			t.Errorf("score %v: %s (%v), want %s", tt.score, b, err, tt.want)
		}
	}
}

// TestFederatedStage: the finalists of the local pick each run once, with
// their own settings and the trial's rounds, and the best federated score
// is chosen even where the local pick was another; a negative count keeps
// the local pick; a failed trial or no finite score is an error.
func TestFederatedStage(t *testing.T) {
	cands, err := fedgsp.Candidates([]string{"cora", "minesweeper", "heterophilic"}, fedgsp.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	local := fedgsp.Selection{Grid: []string{"cora", "minesweeper", "heterophilic"}, Chosen: "minesweeper", Scores: []fedgsp.CandidateScore{
		{Name: "cora", Score: 0.5, Coverage: 1}, {Name: "minesweeper", Score: 0.8, Coverage: 1}, {Name: "heterophilic", Score: 0.7, Coverage: 1}}}
	federated := map[string]float64{"minesweeper": 0.4, "heterophilic": 0.65, "cora": 0.99}
	for _, tt := range []struct {
		name      string
		opt       FedGSPSelect
		scores    map[string]float64
		fail      error
		chosen    string
		ran       []string
		wantError string
	}{
		{name: "the federated trials overrule the local pick", opt: FedGSPSelect{Finalists: 2, TrialRounds: 7}, scores: federated,
			chosen: "heterophilic", ran: []string{"minesweeper", "heterophilic"}},
		{name: "default: three finalists of 20 rounds", scores: federated, chosen: "cora", ran: []string{"minesweeper", "heterophilic", "cora"}},
		{name: "negative: the local pick stands", opt: FedGSPSelect{Finalists: -1}, scores: federated, chosen: "minesweeper"},
		{name: "one finalist: nothing to compare", opt: FedGSPSelect{Finalists: 1}, scores: federated, chosen: "minesweeper"},
		{name: "a trial fails", opt: FedGSPSelect{Finalists: 2}, fail: errors.New("server gone"), wantError: "federated trial of minesweeper: server gone"},
		{name: "no trial scored", opt: FedGSPSelect{Finalists: 2}, scores: map[string]float64{}, wantError: "no federated trial"},
	} {
		var ran []string
		run := func(_ context.Context, c fedgsp.Candidate, rounds int) (trialResult, error) {
			want := DefaultFedGSPTrialRounds
			if tt.opt.TrialRounds != 0 {
				want = tt.opt.TrialRounds
			}
			if ref, _ := fedgsp.Preset(c.Name); rounds != want || !reflect.DeepEqual(c.Config, ref) {
				t.Errorf("%s: trial of %s over %d rounds with %+v, want %d rounds of its preset", tt.name, c.Name, rounds, c.Config, want)
			}
			ran = append(ran, c.Name)
			if tt.fail != nil {
				return trialResult{}, tt.fail
			}
			final := map[string]map[string]float64{"client-0": {"val_n": 10, "best_val_score": math.NaN()}}
			if s, ok := tt.scores[c.Name]; ok {
				final["client-0"]["best_val_score"] = s
			}
			return trialResult{Final: final, Messages: 3, Bytes: 100}, nil
		}
		out := FedGSPSelection{Selection: local}
		err := federatedStage(context.Background(), &out, cands, tt.opt, run, zerolog.Nop())
		if tt.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantError) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantError)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if out.Chosen != tt.chosen || out.LocalChoice != "minesweeper" || !reflect.DeepEqual(ran, tt.ran) || len(out.Federated) != len(tt.ran) {
			t.Errorf("%s: chose %s (local %s) after trials %v (%d recorded), want %s after %v", tt.name, out.Chosen, out.LocalChoice, ran, len(out.Federated), tt.chosen, tt.ran)
		}
		for _, tr := range out.Federated {
			if tr.Score != tt.scores[tr.Name] || tr.Clients != 1 || tr.Messages != 3 || tr.Bytes != 100 || out.TrialRounds != len(tt.ran)*tr.Rounds {
				t.Errorf("%s: trial record %+v (rounds in all %d)", tt.name, tr, out.TrialRounds)
			}
		}
	}
}

// TestRunNodeFedGSPFederatedSelection runs a FedGSP job with the default
// selection on a small CSBM graph: two finalists run as real federated
// jobs on the embedded server, the job trains the best of them, and the
// summary records both stages.
func TestRunNodeFedGSPFederatedSelection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three jobs on an embedded server")
	}
	csbm := graph.DefaultCSBM()
	csbm.Nodes, csbm.Classes, csbm.Features, csbm.Homophily = 300, 3, 24, 0.2
	lo := deploy.DefaultLearnerOptions()
	lo.FedGSP.Preset = fedgsp.PresetSelect
	lo.FedGSP.Set = fedgsp.Overrides{Orders: ptrTo(2), Hidden: ptrTo(8), Layers: ptrTo(2), Principal: ptrTo(1)}
	seed := uint64(4)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := RunNode(ctx, NodeSpec{Sim: SimConfig{Algo: aggregator.AlgoFedGSP, Rounds: 2, Log: zerolog.Nop()}, Learner: &lo,
		FedGSPSelect: FedGSPSelect{Grid: []string{"cora", "heterophilic", "minesweeper"}, Epochs: 2, Finalists: 2, TrialRounds: 2},
		Data:         NodeData{Scenario: "csbm", CSBM: csbm, Clients: 3, Partition: "metis"}, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	sel, ok := res.Summary.Metrics["fedgsp_select"].(*FedGSPSelection)
	if !ok {
		t.Fatalf("metrics hold no selection: %v", res.Summary.Metrics["fedgsp_select"])
	}
	// Two finalists, then the better over the job's rounds and its two
	// slower decades (CSBM's Gaussian features are never normalised: no
	// raw trial).
	if len(sel.Federated) != 5 || sel.TrialRounds != 10 || sel.LocalChoice == "" || sel.RawMatters {
		t.Fatalf("selection %+v: want two federated trials of 2 rounds after a local pick, then three refinements", sel)
	}
	// Every candidate has the same orders and principal directions and
	// no raw variant: each client's descriptors are computed once for the
	// five trials and the job.
	if sel.DescriptorsComputed != 3 {
		t.Errorf("descriptors computed %d times, want once for each of the 3 clients", sel.DescriptorsComputed)
	}
	best := sel.Federated[0]
	epsilon := sel.EpsilonMax
	for _, tr := range sel.Federated {
		if tr.Clients != 3 || !(tr.Score > 0 && tr.Score <= 1) || tr.Messages == 0 || tr.Bytes == 0 {
			t.Errorf("trial %+v: want all 3 clients scored, and traffic", tr)
		}
		// Every trial releases descriptors and models through the gates:
		// its spending is measured, and the selection's bound adds it up.
		if !(tr.EpsilonClientMax > 0) || !(tr.EpsilonChannels["descriptor"] > 0) || !(tr.EpsilonChannels["model"] > 0) {
			t.Errorf("trial %s spent ε %v, channels %v: want the trial's ledger audited", tr.Name, tr.EpsilonClientMax, tr.EpsilonChannels)
		}
		epsilon += tr.EpsilonClientMax
		if tr.Refines == "" && tr.Score > best.Score {
			best = tr
		}
		if math.IsNaN(tr.LateScore) {
			t.Errorf("trial %s has no late score", tr.Name)
		}
	}
	// The finalists choose by their best rounds; the ladder runs the
	// choice and each slower decade, and keeps the best (the choice on a
	// tie).
	ladder := sel.Federated[2:]
	wantNames := []string{best.Name, best.Name + fedgsp.SlowSuffix, best.Name + "+slow2"}
	want := best.Name
	top := ladder[0].Score
	for i, r := range ladder {
		if r.Name != wantNames[i] || r.Refines != best.Name || r.Rounds != 2 {
			t.Errorf("refinement %d: %s (refining %s, %d rounds), want %s refining %s over the job's 2", i, r.Name, r.Refines, r.Rounds, wantNames[i], best.Name)
		}
		if r.Score > top {
			want, top = r.Name, r.Score
		}
	}
	if sel.EpsilonBound != epsilon {
		t.Errorf("selection's ε bound %v, want the scores' %v plus the trials' = %v", sel.EpsilonBound, sel.EpsilonMax, epsilon)
	}
	if sel.Federated[0].Name != sel.LocalChoice {
		t.Errorf("first finalist %s, want the local pick %s", sel.Federated[0].Name, sel.LocalChoice)
	}
	if sel.Chosen != want || res.Summary.Metrics["fedgsp_preset"] != want {
		t.Errorf("chose %s, job ran %v; want %s (best finalist %s; ladder %+v)", sel.Chosen, res.Summary.Metrics["fedgsp_preset"], want, best.Name, ladder)
	}
	if !strings.Contains(sel.String(), "federated trials") {
		t.Errorf("summary line %q does not tell the federated stage", sel.String())
	}
}

// TestFederatedTrialOfARawVariant: a finalist named with fedgsp.RawSuffix
// runs under a job id of the allowed alphabet (a "+" would be refused).
func TestFederatedTrialOfARawVariant(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three jobs on an embedded server")
	}
	csbm := graph.DefaultCSBM()
	csbm.Nodes, csbm.Classes, csbm.Features, csbm.Homophily = 200, 3, 16, 0.2
	lo := deploy.DefaultLearnerOptions()
	lo.FedGSP.Preset = fedgsp.PresetSelect
	lo.FedGSP.Set = fedgsp.Overrides{Orders: ptrTo(2), Hidden: ptrTo(8), Layers: ptrTo(2), Principal: ptrTo(1)}
	seed := uint64(5)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Variants alone stay in the grid (there is no row to fall back on).
	res, err := RunNode(ctx, NodeSpec{Sim: SimConfig{Algo: aggregator.AlgoFedGSP, Rounds: 1, Log: zerolog.Nop()}, Learner: &lo,
		FedGSPSelect: FedGSPSelect{Grid: []string{"cora+raw", "heterophilic+raw"}, Epochs: 1, Finalists: 2, TrialRounds: 1},
		Data:         NodeData{Scenario: "csbm", CSBM: csbm, Clients: 3, Partition: "metis"}, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	sel := res.Summary.Metrics["fedgsp_select"].(*FedGSPSelection)
	if len(sel.Federated) != 5 || !strings.Contains(sel.Chosen, fedgsp.RawSuffix) {
		t.Fatalf("selection %+v: want two trials of raw variants and three refinements", sel)
	}
}

// TestLateScores reads a trial's late scores from what the aggregator
// collected by the job's end: the last quarter of the rounds, oldest
// first, a round no client reported for left out, a round some did
// weighted over those.
func TestLateScores(t *testing.T) {
	sc := func(v, n float64) map[string]float64 { return map[string]float64{"val_score": v, "val_n": n} }
	per := map[uint64]map[string]map[string]float64{
		6:  {"a": sc(0.1, 1)},
		7:  {"a": sc(0.5, 1), "b": sc(0.8, 3)},
		8:  {"a": sc(math.NaN(), 1)},
		9:  {},
		10: {"b": sc(0.6, 2)},
		16: {"a": sc(0.9, 1)},
		21: {"a": sc(0.2, 1)},
		23: {"b": sc(0.4, 1)},
	}
	for _, c := range []struct {
		name   string
		rounds int
		want   []float64
	}{
		{"the last quarter, rounds without a finite score left out", 10, []float64{0.6}},
		{"a weighted round", 8, []float64{0.725}},
		{"one round at least", 3, nil},
		{"twenty rounds: 16 to 20", 20, []float64{0.9}},
		{"24 rounds: 19 to 24, oldest first, not reaching back to 16", 24, []float64{0.2, 0.4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := lateScores(per, c.rounds)
			if len(got) != len(c.want) {
				t.Fatalf("late scores %v, want %v", got, c.want)
			}
			for i := range got {
				if math.Abs(got[i]-c.want[i]) > 1e-12 {
					t.Fatalf("late scores %v, want %v", got, c.want)
				}
			}
		})
	}
}
