package aggregator

import (
	"maps"
	"math"
	"strings"
	"testing"
)

// One of five banks sends its update scaled by 1000 every round: the
// robust rules stay near the honest banks' values, the mean does not.
func TestRobustAggregate(t *testing.T) {
	honest := [][]float32{{1, 2}, {1.2, 2.2}, {0.8, 1.8}, {1.1, 1.9}}
	cs := []Contribution{{Client: "e", Weight: 10, Params: []float32{1000, 2000}}}
	for i, p := range honest {
		cs = append(cs, Contribution{Client: string(rune('a' + i)), Weight: 10, Params: p})
	}
	tests := []struct {
		name string
		r    Robust
		want []float32 // nil: only bounded near the honest values
		far  bool      // the attacker moves the result far off
		// aside is what the rule sets aside per sender: the attacker "e"
		// both coordinates, "c" (the smallest) too; normclip percentages
		// of the norms.
		aside map[string]int
	}{
		{"mean", Robust{}, nil, true, nil},
		{"median", Robust{Rule: RobustMedian}, []float32{1.1, 2}, false, map[string]int{"c": 2, "e": 2}},
		{"trimmed by one", Robust{Rule: RobustTrimmed, Trim: 1}, []float32{(1 + 1.1 + 1.2) / 3, (1.9 + 2 + 2.2) / 3}, false,
			map[string]int{"c": 2, "e": 2}},
		{"trimmed by two", Robust{Rule: RobustTrimmed, Trim: 2}, []float32{1.1, 2}, false, map[string]int{"a": 1, "b": 2, "c": 2, "d": 1, "e": 2}},
		{"trimmed by more than the round holds: the median", Robust{Rule: RobustTrimmed, Trim: 3}, []float32{1.1, 2}, false,
			map[string]int{"c": 2, "e": 2}},
		// Norms: c 1.97, d 2.20, a 2.24 (the median), b 2.51 (11% off),
		// e 2236 (all but 0.1%).
		{"norm clipped", Robust{Rule: RobustNormClip}, nil, false, map[string]int{"b": 11, "e": 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, total, aside := tc.r.aggregate(cs, 2, func(c Contribution) []float32 { return c.Params })
			if total != 50 || len(got) != 2 {
				t.Fatalf("got %v of weight %v", got, total)
			}
			if !maps.Equal(aside, tc.aside) {
				t.Fatalf("set aside %v, want %v", aside, tc.aside)
			}
			if far := math.Abs(float64(got[0])-1) > 10; far != tc.far {
				t.Fatalf("got %v: far off %v, want %v", got, far, tc.far)
			}
			for i := range tc.want {
				if math.Abs(float64(got[i]-tc.want[i])) > 1e-6 {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
			if tc.r.Rule == RobustNormClip && l2(got) > l2([]float32{1.2, 2.2}) {
				t.Fatalf("norm-clipped mean %v above the round's median norm", got)
			}
		})
	}
}

// The rules do not depend on arrival order, ignore withheld updates and
// those without a vector of the job's length.
func TestRobustOrderAndAbsentees(t *testing.T) {
	cs := []Contribution{
		{Client: "b", Weight: 1, Params: []float32{3}}, {Client: "a", Weight: 1, Params: []float32{1}},
		{Client: "c", Weight: 1, Params: []float32{2}}, {Client: "w"}, {Client: "x", Weight: 1, Params: []float32{9, 9}},
	}
	for _, rule := range []string{RobustMedian, RobustNormClip} {
		r := Robust{Rule: rule}
		a, _, _ := r.aggregate(cs, 1, func(c Contribution) []float32 { return c.Params })
		rev := []Contribution{cs[4], cs[3], cs[2], cs[1], cs[0]}
		b, _, _ := r.aggregate(rev, 1, func(c Contribution) []float32 { return c.Params })
		if len(a) != 1 || math.Float32bits(a[0]) != math.Float32bits(b[0]) {
			t.Fatalf("%s: %v and %v", rule, a, b)
		}
		if none, total, _ := r.aggregate(nil, 1, func(c Contribution) []float32 { return c.Params }); none != nil || total != 0 {
			t.Fatalf("%s of nothing: %v", rule, none)
		}
	}
}

func TestRobustValidate(t *testing.T) {
	tests := []struct {
		name string
		algo string
		r    Robust
		err  string
	}{
		{"none", AlgoFedAvg, Robust{}, ""},
		{"median", AlgoFedAvg, Robust{Rule: RobustMedian}, ""},
		{"trimmed", AlgoCEFedGNN, Robust{Rule: RobustTrimmed, Trim: 1}, ""},
		{"normclip", AlgoFedProx, Robust{Rule: RobustNormClip}, ""},
		{"trimmed without trim", AlgoFedAvg, Robust{Rule: RobustTrimmed}, "trim"},
		{"trim for the median", AlgoFedAvg, Robust{Rule: RobustMedian, Trim: 1}, "trim"},
		{"unknown rule", AlgoFedAvg, Robust{Rule: "krum"}, "unknown rule"},
		{"a personalizing algorithm", AlgoLPSFed, Robust{Rule: RobustMedian}, "averaging"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.validate(tc.algo)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("validate: %v, want %q", err, tc.err)
			}
		})
	}
}

// A machine configured with a robust rule publishes its result and
// records what it set aside.
func TestMachineRobustRound(t *testing.T) {
	m := newTestMachine(t, Config{Robust: Robust{Rule: RobustMedian}, MinClients: 3})
	m.Step(join("a", 0))
	m.Step(join("b", 0))
	m.Step(join("c", 0))
	m.Step(upd("a", 1, 1, 0, 1, 1))
	m.Step(upd("b", 1, 1, 0, 2, 2))
	acts := m.Step(upd("c", 1, 1, 0, 900, 900))
	p, ok := find[PublishModel](acts)
	if !ok || p.Params[0] != 2 || p.Params[1] != 2 {
		t.Fatalf("round 1 gave %v", acts)
	}
	// The round's record says whose values the median left out.
	rc, ok := find[RoundClosed](acts)
	if want := map[string]int{"a": 2, "c": 2}; !ok || !maps.Equal(rc.SetAside, want) {
		t.Fatalf("round 1 closed with %v set aside, want %v", rc.SetAside, want)
	}
}
