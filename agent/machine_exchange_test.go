package agent_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"graphfed/agent"
	"graphfed/privacy"
)

// exchangeLearner is a LogisticLearner that shares a gradient estimator
// and exchanges boundary embeddings with two neighbours, node 2 facing
// both, every other round.
type exchangeLearner struct {
	*agent.LogisticLearner
	got map[string][]int64
}

func (l *exchangeLearner) Grad() []float32           { return make([]float32, l.NumParams()) }
func (l *exchangeLearner) SetGrad(g []float32) error { return nil }
func (l *exchangeLearner) Neighbours() []string      { return []string{"bank-a", "bank-b"} }
func (l *exchangeLearner) Boundary(to string) ([]int64, []float32, int) {
	rows := map[int64][]float32{1: {1, 0, 0}, 2: {0, 1, 0}, 3: {0, 0, 1}, 4: {1, 1, 0}}
	ids := map[string][]int64{"bank-a": {1, 2, 4}, "bank-b": {2, 3}}[to]
	var flat []float32
	for _, id := range ids {
		flat = append(flat, rows[id]...)
	}
	return ids, flat, 3
}
func (l *exchangeLearner) Receive(from string, ids []int64, rows []float32, dim int) error {
	l.got[from] = ids
	return nil
}
func (l *exchangeLearner) ExchangeDue(round uint64) bool { return round%2 == 1 }

// The machine releases each boundary node once per exchange, sends every
// neighbour its rows of that one release before the update, records a
// calibration, skips rounds the scheduler says are not due, releases the
// gradient estimator with the parameters, and hands received embeddings
// to the learner.
func TestMachineExchangesEmbeddings(t *testing.T) {
	ctx := context.Background()
	el := &exchangeLearner{LogisticLearner: newLogistic(t, 3), got: map[string][]int64{}}
	ledger := privacy.NewMemLedger()
	m, err := agent.NewMachine(agent.MachineConfig{Job: "j", Client: "bank-1", EvalEvery: -1,
		Privacy: privacy.Config{Delta: 1e-4}, Ledger: ledger}, el)
	if err != nil {
		t.Fatal(err)
	}
	step(t, m, agent.Start{Now: mat(0)})
	step(t, m, agent.JoinReply{Accepted: true, Algo: "cefedgnn", Now: mat(1)})
	acts := step(t, m, agent.RoundOpened{Round: 1, Now: mat(2)})
	var sent []agent.PublishEmbeddings
	for i, a := range acts {
		switch x := a.(type) {
		case agent.PublishEmbeddings:
			sent = append(sent, x)
		case agent.PublishUpdate:
			if len(sent) != 2 || i != len(acts)-1 {
				t.Fatalf("update before the embeddings: %#v", acts)
			}
			if x.Update.Grad.Len() != 5 || len(x.Releases) != 2 || x.Releases[1].Channel != privacy.ChannelGrad {
				t.Fatalf("update %+v without its gradient estimator", x)
			}
		}
	}
	if sent[0].To != "bank-a" || !slices.Equal(sent[0].Embeddings.NodeIDs, []int64{1, 2, 4}) ||
		sent[1].To != "bank-b" || !slices.Equal(sent[1].Embeddings.NodeIDs, []int64{2, 3}) ||
		sent[0].Releases[0].Seq != sent[1].Releases[0].Seq || sent[1].Embeddings.Data.Len() != 6 {
		t.Fatalf("embeddings sent %+v", sent)
	}
	es, _ := ledger.Entries(ctx)
	var emb, calib int
	for _, e := range es {
		switch e.Channel {
		case privacy.ChannelEmb:
			emb++
			// The ledger holds the nodes' keyed ids (privacy/nodekey.go).
			if want := m.Gate().LedgerNodeIDs([]int64{1, 2, 4, 3}); !slices.Equal(e.NodeIDs, want) {
				t.Fatalf("embedding entry %+v: want each node once, keyed: %v", e, want)
			}
		case privacy.ChannelCalibration:
			calib++
		}
	}
	if emb != 1 || calib != 1 {
		t.Fatalf("%d embedding and %d calibration entries, want 1 and 1", emb, calib)
	}
	for _, a := range step(t, m, agent.RoundOpened{Round: 2, Now: mat(3)}) {
		if _, ok := a.(agent.PublishEmbeddings); ok {
			t.Fatal("exchanged in a round the scheduler skips")
		}
	}
	step(t, m, agent.EmbeddingsIn{From: "bank-b", Round: 1, IDs: []int64{9}, Rows: []float32{0, 0, 1}, Dim: 3, Now: mat(4)})
	if !slices.Equal(el.got["bank-b"], []int64{9}) {
		t.Fatal("received embeddings did not reach the learner")
	}
	fin := only[agent.Finished](t, step(t, m, agent.JobDone{Now: mat(5)}))
	if _, ok := fin.Scores["privacy_rho_p50"]; !ok || fin.Scores["privacy_epsilon_grad"] <= 0 || fin.Round != 2 {
		t.Fatalf("final scores %v of round %d", fin.Scores, fin.Round)
	}
}

