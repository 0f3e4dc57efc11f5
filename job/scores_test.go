package job

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

func TestPutClientScores(t *testing.T) {
	final := map[string]map[string]float64{
		"client-0": {"test_score": 0.6, "test_at_best_val": 0.7},
		"client-1": {"test_score": 0.8, "test_at_best_val": 0.9},
		"client-2": {"test_score": math.NaN(), "test_at_best_val": math.NaN()}, // one-class test nodes: no AUC
	}
	m := map[string]any{}
	putClientScores(m, "roc_auc", final)
	for _, tt := range []struct {
		key  string
		want float64
	}{{"test_score", 0.7}, {"test_at_best_val", 0.8}, {"test_score_std", math.Sqrt(0.02)}, {"test_at_best_val_std", math.Sqrt(0.02)}} {
		if got := m[tt.key].(float64); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", tt.key, got, tt.want)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("a client without a score breaks the JSON report: %v", err)
	}
	var back struct {
		Clients map[string]map[string]*float64 `json:"clients"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Clients["client-2"]["test_score"] != nil || *back.Clients["client-1"]["test_score"] != 0.8 {
		t.Fatalf("per-client scores: %s", b)
	}
}

// TestPooledScoresAreBitStable: pooling sums in client order, so a run's
// report has the same bits every time (a map's order once changed the last
// digit of test_at_best_val_std between two runs of one seed).
func TestPooledScoresAreBitStable(t *testing.T) {
	scores := map[string]map[string]float64{}
	for i := range 40 {
		scores[fmt.Sprintf("client-%d", i)] = map[string]float64{"a": 1 / float64(i+3), "n": float64(i%7 + 1)}
	}
	mean, _ := meanScore(scores, "a")
	std, w := stdScore(scores, "a", mean), weightedScore(scores, "a", "n")
	for range 50 {
		m, _ := meanScore(scores, "a")
		if m != mean || stdScore(scores, "a", mean) != std || weightedScore(scores, "a", "n") != w {
			t.Fatal("pooled scores changed between calls on the same scores")
		}
	}
}
