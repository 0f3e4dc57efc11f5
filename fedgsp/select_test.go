package fedgsp

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"graphfed/graph"
)

func TestPick(t *testing.T) {
	grid := []string{"a", "b", "c"}
	nan, inf := math.NaN(), math.Inf(1)
	for _, tt := range []struct {
		name    string
		reports []ClientScores
		want    string
		refused int
		fails   bool
		// score of each candidate in grid order (NaN: none accepted)
		scores []float64
	}{
		{
			name: "weighted by validation counts",
			// Unweighted, b wins (0.7 vs 0.65); weighted by 30 vs 10
			// validation nodes, a does (0.75 vs 0.6).
			reports: []ClientScores{
				{Client: "c0", ValN: 30, Scores: map[string]float64{"a": 0.8, "b": 0.6, "c": 0.1}},
				{Client: "c1", ValN: 10, Scores: map[string]float64{"a": 0.6, "b": 0.6 + 0.2, "c": 0.1}},
			},
			want: "a", scores: []float64{0.75, 0.65, 0.1},
		},
		{
			name: "ties go to the earlier candidate of the grid",
			reports: []ClientScores{
				{Client: "c0", ValN: 5, Scores: map[string]float64{"c": 0.5, "b": 0.5, "a": 0.25}},
			},
			want: "b", scores: []float64{0.25, 0.5, 0.5},
		},
		{
			name: "a candidate missing from a client is the mean of the others",
			reports: []ClientScores{
				{Client: "c0", ValN: 10, Scores: map[string]float64{"a": 0.5, "b": 0.9}},
				{Client: "c1", ValN: 10, Scores: map[string]float64{"a": 0.5}, Missing: map[string]string{"b": "ROC-AUC over one class"}},
			},
			want: "b", refused: 1, scores: []float64{0.5, 0.9, nan},
		},
		{
			name: "below half the validation weight a candidate is not eligible",
			reports: []ClientScores{
				{Client: "c0", ValN: 10, Scores: map[string]float64{"a": 0.5, "b": 0.99}},
				{Client: "c1", ValN: 30, Scores: map[string]float64{"a": 0.5}},
			},
			want: "a", scores: []float64{0.5, 0.99, nan},
		},
		{
			name: "NaN, infinite, out-of-range and unknown scores are refused and counted",
			reports: []ClientScores{
				{Client: "c0", ValN: 10, Scores: map[string]float64{"a": nan, "b": 0.4, "c": inf, "z": 0.9}},
				{Client: "c1", ValN: 10, Scores: map[string]float64{"a": 7, "b": 0.6, "c": -inf}},
			},
			want: "b", refused: 5, scores: []float64{nan, 0.5, nan},
		},
		{
			name: "a client without validation nodes is refused whole",
			reports: []ClientScores{
				{Client: "c0", ValN: 0, Scores: map[string]float64{"a": 0.9}},
				{Client: "c1", ValN: 4, Scores: map[string]float64{"a": 0.2, "b": 0.3}},
			},
			want: "b", refused: 1, scores: []float64{0.2, 0.3, nan},
		},
		{
			name:    "nothing scored is an error",
			reports: []ClientScores{{Client: "c0", ValN: 3, Scores: map[string]float64{"a": nan}}},
			refused: 1, fails: true, scores: []float64{nan, nan, nan},
		},
		{name: "no reports", fails: true, scores: []float64{nan, nan, nan}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Pick(grid, tt.reports)
			if tt.fails != (err != nil) {
				t.Fatalf("error %v, want failure %v", err, tt.fails)
			}
			if sel.Chosen != tt.want {
				t.Errorf("chose %q, want %q", sel.Chosen, tt.want)
			}
			if len(sel.Refused) != tt.refused {
				t.Errorf("%d refusals %+v, want %d", len(sel.Refused), sel.Refused, tt.refused)
			}
			for _, r := range sel.Refused {
				if r.Reason == "" || r.Client == "" {
					t.Errorf("refusal without its client or reason: %+v", r)
				}
			}
			if !slices.Equal(sel.Grid, grid) || len(sel.Scores) != len(grid) {
				t.Fatalf("selection over %v with %d scores, want the grid %v", sel.Grid, len(sel.Scores), grid)
			}
			for i, cs := range sel.Scores {
				w := tt.scores[i]
				if cs.Name != grid[i] || (math.IsNaN(w) != math.IsNaN(cs.Score)) || (!math.IsNaN(w) && math.Abs(cs.Score-w) > 1e-12) {
					t.Errorf("score %d = %s %v, want %s %v", i, cs.Name, cs.Score, grid[i], w)
				}
			}
		})
	}
}

// TestCandidateScoreJSON: a candidate nobody scored encodes (null), so the
// summary's --json never fails on it.
func TestCandidateScoreJSON(t *testing.T) {
	for _, tt := range []struct {
		in   CandidateScore
		want string
	}{
		{CandidateScore{Name: "a", Score: 0.5, Clients: 2, Coverage: 1}, `{"name":"a","clients":2,"coverage":1,"score":0.5}`},
		{CandidateScore{Name: "b", Score: math.NaN()}, `{"name":"b","clients":0,"coverage":0,"score":null}`},
	} {
		got, err := json.Marshal(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("%+v encodes as %s (%v), want %s", tt.in, got, err, tt.want)
		}
	}
}

