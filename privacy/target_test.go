package privacy

import (
	"context"
	"errors"
	"math"
	"testing"
)

// SigmaForEpsilon inverts the accountants: on every row of CE-FedGNN
// Table 6 the σ0 that spends the row's ε (exact_eps under the exact
// accountant, rdp_eps under RDP) over its 200 releases at its ρ is the
// row's σ0, up to the 6 printed decimals of ε.
func TestSigmaForEpsilonTable6(t *testing.T) {
	for _, r := range readTable6(t, localTable6) {
		for _, tc := range []struct {
			kind AccountantKind
			eps  float64
		}{{Exact, r.exact}, {RDP, r.rdp}} {
			s, err := SigmaForEpsilon(tc.eps, r.delta, r.rho, r.releases, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			// dσ/σ ≈ dε/ε over the ε slope; 1e-6 absolute in ε is well
			// under 1e-5 relative in σ on every row.
			if math.Abs(s-r.sigma) > 1e-5*r.sigma {
				t.Errorf("%s q=%v ρ=%v ε=%v: σ=%.9f, want %v", tc.kind, r.percentile, r.rho, tc.eps, s, r.sigma)
			}
		}
	}
}

// Round trips through `graphfed privacy epsilon`'s arithmetic: the ε of
// the returned σ is at most the target and within 1e-6 of it, and a σ
// 1e-4 smaller overspends.
func TestSigmaForEpsilonRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		eps, delta, rho float64
		releases        int
	}{
		{8, 1e-4, 0.5, 12}, {8, 1e-4, 0.7, 3}, {1, 1e-5, 0.1466, 200}, {0.1, 1e-4, 2, 1},
		{50, 1e-4, 0.3, 1000}, {8, 1e-4, 1e-3, 1},
	} {
		for _, kind := range []AccountantKind{Exact, RDP} {
			s, err := SigmaForEpsilon(tc.eps, tc.delta, tc.rho, tc.releases, kind)
			if err != nil {
				t.Fatal(err)
			}
			eps := func(sigma float64) float64 {
				return kind.Epsilon(float64(tc.releases)*tc.rho*tc.rho/(sigma*sigma), tc.delta)
			}
			if got := eps(s); got > tc.eps || got < tc.eps*(1-1e-6) {
				t.Errorf("%s %+v: σ=%v spends ε=%.9g, want ≤ %v and within 1e-6", kind, tc, s, got, tc.eps)
			}
			if got := eps(s * (1 - 1e-4)); got <= tc.eps {
				t.Errorf("%s %+v: σ·(1−1e-4) still within the target (ε=%v): σ is not the smallest", kind, tc, got)
			}
		}
	}
}

func TestSigmaForEpsilonRejects(t *testing.T) {
	for _, tc := range []struct {
		eps, delta, rho float64
		releases        int
		kind            AccountantKind
	}{
		{0, 1e-4, 0.5, 1, Exact}, {-1, 1e-4, 0.5, 1, Exact}, {math.Inf(1), 1e-4, 0.5, 1, Exact}, {math.NaN(), 1e-4, 0.5, 1, Exact},
		{8, 0, 0.5, 1, Exact}, {8, 1, 0.5, 1, Exact}, {8, 1e-4, 0, 1, Exact}, {8, 1e-4, 0.5, 0, Exact}, {8, 1e-4, 0.5, 1, 0},
	} {
		if _, err := SigmaForEpsilon(tc.eps, tc.delta, tc.rho, tc.releases, tc.kind); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: error %v, want ErrInvalid", tc, err)
		}
	}
}

func TestPlannedReleases(t *testing.T) {
	for _, tc := range []struct{ rounds, every, want int }{
		{12, 1, 12}, {12, 0, 12}, {12, 4, 3}, {12, 5, 3}, {13, 4, 4}, {1, 4, 1}, {0, 1, 0},
	} {
		if got := PlannedReleases(tc.rounds, tc.every); got != tc.want {
			t.Errorf("PlannedReleases(%d, %d) = %d, want %d", tc.rounds, tc.every, got, tc.want)
		}
	}
}