// The regression the simulator found: a round whose parameters were
// withheld (budget spent) still releases boundary embeddings; after a
// restart that round must not be trained again, or its embeddings are
// released (and charged) twice.
func TestMachineRestartDoesNotReleaseEmbeddingsTwice(t *testing.T) {
	ctx := context.Background()
	el := &exchangeLearner{LogisticLearner: newLogistic(t, 3), got: map[string][]int64{}}
	ledger := privacy.NewMemLedger()
	eps, _ := privacy.RDPEpsilon(1.5, 1e-4) // one model release at μ = 2·1/2, never the σ2 = 1e-3 gradient estimator
	m, err := agent.NewMachine(agent.MachineConfig{Job: "j", Client: "bank-1", EvalEvery: -1, ModelSigma: 2, ModelClip: 1,
		Privacy: privacy.Config{Delta: 1e-4, Budget: privacy.Budget{Epsilon: eps}}, Ledger: ledger}, el)
	if err != nil {
		t.Fatal(err)
	}
	step(t, m, agent.Start{Now: mat(0)})
	step(t, m, agent.JoinReply{Accepted: true, Algo: "cefedgnn", Now: mat(1)})
	for r := uint64(1); r <= 3; r++ {
		step(t, m, agent.RoundOpened{Round: r, Now: mat(1 + float64(r))})
	}
	es, _ := ledger.Entries(ctx)
	last := es[len(es)-1]
	if !m.Withheld() || slices.IndexFunc(es, func(e privacy.Entry) bool { return e.Channel == privacy.ChannelEmb && e.Round == 3 }) < 0 {
		t.Fatalf("want round 3's parameters withheld and its embeddings released: %+v", es)
	}
	step(t, m, agent.Crash{})
	step(t, m, agent.Start{Now: mat(10), Incarnation: 1})
	step(t, m, agent.JoinReply{Accepted: true, Algo: "cefedgnn", Round: 3, Reannounced: true, Now: mat(11)})
	for _, a := range step(t, m, agent.RoundOpened{Round: 3, Now: mat(12)}) {
		switch a.(type) {
		case agent.PublishEmbeddings, agent.PublishUpdate:
			t.Fatalf("round 3 released again after the restart: %#v", a)
		}
	}
	if es, _ := ledger.Entries(ctx); es[len(es)-1].Seq != last.Seq {
		t.Fatalf("the restart charged the ledger again: %+v", es[len(es)-1])
	}
}

// Under a planned node budget held at the measured 90th percentile, the
// machine calibrates each exchange's embeddings before releasing them,
// draws σ0 from the gate, and when the planned releases are made it
// withholds the embedding channel (BudgetSpent) while training and model
// updates go on; the calibration the gate held the last release at stays
// the latest in the ledger, so the audit's node ε is the gate's.
func TestMachineNodeTargetWithholdsEmbeddings(t *testing.T) {
	ctx := context.Background()
	el := &exchangeLearner{LogisticLearner: newLogistic(t, 3), got: map[string][]int64{}}
	ledger := privacy.NewMemLedger()
	const target = 8.0
	m, err := agent.NewMachine(agent.MachineConfig{Job: "j", Client: "bank-1", EvalEvery: -1,
		Privacy: privacy.Config{Delta: 1e-4, Accountant: privacy.Exact,
			Budget: privacy.Budget{NodeEpsilon: target, NodeRho: 2, NodeQ: 90, NodeReleases: 2}}, Ledger: ledger}, el)
	if err != nil {
		t.Fatal(err)
	}
	step(t, m, agent.Start{Now: mat(0)})
	step(t, m, agent.JoinReply{Accepted: true, Algo: "cefedgnn", Now: mat(1)})
	var spent []agent.BudgetSpent
	for r := uint64(1); r <= 7; r++ { // exchanges due in rounds 1, 3, 5, 7
		acts := step(t, m, agent.RoundOpened{Round: r, Now: mat(1 + float64(r))})
		up := only[agent.PublishUpdate](t, acts)
		if up.Update.Params.Len() == 0 {
			t.Fatalf("round %d: no parameters in the update after the embedding channel closed", r)
		}
		for _, a := range acts {
			switch x := a.(type) {
			case agent.BudgetSpent:
				spent = append(spent, x)
			case agent.PublishEmbeddings:
				if r > 3 {
					t.Fatalf("round %d released embeddings beyond the 2 planned", r)
				}
			}
		}
	}
	if len(spent) != 1 || spent[0].Round != 5 || spent[0].Channel != privacy.ChannelEmb || !errors.Is(spent[0].Err, privacy.ErrBudgetExceeded) {
		t.Fatalf("budget notices %+v, want one for the embedding channel in round 5", spent)
	}
	only[agent.Finished](t, step(t, m, agent.JobDone{Now: mat(20)}))
	es, _ := ledger.Entries(ctx)
	var emb []privacy.Entry
	for _, e := range es {
		if e.Channel == privacy.ChannelEmb {
			emb = append(emb, e)
		}
	}
	if len(emb) != 2 || emb[0].Round != 1 || emb[1].Round != 3 {
		t.Fatalf("embedding releases %+v, want rounds 1 and 3", emb)
	}
	rep, err := privacy.Audit(es, privacy.AuditOptions{Kind: privacy.Exact, Delta: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	last := rep.Calibrations[0]
	if last.Round != 3 && last.Round != 7 {
		t.Fatalf("latest calibration of round %d", last.Round)
	}
	for _, p := range rep.Percentiles {
		if p.Q == 90 && (p.WorstEpsilon > target || p.WorstEpsilon < target*(1-1e-6)) {
			t.Fatalf("audit: node ε at p90 = %v, want the target %v spent exactly", p.WorstEpsilon, target)
		}
	}
}
