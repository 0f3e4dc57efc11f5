package privacy_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"graphfed/privacy"
)

func TestParseChannelDescriptor(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want privacy.Channel
		ok   bool
	}{
		{"descriptor", privacy.ChannelDescriptor, true},
		{"model", privacy.ChannelModel, true},
		{"Descriptor", "", false},
		{"descriptors", "", false},
	} {
		got, err := privacy.ParseChannel(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseChannel(%q) = %q, %v; want %q (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
	if got, want := privacy.Sensitivity(privacy.ChannelDescriptor, 1, 84), 2*math.Sqrt(84); got != want {
		t.Errorf("descriptor sensitivity of 84 unit rows: %v, want %v", got, want)
	}
}

// A descriptor release is clipped per row, charged at 2·clip·sqrt(rows)
// like every row release, recorded in the ledger, and listed by the audit
// per client with the ε of that release.
func TestDescriptorReleaseAudited(t *testing.T) {
	ctx := context.Background()
	l := privacy.NewMemLedger()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Second); return at }
	const rows, dim, sigma = 8, 5, 2.0
	flat := make([]float32, rows*dim)
	for i := range flat {
		flat[i] = float32(i%dim + 1) // rows of norm sqrt(55): clipped to 1
	}
	for _, client := range []string{"bank-1", "bank-2"} {
		g, err := privacy.NewGate(ctx, privacy.Config{Job: "gsp", Client: client, Delta: 1e-5}, l, clock)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelModel, Round: 1, Flat: []float32{1, 2}, Dim: 2, Sigma: 1, Clip: 10}); err != nil {
			t.Fatal(err)
		}
		rel, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelDescriptor, Round: 1, Flat: flat, Dim: dim, Sigma: sigma, Clip: 1})
		if err != nil {
			t.Fatal(err)
		}
		if e := rel.Entry(); e.Channel != privacy.ChannelDescriptor || e.Count != rows || e.Dim != dim || e.Rho != 2*math.Sqrt(rows) {
			t.Fatalf("entry %+v", e)
		}
		if sp := g.Spent(math.NaN()); !(sp.Channels[privacy.ChannelDescriptor] > 0) || !(sp.Client > sp.Channels[privacy.ChannelDescriptor]) {
			t.Fatalf("spending %+v: the descriptor channel must be accounted and composed", sp)
		}
	}
	es, err := l.Entries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := privacy.Audit(es, privacy.AuditOptions{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Descriptors) != 2 || rep.Descriptors[0].Client != "bank-1" || rep.Descriptors[1].Client != "bank-2" {
		t.Fatalf("descriptor releases %+v, want one per client", rep.Descriptors)
	}
	one, err := privacy.NewAccountant(privacy.RDP, 1e-5, privacy.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	want := one.Epsilon(privacy.Stat{Releases: 1, Mu2: rows * 4 / (sigma * sigma)}, 1)
	for _, d := range rep.Descriptors {
		if d.Rows != rows || d.Dim != dim || d.Sigma != sigma || d.Clip != 1 || math.Abs(d.Epsilon-want) > 1e-12 {
			t.Errorf("descriptor release %+v, want ε %v", d, want)
		}
	}
	if rep.ChannelMax[privacy.ChannelDescriptor] != rep.Descriptors[0].Epsilon {
		t.Errorf("channel max %v, one release's ε %v", rep.ChannelMax[privacy.ChannelDescriptor], rep.Descriptors[0].Epsilon)
	}
	var b bytes.Buffer
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "descriptor releases") || strings.Count(b.String(), "8×5") != 2 {
		t.Errorf("report does not list the descriptor releases:\n%s", b.String())
	}
	// The budget caps descriptor releases like any other.
	g, err := privacy.NewGate(ctx, privacy.Config{Job: "gsp2", Client: "bank-1", Delta: 1e-5, Budget: privacy.Budget{Epsilon: 1}}, privacy.NewMemLedger(), clock)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Release(ctx, privacy.Request{Channel: privacy.ChannelDescriptor, Round: 1, Flat: flat, Dim: dim, Sigma: 1e-3, Clip: 1})
	if !errors.Is(err, privacy.ErrBudgetExceeded) {
		t.Errorf("a descriptor release far over the budget: %v, want ErrBudgetExceeded", err)
	}
}
