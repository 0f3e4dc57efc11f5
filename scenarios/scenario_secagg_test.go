package scenarios

import (
	"testing"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/privacy"
	"graphfed/secagg"
)

// Each secure-aggregation scenario passes on a keys-configured embedded
// server.
func TestScenarioSecAgg(t *testing.T) {
	if testing.Short() {
		t.Skip("starts embedded NATS servers")
	}
	for _, name := range []string{"secagg-dropout", "secagg-curious-aggregator", "secagg-forged-key", "secagg-late"} {
		t.Run(name, func(t *testing.T) {
			if out := runNamed(t, name, ScenarioOptions{Seed: 1}); !out.Pass {
				t.Fatalf("%+v", out)
			}
		})
	}
}

func secClose(round uint64, surv, drop []string, weight float64) aggregator.RoundClosed {
	return aggregator.RoundClosed{Round: round, Aggregate: true, Weight: weight,
		SecAgg: &aggregator.SecureClose{Cohort: secBanks, Threshold: 3, Survivors: surv, Dropouts: drop}}
}

func ids(is ...int) []string {
	var out []string
	for _, i := range is {
		out = append(out, deploy.ClientID(i))
	}
	return out
}

// The dropout judge fails every way the round could go wrong.
func TestScenarioSecAggDropoutJudge(t *testing.T) {
	good := func() dropoutRun {
		r := dropoutRun{struckAfter: true, struckBefore: true, want: []float64{0.5, -1}, got: []float32{0.5, -1}, bound: 1e-6, weight: 192}
		for i := range dropRounds {
			r.closes = append(r.closes, secClose(uint64(i+1), ids(0, 1, 2, 3, 4), nil, 240))
		}
		r.closes[dropRound-1] = secClose(dropRound, ids(0, 1, 3, 4), ids(2), 192)
		return r
	}
	tests := []struct {
		name   string
		change func(*dropoutRun)
		inv    string
	}{
		{"as it should be", func(*dropoutRun) {}, ""},
		{"nobody died", func(r *dropoutRun) { r.struckBefore = false }, InvNotExercised},
		{"a round short", func(r *dropoutRun) { r.closes = r.closes[:3] }, InvNoProgress},
		{"the round failed", func(r *dropoutRun) { r.closes[dropRound-1].SecAgg.Failure = "below threshold" }, InvSecAggDropout},
		{"the dropout counted as survivor", func(r *dropoutRun) {
			r.closes[dropRound-1].SecAgg.Survivors, r.closes[dropRound-1].SecAgg.Dropouts = ids(0, 1, 2, 3, 4), nil
		}, InvSecAggDropout},
		{"the dead survivor left out", func(r *dropoutRun) { r.closes[dropRound-1].SecAgg.Survivors = ids(0, 3, 4) }, InvSecAggDropout},
		{"the wrong weight", func(r *dropoutRun) { r.closes[dropRound-1].Weight = 240 }, InvSecAggSum},
		{"a model off the mean", func(r *dropoutRun) { r.got[1] = -1.001 }, InvSecAggSum},
		{"no model to compare", func(r *dropoutRun) { r.got = nil }, InvSecAggSum},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := good()
			tc.change(&r)
			if out := judgeSecAggDropout("x", r); out.FailedInvariant != tc.inv {
				t.Fatalf("invariant %q (%s), want %q", out.FailedInvariant, out.Detail, tc.inv)
			}
		})
	}
}

// The curious-aggregator judge fails when a bank does not refuse or the
// aggregator holds both kinds of share of the victim.
func TestScenarioSecAggCuriousJudge(t *testing.T) {
	good := func() curiousRun {
		r := curiousRun{forged: 2, t: 3, selfFrom: ids(0), maskFrom: ids(1, 2, 3, 4), refused: map[string]int{}}
		for i := range secBanks {
			r.refused[deploy.ClientID(i)] = 2
		}
		for i := range curiousRounds {
			r.closes = append(r.closes, secClose(uint64(i+1), ids(0, 1, 2, 3, 4), nil, 240))
		}
		r.closes[curiousRound-1].SecAgg.Failure = "reveals missing"
		return r
	}
	tests := []struct {
		name   string
		change func(*curiousRun)
		inv    string
	}{
		{"as it should be", func(*curiousRun) {}, ""},
		{"no forged list", func(r *curiousRun) { r.forged = 1 }, InvNotExercised},
		{"a bank that refused nothing", func(r *curiousRun) { r.refused[deploy.ClientID(3)] = 0 }, InvSecAggNotRefused},
		{"t of both kinds", func(r *curiousRun) { r.selfFrom = ids(0, 1, 2) }, InvSecAggUnmasked},
		{"no bank answered the forged list", func(r *curiousRun) { r.maskFrom = nil }, InvNotExercised},
		{"another round failed", func(r *curiousRun) { r.closes[0].SecAgg.Failure = "x" }, InvNoProgress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := good()
			tc.change(&r)
			if out := judgeSecAggCurious("x", r); out.FailedInvariant != tc.inv {
				t.Fatalf("invariant %q (%s), want %q", out.FailedInvariant, out.Detail, tc.inv)
			}
		})
	}
}

