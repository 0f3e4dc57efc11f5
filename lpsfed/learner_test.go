package lpsfed

import (
	"testing"

	"graphfed/learner"
)

func newTestLearner(t *testing.T, loss string, strict bool) *Learner {
	t.Helper()
	d := blockData(40, 24, 2, 1)
	p, lam := denseEigen(t, d, 6)
	cfg := DefaultConfig()
	cfg.Loss, cfg.Dim, cfg.BatchSize, cfg.Seed = loss, 8, 64, 1
	m, err := NewModel(d, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Kernel(lam)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLearner(LearnerConfig{Strict: strict}, m, k)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// What a round releases besides the MLPs, per algorithm: ρ_c only when
// the reference kernel's version changed since the last ρ_c that went
// out, M^c every round under lpsfed, nothing under FedAvg.
func TestLearnerScalars(t *testing.T) {
	tests := []struct {
		algo       string
		rhoRounds  []uint64 // rounds that release ρ_c
		wantMargin bool
	}{
		{AlgoFedAvg, nil, false},
		{AlgoLPSFedBPR, []uint64{1, 3}, false},
		{AlgoLPSFed, []uint64{1, 3}, true},
	}
	for _, tc := range tests {
		t.Run(tc.algo, func(t *testing.T) {
			l := newTestLearner(t, LossFor(tc.algo), false)
			if err := l.SetAlgo(tc.algo); err != nil {
				t.Fatal(err)
			}
			ref := make([]float64, len(l.kernel))
			for i := range ref {
				ref[i] = 1 / float64(len(ref))
			}
			// Version 1 in rounds 1–2 (round 2 repeats it), version 2 from round 3.
			version := map[uint64]uint64{1: 1, 2: 1, 3: 2, 4: 2}
			for r := uint64(1); r <= 4; r++ {
				l.SetReference(version[r], ref)
				l.Train(1)
				var rho, margin int
				for _, s := range l.Scalars(r) {
					switch s.Kind {
					case learner.ScalarRho:
						rho++
						if s.Version != version[r] || s.Clip != DefaultRhoClip || !(s.Value >= 0) {
							t.Fatalf("round %d: ρ %+v", r, s)
						}
					case learner.ScalarMargin:
						margin++
						if s.Clip != DefaultMarginClip {
							t.Fatalf("round %d: margin %+v", r, s)
						}
					}
					l.ScalarReleased(s)
				}
				wantRho := 0
				for _, x := range tc.rhoRounds {
					if x == r {
						wantRho = 1
					}
				}
				if rho != wantRho || (margin == 1) != tc.wantMargin || margin > 1 {
					t.Fatalf("round %d: %d ρ and %d margins", r, rho, margin)
				}
			}
		})
	}
}

// A ρ_c the gate refused (not confirmed) is offered again next round.
func TestLearnerRhoRetriedUntilReleased(t *testing.T) {
	l := newTestLearner(t, LossBPR, false)
	if err := l.SetAlgo(AlgoLPSFedBPR); err != nil {
		t.Fatal(err)
	}
	ref := make([]float64, len(l.kernel))
	for i := range ref {
		ref[i] = 1 / float64(len(ref))
	}
	l.SetReference(1, ref)
	if len(l.Scalars(1)) != 1 || len(l.Scalars(2)) != 1 {
		t.Fatal("an unconfirmed ρ_c was not offered again")
	}
}

func TestLearnerJoinAndHello(t *testing.T) {
	l := newTestLearner(t, LossBPR, false)
	if err := l.SetAlgo(AlgoLPSFed); err == nil {
		t.Fatal("a BPR model accepted the lpsfed algorithm (BC loss)")
	}
	if u, i, e := l.HelloCounts(); u != 40 || i != 24 || e != l.TrainSize() || e == 0 {
		t.Fatalf("hello counts %d %d %d", u, i, e)
	}
	if u, i, e := newTestLearner(t, LossBPR, true).HelloCounts(); u+i+e != 0 {
		t.Fatalf("strict learner announced counts %d %d %d", u, i, e)
	}
	p := l.Params()
	if len(p) != l.NumParams() || l.SetParams(p[:1]) == nil {
		t.Fatal("shared parameters of the wrong length accepted")
	}
}
