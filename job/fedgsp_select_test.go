package job

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/fedgsp"
	"graphfed/graph"
	"graphfed/privacy"
)

// TestReleaseScoresAccounting: every finite score is one scalar release
// on the scalar (margin) channel at the default scalar σ and clip 1,
// round 0, noised and accounted in the client's gate; a NaN score or a
// candidate that failed is not released, and says why.
func TestReleaseScoresAccounting(t *testing.T) {
	seed := uint64(5)
	priv := SimPrivacy{NoiseSeed: &seed}
	trials := []fedgsp.CandidateTrial{
		{Name: "cora", Score: 0.8},
		{Name: "actor", Score: math.NaN()},
		{Name: "tolokers", Score: 0.6},
		{Name: "pubmed", Score: math.NaN(), Err: errors.New("fedgsp: config: broken")},
	}
	rep, spent, entries, err := releaseScores(context.Background(), trials, 17, "client-2", 2, priv, "job-a")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Client != "client-2" || rep.ValN != 17 || len(rep.Scores) != 2 || len(rep.Missing) != 2 {
		t.Fatalf("report %+v: want 2 scores and 2 missing for client-2 with 17 validation nodes", rep)
	}
	for name, want := range map[string]float64{"cora": 0.8, "tolokers": 0.6} {
		got := rep.Scores[name]
		if got == want || math.Abs(got-want) > 6*agent.DefaultMarginSigma {
			t.Errorf("%s released as %v: want %v plus noise of σ %v", name, got, want, agent.DefaultMarginSigma)
		}
	}
	if !strings.Contains(rep.Missing["pubmed"], "broken") || rep.Missing["actor"] == "" {
		t.Errorf("missing reasons %v", rep.Missing)
	}
	if len(entries) != 2 {
		t.Fatalf("%d ledger entries, want one per released score (2)", len(entries))
	}
	acct, err := privacy.NewAccountant(privacy.RDP, deploy.DefaultDelta, privacy.Budget{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Channel != privacy.ChannelMargin || e.Round != 0 || e.Count != 1 || e.Dim != 1 ||
			e.Sigma != agent.DefaultMarginSigma || e.Clip != 1 || e.Client != "client-2" || e.Job != "job-a" || !e.Seeded {
			t.Errorf("entry %+v: want a seeded scalar release of client-2, margin channel, round 0, σ %v, clip 1", e, agent.DefaultMarginSigma)
		}
		if err := acct.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	st := acct.Client(privacy.ClientKey{Job: "job-a", Client: "client-2"})
	if st.Releases != 2 || spent.Client != acct.Epsilon(st, 1) || !(spent.Client > 0) || spent.Channels[privacy.ChannelMargin] != spent.Client {
		t.Errorf("spent ε %v (margin %v), want the ε of two scalar releases %v", spent.Client, spent.Channels[privacy.ChannelMargin], acct.Epsilon(st, 1))
	}
	// The same seed adds the same noise: the selection is reproducible.
	again, _, _, err := releaseScores(context.Background(), trials, 17, "client-2", 2, priv, "job-a")
	if err != nil || !reflect.DeepEqual(again.Scores, rep.Scores) {
		t.Errorf("a seeded re-release gave %v (%v), first %v", again.Scores, err, rep.Scores)
	}
}

// selectClients are four METIS clients of a small CSBM graph.
func selectClients(t *testing.T, homophily float64) []*graph.ClientGraph {
	t.Helper()
	gc := graph.DefaultCSBM()
	gc.Nodes, gc.Classes, gc.Features, gc.Homophily = 400, 3, 24, homophily
	d, err := graph.GenerateCSBM(gc, rand.New(rand.NewPCG(21, 22)))
	if err != nil {
		t.Fatal(err)
	}
	owner, err := graph.PartitionMetis(d.Adj, 4, graph.MetisOptions{}, rand.New(rand.NewPCG(23, 24)))
	if err != nil {
		t.Fatal(err)
	}
	clients, err := graph.SplitByOwner(d, owner, 4)
	if err != nil {
		t.Fatal(err)
	}
	return clients
}

// TestSelectFedGSPEndToEnd runs a seeded selection over CSBM clients with
// a leave-one-out grid: every client scores every candidate, the choice
// is the best weighted score, the record holds the grid, the cost and the
// accounting, and a second run chooses and scores the same.
func TestSelectFedGSPEndToEnd(t *testing.T) {
	clients := selectClients(t, 0.2)
	ids := []string{"client-0", "client-1", "client-2", "client-3"}
	seed := uint64(3)
	priv := SimPrivacy{NoiseSeed: &seed}
	small := fedgsp.Overrides{Orders: ptrTo(3), Hidden: ptrTo(16), Layers: ptrTo(2), Principal: ptrTo(2)}
	opt := FedGSPSelect{Grid: []string{"cora", "heterophilic", "actor"}, Exclude: []string{"actor"}, Epochs: 8}
	run := func() FedGSPSelection {
		sel, err := selectFedGSP(context.Background(), clients, ids, opt, small, priv, "job-b", 9, nil, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		return sel
	}
	sel := run()
	if !reflect.DeepEqual(sel.Grid, []string{"cora", "heterophilic"}) || !reflect.DeepEqual(sel.Excluded, []string{"actor"}) {
		t.Fatalf("grid %v excluding %v, want cora, heterophilic without actor", sel.Grid, sel.Excluded)
	}
	if sel.Releases != 8 || sel.LocalEpochs != 4*2*8 || sel.EpochsPerCandidate != 8 || !(sel.Seconds > 0) {
		t.Errorf("releases %d, local epochs %d (%d each), %v s: want 8 releases and 64 epochs", sel.Releases, sel.LocalEpochs, sel.EpochsPerCandidate, sel.Seconds)
	}
	if !(sel.EpsilonMax > 0) || !sel.Seeded || sel.Sigma != agent.DefaultMarginSigma || sel.Clip != 1 {
		t.Errorf("accounting ε %v seeded %v σ %v clip %v", sel.EpsilonMax, sel.Seeded, sel.Sigma, sel.Clip)
	}
	best := sel.Scores[0]
	for _, cs := range sel.Scores {
		if cs.Clients != 4 || cs.Coverage != 1 || !(cs.Score > 0 && cs.Score <= 1) {
			t.Errorf("candidate %+v: want all 4 clients and a score in (0, 1]", cs)
		}
		if cs.Score > best.Score {
			best = cs
		}
	}
	if sel.Chosen != best.Name {
		t.Errorf("chose %s, the best weighted score is %s's", sel.Chosen, best.Name)
	}
	if line := sel.String(); !strings.HasPrefix(line, "chose "+sel.Chosen+" of cora=") || !strings.Contains(line, "(excluded actor)") {
		t.Errorf("summary line %q", line)
	}
	if again := run(); again.Chosen != sel.Chosen || !reflect.DeepEqual(again.Scores, sel.Scores) {
		t.Errorf("second seeded run chose %s with %+v; first %s with %+v", again.Chosen, again.Scores, sel.Chosen, sel.Scores)
	}
}

// TestResolveFedGSP: select (or unset) runs the selection and returns the
// chosen preset with the overrides on top; a named preset does not; a grid
// given with a named preset is refused.
func TestResolveFedGSP(t *testing.T) {
	clients := selectClients(t, 0.8)
	whole := clients[0].Data
	seed := uint64(1)
	priv := SimPrivacy{NoiseSeed: &seed}
	small := fedgsp.Overrides{Orders: ptrTo(2), Hidden: ptrTo(8), Layers: ptrTo(2), Principal: ptrTo(1)}
	opt := FedGSPSelect{Grid: []string{"pubmed", "roman-empire"}, Epochs: 2}
	for _, tt := range []struct {
		preset  string
		opt     FedGSPSelect
		selects bool
		fails   string
	}{
		{preset: "", opt: opt, selects: true},
		{preset: "select", opt: opt, selects: true},
		{preset: "tolokers"},
		{preset: "auto"},
		{preset: "cora", opt: opt, fails: "needs preset"},
		{preset: "select", opt: FedGSPSelect{Exclude: []string{"cora", "nope"}}, fails: "not in the grid"},
	} {
		o := deploy.FedGSPOptions{Preset: tt.preset, Set: small}
		name, c, sel, err := resolveFedGSP(context.Background(), o, tt.opt, whole, clients, priv, "job-c", 1, nil, zerolog.Nop())
		if (tt.fails != "") != (err != nil) || (err != nil && !strings.Contains(err.Error(), tt.fails)) {
			t.Errorf("preset %q: error %v, want %q", tt.preset, err, tt.fails)
			continue
		}
		if err != nil {
			continue
		}
		if tt.selects != (sel != nil) || (sel != nil && sel.Chosen != name) {
			t.Errorf("preset %q: selection %+v for %q, want one: %v", tt.preset, sel, name, tt.selects)
		}
		if c.Orders != 2 || c.Hidden != 8 || c.Metric != whole.ScoreMetric() {
			t.Errorf("preset %q: config %+v lost the overrides or the metric", tt.preset, c)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestFedGSPServerRows: every candidate of the default grid has a server
// row (the choice sets both sides), the authors' own where they give one.
func TestFedGSPServerRows(t *testing.T) {
	want := map[string]float64{"cora": 1.6, "minesweeper": 50, "tolokers": 1.6, "actor": 50, "heterophilic": 0.5, "pubmed": 14, "roman-empire": 4}
	for _, name := range FedGSPSelectGrid() {
		c, err := FedGSPServer(name, aggregator.FedGSPOverrides{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g, ok := want[fedgsp.BaseName(name)]; !ok || c.Gamma != g {
			t.Errorf("%s: server γ %v, want %v", name, c.Gamma, g)
		}
	}
}

// TestSelectRecordsWhetherRawMatters: CSBM's Gaussian features (negative
// entries: never normalised) make a raw-feature variant its row's very
// model; made non-negative, normalisation changes them.
func TestSelectRecordsWhetherRawMatters(t *testing.T) {
	seed := uint64(3)
	small := fedgsp.Overrides{Orders: ptrTo(3), Hidden: ptrTo(16), Layers: ptrTo(2), Principal: ptrTo(2)}
	opt := FedGSPSelect{Grid: []string{"cora"}, Epochs: 1}
	ids := []string{"client-0", "client-1", "client-2", "client-3"}
	nonNegative := func(clients []*graph.ClientGraph) []*graph.ClientGraph {
		for _, cg := range clients {
			f := *cg.Data.Features
			f.Val = slices.Clone(f.Val)
			for i, v := range f.Val {
				f.Val[i] = float32(math.Abs(float64(v)))
			}
			cg.Data.Features = &f
		}
		return clients
	}
	for _, tt := range []struct {
		name    string
		clients []*graph.ClientGraph
		want    bool
	}{
		{"gaussian features", selectClients(t, 0.2), false},
		{"non-negative features", nonNegative(selectClients(t, 0.2)), true},
	} {
		sel, err := selectFedGSP(context.Background(), tt.clients, ids, opt, small, SimPrivacy{NoiseSeed: &seed}, "job-r", 9, nil, zerolog.Nop())
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if sel.RawMatters != tt.want {
			t.Errorf("%s: raw matters %v, want %v", tt.name, sel.RawMatters, tt.want)
		}
	}
}