// The forged-key judge fails when a forgery goes uncounted or reaches the
// keys.
func TestScenarioSecAggForgedJudge(t *testing.T) {
	by := deploy.ClientID(forgedBy)
	good := func() forgedRun {
		r := forgedRun{sent: 4, permissions: 1, rejects: map[string]uint64{bus.ReasonSubject: 1},
			refused: map[string]map[string]int{by: {"adv": 2}}, keys: make([]secagg.SignedAdvertisement, secBanks)}
		for i := range forgedRounds {
			r.closes = append(r.closes, secClose(uint64(i+1), ids(0, 1, 2, 3, 4), nil, 240))
		}
		return r
	}
	tests := []struct {
		name   string
		change func(*forgedRun)
		inv    string
	}{
		{"as it should be", func(*forgedRun) {}, ""},
		{"a forgery unsent", func(r *forgedRun) { r.sent = 3 }, InvNotExercised},
		{"the server allowed the victim's subject", func(r *forgedRun) { r.permissions = 0 }, InvNotRejected},
		{"the validator took another party's advertisement", func(r *forgedRun) { r.rejects = nil }, InvNotRejected},
		{"a bad signature accepted", func(r *forgedRun) { r.refused[by]["adv"] = 1 }, InvSecAggNotRefused},
		{"an honest bank's advertisement refused", func(r *forgedRun) { r.refused[deploy.ClientID(0)] = map[string]int{"adv": 1} }, InvSecAggForgedKey},
		{"a forged key in the keys", func(r *forgedRun) { r.forgedInKey = ids(0) }, InvSecAggForgedKey},
		{"a key that does not verify", func(r *forgedRun) { r.badKeys = ids(1) }, InvSecAggForgedKey},
		{"a bank missing from a sum", func(r *forgedRun) { r.closes[1].SecAgg.Survivors = ids(0, 2, 3, 4) }, InvNoProgress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := good()
			tc.change(&r)
			if out := judgeSecAggForged("x", r); out.FailedInvariant != tc.inv {
				t.Fatalf("invariant %q (%s), want %q", out.FailedInvariant, out.Detail, tc.inv)
			}
		})
	}
}

// The late judge fails when the late input counts in its round, is not
// refused, or is not folded into the next.
func TestScenarioSecAggLateJudge(t *testing.T) {
	good := func() lateRun {
		r := lateRun{held: true, refusedLate: 1, weights: []float64{48, 48, 48, 48, 48}, factor: 0.5,
			records: map[uint64]*privacy.SecAggRecord{lateRound: {}, lateRound + 1: {Stale: []uint64{lateRound}}}}
		r.closes = []aggregator.RoundClosed{secClose(1, ids(0, 1, 2, 3, 4), nil, 240), secClose(2, ids(0, 1, 2, 3), ids(4), 192),
			secClose(3, ids(0, 1, 2, 3, 4), nil, 264)}
		return r
	}
	tests := []struct {
		name   string
		change func(*lateRun)
		inv    string
	}{
		{"as it should be", func(*lateRun) {}, ""},
		{"never held", func(r *lateRun) { r.held = false }, InvNotExercised},
		{"not refused as late", func(r *lateRun) { r.refusedLate = 0 }, InvSecAggLate},
		{"counted in its round", func(r *lateRun) {
			r.closes[1].SecAgg.Survivors, r.closes[1].SecAgg.Dropouts = ids(0, 1, 2, 3, 4), nil
		}, InvSecAggLate},
		{"not folded", func(r *lateRun) { r.closes[2].Weight = 240 }, InvSecAggLate},
		{"folded at full weight", func(r *lateRun) { r.closes[2].Weight = 288 }, InvSecAggLate},
		{"the ledger does not say", func(r *lateRun) { r.records[lateRound+1] = &privacy.SecAggRecord{} }, InvSecAggLate},
		{"a round failed", func(r *lateRun) { r.closes[2].SecAgg.Failure = "x" }, InvNoProgress},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := good()
			tc.change(&r)
			if out := judgeSecAggLate("x", r); out.FailedInvariant != tc.inv {
				t.Fatalf("invariant %q (%s), want %q", out.FailedInvariant, out.Detail, tc.inv)
			}
		})
	}
}
