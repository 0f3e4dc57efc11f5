package job

import (
	"slices"
	"testing"

	"graphfed/aml/amllearner"
	"graphfed/aml/amlworld"
	"graphfed/aml/edgegnn"
	"graphfed/deploy"
)

// TestTrainAMLConfig checks the configuration a spec builds: by default
// the federated banks' learner (deploy.DefaultAMLConfig) and recipe, the
// uniform weighted recipe with every row an epoch when asked for.
func TestTrainAMLConfig(t *testing.T) {
	bank := deploy.DefaultAMLConfig()
	steps := func(n int) *int { return &n }
	for _, tc := range []struct {
		name  string
		frac  float64
		steps *int
		want  float64
		wantN int
	}{
		{"defaults", DefaultTrainAMLSpec().PosFraction, nil, amllearner.DefaultPosFraction, DefaultAMLTrainStepsPerEpoch},
		{"zero share is the default", 0, nil, edgegnn.DefaultPosFraction, DefaultAMLTrainStepsPerEpoch},
		{"another share", 0.2, steps(100), 0.2, 100},
		{"uniform", -1, nil, 0, 0},
		{"uniform, capped", -1, steps(50), 0, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultTrainAMLSpec()
			s.PosFraction, s.StepsPerEpoch = tc.frac, tc.steps
			c, err := s.trainConfig()
			if err != nil {
				t.Fatal(err)
			}
			if c.PosFraction != tc.want || c.StepsPerEpoch != tc.wantN {
				t.Errorf("pos fraction %v, %d steps per epoch; want %v, %d", c.PosFraction, c.StepsPerEpoch, tc.want, tc.wantN)
			}
			if c.Model.Kind != bank.Kind || c.Model.Hidden != bank.Hidden || c.LR != bank.LR || c.BatchSize != bank.BatchSize ||
				!slices.Equal(c.FanOut, bank.FanOut) || c.Epochs != DefaultAMLTrainEpochs {
				t.Errorf("%s h%d lr %v batch %d fan-out %v, %d epochs; the banks' learner: %+v", c.Model.Kind, c.Model.Hidden, c.LR, c.BatchSize, c.FanOut, c.Epochs, bank)
			}
		})
	}
}

// TestTrainAMLConfigParams checks that set shared parameters override the
// AML defaults and unset ones keep them, zero dropout included.
func TestTrainAMLConfigParams(t *testing.T) {
	zero, wd := 0.0, 1e-4
	for _, tc := range []struct {
		name   string
		params TrainParams
		want   TrainHyper
	}{
		{"unset", TrainParams{}, AMLTrainHyper()},
		{"set", TrainParams{Epochs: 3, Hidden: 8, LR: 0.1, Dropout: &zero, WeightDecay: &wd},
			TrainHyper{Epochs: 3, Hidden: 8, LR: 0.1, Dropout: 0, WeightDecay: 1e-4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultTrainAMLSpec()
			s.Params = tc.params
			c, err := s.trainConfig()
			if err != nil {
				t.Fatal(err)
			}
			got := TrainHyper{Epochs: c.Epochs, Hidden: c.Model.Hidden, LR: c.LR, Dropout: c.Model.Dropout, WeightDecay: c.WeightDecay}
			if got != tc.want {
				t.Errorf("%+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestTrainAMLConfigRefused checks the specs refused before any file is
// read.
func TestTrainAMLConfigRefused(t *testing.T) {
	zero := 0
	for _, tc := range []struct {
		name string
		edit func(*TrainAMLSpec)
	}{
		{"kind", func(s *TrainAMLSpec) { s.Kind = "pna" }},
		{"fan-out per layer", func(s *TrainAMLSpec) { s.FanOut = []int{5} }},
		{"share of one", func(s *TrainAMLSpec) { s.PosFraction = 1 }},
		{"no stratified steps", func(s *TrainAMLSpec) { s.StepsPerEpoch = &zero }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultTrainAMLSpec()
			tc.edit(&s)
			if _, err := s.trainConfig(); err == nil {
				t.Errorf("%+v accepted", s)
			}
		})
	}
}

// TestAMLMatchTypologies matches pattern rows to transactions by accounts,
// time and amount, and tallies recall per typology.
func TestAMLMatchTypologies(t *testing.T) {
	w := amlworld.NewGraph("m")
	rows := []amlworld.TxRow{
		{Time: 60, FromBank: "1", FromAccount: "A", ToBank: "2", ToAccount: "B", AmountPaid: 5, Laundering: true},
		{Time: 60, FromBank: "1", FromAccount: "A", ToBank: "2", ToAccount: "B", AmountPaid: 6},
		{Time: 120, FromBank: "2", FromAccount: "B", ToBank: "1", ToAccount: "C", AmountPaid: 5, Laundering: true},
		{Time: 180, FromBank: "1", FromAccount: "C", ToBank: "1", ToAccount: "A", AmountPaid: 1, Laundering: true},
	}
	for i := range rows {
		w.AddRow(&rows[i])
	}
	attempts := []amlworld.Attempt{
		{Type: amlworld.Cycle, Rows: []amlworld.TxRow{rows[0], rows[2]}},
		{Type: amlworld.FanOut, Rows: []amlworld.TxRow{{Time: 60, FromBank: "9", FromAccount: "Z", ToBank: "1", ToAccount: "A", AmountPaid: 5}}},
	}
	typ, matched := amlworld.MatchTypologies(w, attempts)
	if want := []int8{int8(amlworld.Cycle), -1, int8(amlworld.Cycle), -1}; matched != 2 || !slices.Equal(typ, want) {
		t.Fatalf("typologies %v, matched %d", typ, matched)
	}
	rec := typologyRecall(w, typ, []int32{0, 1, 2, 3}, []float32{1, 5, -1, 0.5}, 0.8)
	cyc := rec["cycle"].(map[string]any) // sim's key for CYCLE
	if cyc["rows"] != 2 || cyc["recall"] != 0.5 || cyc["recall_tuned"] != 0.5 {
		t.Errorf("cycle %v", cyc)
	}
	un := rec["unlisted"].(map[string]any)
	if un["rows"] != 1 || un["recall"] != 1.0 || un["recall_tuned"] != 0.0 {
		t.Errorf("unlisted %v", un)
	}
	if len(rec) != 2 {
		t.Errorf("recall %v", rec)
	}
}