// A planned node budget held at the measured 90th percentile: NodeSigma
// spends the target evenly at constant ρ, the gate refuses the release
// that would overspend after ρ grew, NodeSigma then refuses too, and a
// gate rebuilt from the ledger holds the same ρ and spending.
func TestGateNodeTargetHeldAtMeasuredRho(t *testing.T) {
	ctx := context.Background()
	const target, delta = 8.0, 1e-4
	l := NewMemLedger()
	cfg := Config{Job: "job-1", Client: "bank-3", Delta: delta, Accountant: Exact,
		Budget: Budget{NodeEpsilon: target, NodeRho: 2, NodeQ: 90, NodeReleases: 4}}
	g := newTestGate(t, cfg, l)
	calib := func(g *Gate, round uint64, rho90 float64) {
		t.Helper()
		if _, err := g.RecordCalibration(ctx, round, Calibration{K: 1, N: 2, Q: []float64{50, 90}, Rho: []float64{rho90 / 2, rho90}}); err != nil {
			t.Fatal(err)
		}
	}
	release := func(g *Gate, round uint64, sigma float64) error {
		_, err := g.Release(ctx, Request{Channel: ChannelEmb, Round: round, Rows: [][]float32{{1, 0}, {0, 1}}, NodeIDs: []int64{1, 2}, Sigma: sigma})
		return err
	}
	// Before any calibration the cap is held at the worst case ρ = 2.
	s0, ok, err := g.NodeSigma()
	want2, _ := SigmaForEpsilon(target, delta, 2, 4, Exact)
	if err != nil || !ok || math.Abs(s0-want2) > 1e-6*want2 {
		t.Fatalf("NodeSigma before calibration = %v, %v, %v; want %v (ρ = 2)", s0, ok, err, want2)
	}
	want, _ := SigmaForEpsilon(target, delta, 0.5, 4, Exact)
	for r := uint64(1); r <= 2; r++ {
		calib(g, r, 0.5)
		s, _, err := g.NodeSigma()
		if err != nil || math.Abs(s-want) > 1e-6*want {
			t.Fatalf("round %d: NodeSigma = %v, %v; want %v", r, s, err, want)
		}
		if err := release(g, r, s); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
	}
	// ρ doubles: the two releases made already spend the whole target at
	// ρ = 1 (2/σ² · 1 = 4/σ² · 0.25 · 2 > the cap); any further release is
	// refused, and NodeSigma says so.
	calib(g, 3, 1)
	if err := release(g, 3, want); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("release after ρ doubled: %v, want ErrBudgetExceeded", err)
	}
	if _, _, err := g.NodeSigma(); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("NodeSigma after ρ doubled: %v, want ErrBudgetExceeded", err)
	}
	// A moderate growth instead: ρ 0.5 → 0.6 after two releases; NodeSigma
	// spreads what is left over the two planned releases, both fit, the
	// worst node ends exactly at the target at ρ = 0.6, and a fifth
	// (unplanned) release is refused.
	l2 := NewMemLedger()
	g2 := newTestGate(t, cfg, l2)
	for r, rho := range []float64{0.5, 0.5, 0.6, 0.6} {
		calib(g2, uint64(r+1), rho)
		s, _, err := g2.NodeSigma()
		if err != nil {
			t.Fatalf("release %d: %v", r+1, err)
		}
		if err := release(g2, uint64(r+1), s); err != nil {
			t.Fatalf("release %d at σ=%v: %v", r+1, s, err)
		}
	}
	sp := g2.Spent(0.6)
	if sp.WorstNode > target || sp.WorstNode < target*(1-1e-6) || sp.WorstNodeReleases != 4 {
		t.Fatalf("after the planned releases: ε=%v over %d releases at ρ=0.6, want the target %v over 4", sp.WorstNode, sp.WorstNodeReleases, target)
	}
	if _, _, err := g2.NodeSigma(); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("NodeSigma beyond the planned releases: %v, want ErrBudgetExceeded", err)
	}
	// Restart: the rebuilt gate replays ρ = 1 and the spending of g.
	g3 := newTestGate(t, cfg, l)
	if b := g3.NodeBudget(); b.NodeRho != 1 {
		t.Fatalf("rebuilt gate holds ρ=%v, want the last calibration's 1", b.NodeRho)
	}
	if err := release(g3, 4, want); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("rebuilt gate released: %v", err)
	}
}
