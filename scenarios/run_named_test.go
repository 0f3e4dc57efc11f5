package scenarios

import (
	"context"
	"strings"
	"testing"
)

// TestRunNamed runs fake scenarios that report the options they were
// given: the seed rules of RunRequest, the timing, the counts.
func TestRunNamed(t *testing.T) {
	reg := NewRegistry()
	seen := map[string]ScenarioOptions{}
	for _, s := range []struct {
		name  string
		seeds int
		pass  bool
	}{{"sweep", 50, true}, {"once", 0, true}, {"broken", 0, false}} {
		err := reg.Register(Scenario{Name: s.name, DefaultSeeds: s.seeds, Run: func(_ context.Context, o ScenarioOptions) (Outcome, error) {
			seen[s.name] = o
			out := Outcome{Seeds: o.Seeds}
			if !s.pass {
				out.FailedInvariant, out.Repro = "inv", "graphfed scenario run broken"
			}
			return out, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	u, n := func(v uint64) *uint64 { return &v }, func(v int) *int { return &v }
	tests := []struct {
		name             string
		req              RunRequest
		seed             uint64
		seeds, ran, fail int
		wantErr          string
	}{
		{"unset: the default seeds from the first seed", RunRequest{Name: "sweep"}, DefaultFirstSeed, 50, 1, 0, ""},
		{"a seed alone reruns that seed", RunRequest{Name: "sweep", Seed: u(17)}, 17, 1, 1, 0, ""},
		{"a seed and a count sweep from it", RunRequest{Name: "sweep", Seed: u(17), Seeds: n(5)}, 17, 5, 1, 0, ""},
		{"a count of 0 is the default", RunRequest{Name: "sweep", Seed: u(17), Seeds: n(0)}, 17, 50, 1, 0, ""},
		{"all, one failing", RunRequest{Name: "all"}, DefaultFirstSeed, 50, 3, 1, ""},
		{"an unknown name", RunRequest{Name: "meteor"}, 0, 0, 0, 0, "no scenario"},
		{"a negative count", RunRequest{Name: "sweep", Seeds: n(-1)}, 0, 0, 0, 0, "--seeds -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clear(seen)
			var heard []string
			tc.req.OnOutcome = func(o Outcome) { heard = append(heard, o.Name) }
			rep, err := RunNamed(context.Background(), reg, tc.req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Outcomes) != tc.ran || rep.Failed != tc.fail || len(heard) != tc.ran {
				t.Fatalf("ran %d (heard %v), failed %d; want %d, %d", len(rep.Outcomes), heard, rep.Failed, tc.ran, tc.fail)
			}
			first := rep.Outcomes[0]
			if o := seen[first.Name]; o.Seed != tc.seed || rep.Seed != tc.seed || o.Seeds != tc.seeds || o.Workers != 1 {
				t.Fatalf("%s ran with %+v, want seed %d, %d seeds, 1 worker", first.Name, o, tc.seed, tc.seeds)
			}
			if first.Metrics["seeds_per_second"] <= 0 {
				t.Fatalf("no seeds/s: %+v", first)
			}
			if m := rep.Metrics(); m["scenarios"] != tc.ran || m["failed"] != tc.fail || m["passed"] != tc.ran-tc.fail {
				t.Fatalf("metrics %v", m)
			}
		})
	}
}

func TestWriteOutcome(t *testing.T) {
	tests := []struct {
		out  Outcome
		want string
	}{
		{Outcome{Name: "drop", Pass: true, Seconds: 1.5, Seeds: 20, Metrics: map[string]float64{"seeds_per_second": 13.3}},
			"PASS drop (1.50s, 20 seeds, 13 seeds/s)\n"},
		{Outcome{Name: "flood", Seconds: 2, FailedInvariant: "inv", Detail: "why", Repro: "graphfed scenario run flood"},
			"FAIL flood (2.00s)\n    inv: why\n    reproduce: graphfed scenario run flood\n"},
	}
	for _, tc := range tests {
		var b strings.Builder
		if err := WriteOutcome(&b, tc.out); err != nil || b.String() != tc.want {
			t.Errorf("WriteOutcome = %q, %v; want %q", b.String(), err, tc.want)
		}
	}
	var b strings.Builder
	if err := WriteListing(&b, []Outcome{{Name: "dsim", Seeds: 1000, Detail: "the simulator"}, {Name: "flood", Detail: "a flood"}}); err != nil {
		t.Fatal(err)
	}
	if want := "dsim              1000 seeds the simulator\nflood             runs once  a flood\n"; b.String() != want {
		t.Errorf("WriteListing = %q, want %q", b.String(), want)
	}
}
