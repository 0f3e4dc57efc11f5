package lpsfed

import (
	"testing"

	"graphfed/gnn"
)

// heldoutModel is a small BPR model whose data has a test and, when val,
// a validation split: the test lists of randomData, shifted by one user
// (so the two differ), minus training items.
func heldoutModel(t *testing.T, val bool) (*Model, *Data) {
	t.Helper()
	rng := newRNG(3)
	d := randomData(rng, 40, 30, 5, true)
	if val {
		d.Val = make([][]int32, d.Users)
		for u := range d.Users {
			for _, i := range d.Test[(u+1)%d.Users] {
				if !hasItem(d.Train[u], i) {
					d.Val[u] = append(d.Val[u], i)
				}
			}
		}
	}
	p := gnn.New(d.Nodes(), 6)
	normalFill(p, 0.05, rng)
	cfg := DefaultConfig()
	cfg.Dim, cfg.TopK, cfg.Loss, cfg.InitStd = 4, 5, LossBPR, 0.5
	m, err := NewModel(d, p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.InitShared(9)
	return m, d
}

// EvaluateOn the test split is Evaluate; on the validation split it is
// Evaluate of a model whose test split is the validation one, and it
// leaves the model's own evaluation unchanged.
func TestEvaluateOn(t *testing.T) {
	m, d := heldoutModel(t, true)
	want := m.Evaluate()
	if got := m.EvaluateOn(d.Test, 0); got != want {
		t.Fatalf("EvaluateOn(Test) = %+v, want %+v", got, want)
	}
	v := m.EvaluateOn(d.Val, 0)
	swapped := *d
	swapped.Test = d.Val
	m2, err := NewModel(&swapped, m.enc.P, m.cfg)
	if err != nil {
		t.Fatal(err)
	}
	m2.InitShared(9)
	if ref := m2.Evaluate(); v != ref {
		t.Fatalf("EvaluateOn(Val) = %+v, want %+v", v, ref)
	}
	if again := m.Evaluate(); again != want {
		t.Fatalf("Evaluate after EvaluateOn = %+v, want %+v", again, want)
	}
	if s := m.EvaluateOn(d.Val, 3); s.Users != 3 {
		t.Fatalf("a sample of 3 validation users scored %d", s.Users)
	}
}

func TestLearnerReportsValidation(t *testing.T) {
	for _, val := range []bool{false, true} {
		m, _ := heldoutModel(t, val)
		l, err := NewLearner(LearnerConfig{}, m, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := l.Evaluate()
		_, has := out["val_recall_at_5"]
		if _, ndcg := out["val_ndcg_at_5"]; has != val || ndcg != val {
			t.Fatalf("validation split %v: metrics %v", val, out)
		}
	}
}

func TestValidateValidation(t *testing.T) {
	_, d := heldoutModel(t, true)
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := *d
	bad.Val = append([][]int32(nil), d.Val...)
	bad.Val[0] = []int32{d.Train[0][0]}
	if err := bad.Validate(); err == nil {
		t.Fatal("a validation item that is a training item passed")
	}
	bad.Val = d.Val[:3]
	if err := bad.Validate(); err == nil {
		t.Fatal("validation lists for 3 of 40 users passed")
	}
}
