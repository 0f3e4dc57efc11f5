package job

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aml/amllearner"
	"graphfed/aml/bank"
	"graphfed/deploy"
	"graphfed/learner"
	"graphfed/privacy"
)

// The AML job end to end on a small world: every bank trains, releases its
// boundary embeddings through the gate to its neighbouring banks (every
// coordinate, or r per layer on the shared basis: rows of L·(w+1) values),
// and reports counts the job pools into one laundering-class F1.
func TestAMLSimExchangesGatedEmbeddings(t *testing.T) {
	if testing.Short() {
		t.Skip("trains three banks")
	}
	for _, tc := range []struct {
		name        string
		release     string
		releaseDims int
		wantDim     int // blocks × (width + the norm coordinate)
	}{
		{"layer 0 (the default)", "", 0, 2 + 1},
		{"every coordinate", amllearner.ReleaseHidden, 0, 2 * (16 + 1)},
		{"two coordinates a layer", amllearner.ReleaseHidden, 2, 2 * (2 + 1)},
		{"layer 0 and two coordinates a layer", amllearner.ReleaseAll, 2, 2 + 1 + 2*(2+1)},
	} {
		t.Run(tc.name, func(t *testing.T) { testAMLSimExchange(t, tc.release, tc.releaseDims, tc.wantDim) })
	}
}

func testAMLSimExchange(t *testing.T, release string, releaseDims, wantDim int) {
	w := tinyWorld(t, 2, 3, 20000)
	views, err := bank.SplitWorld(w, nil)
	if err != nil {
		t.Fatal(err)
	}
	var learners []learner.Learner
	var ids []string
	for i, v := range views {
		d, err := deploy.AMLData(v)
		if err != nil {
			t.Fatal(err)
		}
		l, err := amllearner.New(d, amllearner.Config{Hidden: 16, BatchSize: 128, Seed: uint64(i), ReleaseDims: releaseDims, Release: release})
		if err != nil {
			t.Fatal(err)
		}
		learners, ids = append(learners, l), append(ids, v.ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := RunSim(ctx, SimConfig{Job: "aml", Algo: "cefedgnn", Learners: learners, IDs: ids, Rounds: 2, LocalEpochs: 2,
		RoundTimeout: time.Minute, Seed: 1, Privacy: SimPrivacy{EmbSigma: 0.1}, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	emb := map[string]int{}
	released := map[string]bool{} // client/round/node
	for _, e := range res.Ledger {
		if e.Channel == privacy.ChannelEmb {
			emb[e.Client]++
			// One release per node and exchange, whatever the number of
			// banks it faces: neighbours share the rows of that release.
			for _, id := range e.NodeIDs {
				key := fmt.Sprintf("%s/%d/%d", e.Client, e.Round, id)
				if released[key] {
					t.Fatalf("%s released node %d twice in round %d", e.Client, id, e.Round)
				}
				released[key] = true
			}
			if e.Sigma != 0.1 || e.Clip != 1 || e.Dim != wantDim {
				t.Fatalf("embedding release with σ=%v clip=%v of %d values a row, want σ 0.1, clip 1, %d", e.Sigma, e.Clip, e.Dim, wantDim)
			}
		}
	}
	for _, id := range ids {
		if emb[id] == 0 {
			t.Fatalf("%s released no embeddings (ledger: %v)", id, emb)
		}
		sc, ok := res.Agg.Final[id]
		if !ok {
			t.Fatalf("%s sent no final scores", id)
		}
		if sc["test_tp"]+sc["test_fp"]+sc["test_fn"]+sc["test_tn"] == 0 {
			t.Fatalf("%s scored no test transaction", id)
		}
	}
}
