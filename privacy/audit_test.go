package privacy_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"graphfed/privacy"
)

// table6Ledger is the ledger of one CE-FedGNN Table 6 column: 200 rounds in
// which client hi-small releases the embeddings of nodes 1..3 with noise
// sigma (node 3 only every other round), model updates every round, and a
// calibration carrying the paper's ρ percentiles.
func table6Ledger(t *testing.T, sigma float64, seeded bool) []privacy.Entry {
	t.Helper()
	l := privacy.NewMemLedger()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := privacy.Config{Job: "table6", Client: "hi-small", Delta: 1e-4}
	if seeded {
		s := uint64(1)
		cfg.Seed = &s
	}
	g, err := privacy.NewGate(context.Background(), cfg, l, func() time.Time { at = at.Add(time.Second); return at })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for r := uint64(1); r <= 200; r++ {
		ids := []int64{1, 2, 3}
		if r%2 == 1 {
			ids = ids[:2]
		}
		rows := make([][]float32, len(ids))
		for i := range rows {
			rows[i] = []float32{1, float32(i), 0.5}
		}
		if _, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelEmb, Round: r, Rows: rows, NodeIDs: ids, Sigma: sigma}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: r, Flat: []float32{3, 4}, Dim: 2, Sigma: 1000, Clip: 15}); err != nil {
			t.Fatal(err)
		}
	}
	cal := privacy.Calibration{K: 50, N: 515000, Q: privacy.DefaultPercentiles(), Rho: []float64{0.0533, 0.1466, 0.1845, 0.2793, 0.8913}}
	if _, err := g.RecordCalibration(ctx, 200, cal); err != nil {
		t.Fatal(err)
	}
	es, _ := l.Entries(ctx)
	return es
}

// The audit reproduces CE-FedGNN Table 6 (σ=0.3 column) from a ledger.
func TestAuditReproducesTable6(t *testing.T) {
	es := table6Ledger(t, 0.3, false)
	rep, err := privacy.Audit(es, privacy.AuditOptions{Delta: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	reported := []float64{12.881, 51.794, 73.245, 141.039, 1059.705}
	if rep.RhoSource != "ledger calibration" || len(rep.Percentiles) != 5 || rep.Nodes != 3 || rep.Seeded {
		t.Fatalf("report %+v", rep)
	}
	for i, p := range rep.Percentiles {
		if math.Abs(p.WorstEpsilon-reported[i]) > 5e-4 || p.WorstReleases != 200 {
			t.Errorf("p%v: worst node ε %v (%d releases), paper %v", p.Q, p.WorstEpsilon, p.WorstReleases, reported[i])
		}
		if !(p.MedianEpsilon == p.WorstEpsilon) { // nodes 1, 2 have 200 releases, node 3 has 100
			t.Errorf("p%v: median %v worst %v", p.Q, p.MedianEpsilon, p.WorstEpsilon)
		}
	}
	if rep.Entries != 401 || rep.Releases != 400 || len(rep.Rounds) != 200 {
		t.Errorf("entries %d releases %d rounds %d", rep.Entries, rep.Releases, len(rep.Rounds))
	}
	// ε grows with rounds, and the last round is the total.
	for i := 1; i < len(rep.Rounds); i++ {
		for q := range rep.Rounds[i].Nodes {
			if rep.Rounds[i].Nodes[q] < rep.Rounds[i-1].Nodes[q] {
				t.Fatalf("round %d: node ε decreased", rep.Rounds[i].Round)
			}
		}
	}
	last := rep.Rounds[len(rep.Rounds)-1]
	if last.Nodes[1] != rep.Percentiles[1].WorstEpsilon || last.Channels[privacy.ChannelModel] != rep.ChannelMax[privacy.ChannelModel] {
		t.Errorf("last round %+v disagrees with totals", last)
	}
	// Model: 200 releases at ρ = 2·15 = 30, σ = 1000.
	if want := privacy.RDP.Epsilon(200*0.03*0.03, 1e-4); math.Abs(rep.ChannelMax[privacy.ChannelModel]-want) > 1e-12 {
		t.Errorf("model ε %v, want %v", rep.ChannelMax[privacy.ChannelModel], want)
	}

	// The exact accountant is tighter, and overriding ρ works.
	ex, err := privacy.Audit(es, privacy.AuditOptions{Kind: privacy.Exact, Delta: 1e-4, Rho: []privacy.RhoAt{{Q: 90, Rho: 0.1466}}})
	if err != nil {
		t.Fatal(err)
	}
	if ex.RhoSource != "given" || len(ex.Percentiles) != 1 || math.Abs(ex.Percentiles[0].WorstEpsilon-48.782870) > 1e-6 {
		t.Errorf("exact audit %+v", ex.Percentiles)
	}
}

func TestAuditGoldenText(t *testing.T) {
	es := table6Ledger(t, 1.0, true)
	rep, err := privacy.Audit(es, privacy.AuditOptions{Delta: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "audit_report.golden", b.Bytes())
}

func TestAuditRejects(t *testing.T) {
	es := table6Ledger(t, 1.0, false)
	if _, err := privacy.Audit(es, privacy.AuditOptions{}); !errors.Is(err, privacy.ErrInvalid) {
		t.Errorf("no delta: %v", err)
	}
	if _, err := privacy.Audit(es, privacy.AuditOptions{Delta: 1e-4, Rho: []privacy.RhoAt{{Q: 90, Rho: 3}}}); !errors.Is(err, privacy.ErrInvalid) {
		t.Errorf("ρ > 2: %v", err)
	}
	swapped := append([]privacy.Entry{es[1], es[0]}, es[2:]...)
	if _, err := privacy.Audit(swapped, privacy.AuditOptions{Delta: 1e-4}); !errors.Is(err, privacy.ErrCorrupt) {
		t.Errorf("out of order: %v", err)
	}
	bad := append([]privacy.Entry(nil), es...)
	bad[5].Sigma = -1
	if _, err := privacy.Audit(bad, privacy.AuditOptions{Delta: 1e-4}); !errors.Is(err, privacy.ErrCorrupt) {
		t.Errorf("invalid entry: %v", err)
	}
	other, err := privacy.Audit(es, privacy.AuditOptions{Delta: 1e-4, Job: "other-job"})
	if err != nil || other.Entries != 0 || other.RhoSource != "none" || len(other.Rounds) != 0 {
		t.Errorf("job filter: %+v %v", other, err)
	}
}
