package privacy

import (
	"context"
	"math"
	"testing"
)

// The gate's per-node figures are the audit's for the same client: each
// node at the client's own ρ_q, the worst and the median node.
func TestNodeEpsilonsMatchAudit(t *testing.T) {
	ctx := context.Background()
	l := NewMemLedger()
	g := newTestGate(t, Config{Job: "j", Client: "c", Delta: 1e-5}, l)
	if got := g.NodeEpsilons(); got != nil {
		t.Fatalf("before a calibration: %v, want nil", got)
	}
	// Nodes 1..4 released 1, 2, 3 and 4 times at differing σ: the worst
	// and the median node differ.
	for r := uint64(1); r <= 4; r++ {
		var ids []int64
		var rows [][]float32
		for id := int64(r); id <= 4; id++ {
			ids, rows = append(ids, id), append(rows, []float32{1, 0, 0})
		}
		if _, err := g.Release(ctx, Request{Channel: ChannelEmb, Round: r, Rows: rows, NodeIDs: ids, Sigma: 0.5 + float64(r)/4}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.RecordCalibration(ctx, 4, Calibration{K: 3, N: 4, Q: []float64{50, 90}, Rho: []float64{0.2, 0.7}}); err != nil {
		t.Fatal(err)
	}
	es, err := l.Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Audit(es, AuditOptions{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	got := g.NodeEpsilons()
	if len(got) != 2 || len(rep.Percentiles) != 2 {
		t.Fatalf("gate %v, audit %v: want two percentiles each", got, rep.Percentiles)
	}
	for i, want := range rep.Percentiles {
		p := got[i]
		close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
		if p.Q != want.Q || p.Rho != want.Rho || !close(p.WorstEpsilon, want.WorstEpsilon) ||
			!close(p.MedianEpsilon, want.MedianEpsilon) || p.WorstReleases != want.WorstReleases {
			t.Errorf("percentile %v: gate %+v, audit %+v", want.Q, p, want)
		}
		if !(p.WorstEpsilon > p.MedianEpsilon && p.MedianEpsilon > 0) {
			t.Errorf("percentile %v: worst %v, median %v: want worst > median > 0", want.Q, p.WorstEpsilon, p.MedianEpsilon)
		}
	}
}