// TestPickDeterministic: the refusals and the choice do not depend on the
// order a map hands out a client's scores.
func TestPickDeterministic(t *testing.T) {
	reports := []ClientScores{{Client: "c0", ValN: 2, Scores: map[string]float64{"a": math.NaN(), "b": 0.3, "c": math.NaN(), "z": 1}}}
	first, _ := Pick([]string{"a", "b", "c"}, reports)
	for i := 0; i < 20; i++ {
		again, _ := Pick([]string{"a", "b", "c"}, reports)
		if !slices.Equal(again.Refused, first.Refused) || again.Chosen != first.Chosen {
			t.Fatalf("run %d: %+v, first %+v", i, again, first)
		}
	}
}

func TestGrid(t *testing.T) {
	for _, tt := range []struct {
		names, exclude []string
		want           []string
		fails          string
	}{
		{want: SelectGrid()},
		{exclude: []string{"cora"}, want: []string{"minesweeper", "tolokers", "actor", "heterophilic", "pubmed", "roman-empire"}},
		{exclude: []string{"heterophilic", "actor"}, want: []string{"cora", "minesweeper", "tolokers", "pubmed", "roman-empire"}},
		// Excluding a row excludes its variants; a variant left out alone
		// leaves its row.
		{names: []string{"cora", "cora+raw", "cora+slow", "tolokers"}, exclude: []string{"cora"}, want: []string{"tolokers"}},
		{names: []string{"cora", "cora+raw"}, exclude: []string{"cora+raw"}, want: []string{"cora"}},
		{names: []string{"actor+raw"}, fails: "unknown preset"}, // actor's row is raw already
		{names: []string{"cora+raw+raw"}, fails: "unknown preset"},
		{names: []string{"cora+slow+raw"}, fails: "unknown preset"}, // the canonical order is +raw+slow
		{names: []string{"pubmed", "cora"}, exclude: []string{"cora"}, want: []string{"pubmed"}},
		{names: []string{"cora", "metis"}, fails: "unknown preset"},
		{names: []string{"cora", "cora"}, fails: "twice"},
		{names: []string{"cora"}, exclude: []string{"actor"}, fails: "not in the grid"},
		{names: []string{"cora"}, exclude: []string{"cora"}, fails: "every candidate"},
		{names: []string{"auto"}, fails: "unknown preset"}, // a name lookup is no candidate
	} {
		got, err := Grid(tt.names, tt.exclude)
		if (tt.fails != "") != (err != nil) || (err != nil && !strings.Contains(err.Error(), tt.fails)) {
			t.Errorf("Grid(%v, %v): error %v, want %q", tt.names, tt.exclude, err, tt.fails)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Grid(%v, %v) = %v, want %v", tt.names, tt.exclude, got, tt.want)
		}
	}
}

// TestTunedOnExcludable: every dataset's tuned preset is a candidate of
// the default grid, so its leave-one-out grid can drop it, and what is
// left still holds a candidate of each kind (homophilic, heterophilic).
func TestTunedOnExcludable(t *testing.T) {
	for ds, preset := range TunedOn() {
		g, err := Grid(nil, []string{preset})
		if err != nil {
			t.Fatalf("%s: %v", ds, err)
		}
		if slices.ContainsFunc(g, func(n string) bool { return BaseName(n) == preset }) {
			t.Errorf("%s: grid %v still holds %s or its variant", ds, g, preset)
		}
		if !slices.Contains(g, "pubmed") || !slices.Contains(g, "roman-empire") {
			t.Errorf("%s: grid %v lost a row tuned on none of the datasets", ds, g)
		}
	}
}

// TestScoreCandidates: a seeded trial is deterministic, scores are
// validation scores in [0, 1], and a candidate that cannot be built on
// the data is reported with its error instead of failing the others.
func TestScoreCandidates(t *testing.T) {
	d := randomDataset(t, newRNG(3), 120, 12, 3, 200, false)
	small := Overrides{Orders: ptr(3), Hidden: ptr(16), Principal: ptr(2)}
	cands, err := Candidates([]string{"cora", "heterophilic"}, small)
	if err != nil {
		t.Fatal(err)
	}
	bad := cands[0]
	bad.Name, bad.Config.Layers = "broken", 1
	cands = append(cands, bad)
	run := func() []CandidateTrial {
		trials, nVal, err := ScoreCandidates(d, cands, 5, 1, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := d.Count(graph.SplitVal); nVal != want || nVal == 0 {
			t.Fatalf("validation count %d, want %d", nVal, want)
		}
		return trials
	}
	a, b := run(), run()
	if len(a) != 3 {
		t.Fatalf("%d trials, want 3", len(a))
	}
	for i := range a {
		if a[i].Name != cands[i].Name {
			t.Errorf("trial %d is %s, want %s", i, a[i].Name, cands[i].Name)
		}
		if i < 2 && (a[i].Err != nil || !(a[i].Score >= 0 && a[i].Score <= 1) || a[i].Score != b[i].Score) {
			t.Errorf("trial %s: score %v then %v, error %v", a[i].Name, a[i].Score, b[i].Score, a[i].Err)
		}
	}
	if a[2].Err == nil || !math.IsNaN(a[2].Score) {
		t.Errorf("a one-layer candidate scored %v without an error", a[2].Score)
	}
	if _, _, err := ScoreCandidates(d, cands, 0, 1, 2, nil); err == nil {
		t.Error("a trial of 0 epochs was accepted")
	}
}

func ptr[T any](v T) *T { return &v }
