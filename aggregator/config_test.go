package aggregator

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	base := func(algo string) Config {
		return Config{Algo: algo, Rounds: 2, MinClients: 1, RoundTimeout: time.Second, LPSFed: LPSFedConfig{Phi: 4}}
	}
	tests := []struct {
		name string
		cfg  func() Config
		want string // "" : valid
	}{
		{"every algo", func() Config { return base(AlgoFedAvg) }, ""},
		{"lpsfed", func() Config { return base(AlgoLPSFed) }, ""},
		{"lpsfed-bpr strict", func() Config {
			c := base(AlgoLPSFedBPR)
			c.LPSFed.Strict, c.LPSFed.StrictStats = true, ReferenceStats{Users: 1, Items: 1, Edges: 1}
			return c
		}, ""},
		{"unknown algo", func() Config { return base("fedsage") }, "fedavg, local, cefedgnn, fedgnn-st, lpsfed-bpr, lpsfed, fedprox, fedper, fedgsp"},
		{"fedgsp defaults", func() Config { return base(AlgoFedGSP) }, ""},
		{"fedprox", func() Config { return base(AlgoFedProx) }, ""},
		{"fedper", func() Config { return base(AlgoFedPer) }, ""},
		{"fedgsp γ 0", func() Config {
			c := base(AlgoFedGSP)
			c.FedGSP = FedGSPConfig{Alpha: 1, Beta: 1, GraphRounds: 3}
			return c
		}, "γ"},
		{"fedgsp negative α", func() Config { c := base(AlgoFedGSP); c.FedGSP = DefaultFedGSPConfig(); c.FedGSP.Alpha = -1; return c }, "α"},
		{"fedgsp negative graph rounds", func() Config {
			c := base(AlgoFedGSP)
			c.FedGSP = DefaultFedGSPConfig()
			c.FedGSP.GraphRounds = -1
			return c
		}, "graph rounds"},
		{"fedgsp half a layout", func() Config { c := base(AlgoFedGSP); c.FedGSP = DefaultFedGSPConfig(); c.FedGSP.Orders = 3; return c }, "layout"},
		{"fedgsp with fedbuff", func() Config { c := base(AlgoFedGSP); c.Buffer = 2; return c }, "own update"},
		{"empty algo", func() Config { return base("") }, `unknown algo ""`},
		{"lpsfed without phi", func() Config { c := base(AlgoLPSFed); c.LPSFed.Phi = 0; return c }, "phi 0"},
		{"lpsfed huge phi", func() Config { c := base(AlgoLPSFed); c.LPSFed.Phi = MaxPhi + 1; return c }, "phi"},
		{"lpsfed strict without counts", func() Config { c := base(AlgoLPSFed); c.LPSFed.Strict = true; return c }, "strict"},
		{"lpsfed negative period", func() Config { c := base(AlgoLPSFed); c.LPSFed.RefEvery = -1; return c }, "period"},
		{"lpsfed with fedbuff", func() Config { c := base(AlgoLPSFed); c.Buffer = 2; return c }, "own update"},
		{"lpsfed folding late updates", func() Config {
			c := base(AlgoLPSFed)
			c.Staleness = Staleness{Policy: StaleConstant, Factor: 0.5}
			return c
		}, "own update"},
		{"negative freeze", func() Config { c := base(AlgoFedAvg); c.FreezeRounds = -1; return c }, "freeze"},
		{"negative missed-to-dead", func() Config { c := base(AlgoFedAvg); c.MissedToDead = -1; return c }, "missed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg().Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	for _, a := range Algos() {
		if _, err := NewMachine(base(a)); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
}
