package job

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/graph"
	"graphfed/lpsfed"
	"graphfed/workload/rec"
)

// TestLPSFedWorldEndToEnd is the Gowalla run in miniature: a synthetic
// world written in the LightGCN layout and read back, split into
// spectral-clustering clients, eigenpairs per client, the GNMK reference,
// and the three algorithms over an embedded NATS server.
func TestLPSFedWorldEndToEnd(t *testing.T) {
	w, err := rec.GenerateWorld(rec.DefaultWorld())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := w.WriteLightGCN(dir); err != nil {
		t.Fatal(err)
	}
	d, err := graph.LoadLightGCN(dir)
	if err != nil {
		t.Fatal(err)
	}
	const phi, nc = 16, 3
	clients, st, err := rec.PrepareClients(d, rec.ClientsOptions{Clients: nc, Phi: phi, EdgeVariation: 0.2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	users, train, test := 0, 0, 0
	for i, c := range clients {
		cs := st.Clients[i]
		users += cs.Users
		train += cs.Train
		test += cs.TestItems + cs.TestDropped
		if c.Vectors.Cols != phi || c.Vectors.Rows != c.Data.Nodes() || len(c.Kernel) != phi {
			t.Fatalf("%s: eigenvectors %v, kernel %d", c.ID, c.Vectors, len(c.Kernel))
		}
		var sum float64
		for _, k := range c.Kernel {
			sum += k
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("%s: kernel sums to %v", c.ID, sum)
		}
		// P̄ᵀP̄ = I is what lets a layer reuse P̄ᵀZ⁽⁰⁾.
		for a := range phi {
			for b := range phi {
				var dot float64
				for r := range c.Vectors.Rows {
					dot += float64(c.Vectors.At(r, a)) * float64(c.Vectors.At(r, b))
				}
				if want := map[bool]float64{true: 1, false: 0}[a == b]; math.Abs(dot-want) > 1e-4 {
					t.Fatalf("%s: P̄ᵀP̄[%d,%d] = %v", c.ID, a, b, dot)
				}
			}
		}
	}
	if users != d.Users || train != d.NumTrain() || test != d.NumTest() {
		t.Fatalf("partition lost data: %d/%d users, %d/%d train, %d/%d test", users, d.Users, train, d.NumTrain(), test, d.NumTest())
	}
	mc := lpsfed.DefaultConfig()
	mc.Dim, mc.BatchSize, mc.LR = 16, 256, 5e-3
	recall := map[string]float64{}
	for _, algo := range []string{aggregator.AlgoFedAvg, aggregator.AlgoLPSFedBPR, aggregator.AlgoLPSFed} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		learners, ids, err := RecLearners(clients, algo, deploy.RecOptions{Model: mc}, 1, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		res, err := RunSim(ctx, SimConfig{Job: "world-" + algo, Task: deploy.TaskRec, Algo: algo, Learners: learners, IDs: ids,
			Rounds: 4, LocalEpochs: 3, EvalEvery: -1, FreezeRounds: 2,
			LPSFed:       aggregator.LPSFedConfig{Phi: phi, Reference: aggregator.GNMKReference, Seed: 1},
			RoundTimeout: 30 * time.Second, FinalWait: 30 * time.Second, Seed: 1, Log: zerolog.Nop()})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Agg.Final) != nc || len(res.Ledger) == 0 || res.Bytes == 0 {
			t.Fatalf("%s: %d final reports, %d ledger entries, %d bytes", algo, len(res.Agg.Final), len(res.Ledger), res.Bytes)
		}
		var r float64
		for _, sc := range res.Agg.Final {
			r += sc["recall_at_20"] / nc
		}
		recall[algo] = r
		if algo != aggregator.AlgoFedAvg {
			last := res.Agg.Mixes[len(res.Agg.Mixes)-1]
			if len(last.Rho) != nc || math.IsNaN(last.Rho[clients[0].ID]) {
				t.Fatalf("%s: no ρ_c released: %+v", algo, last)
			}
		}
	}
	// 160 items, about 2 held out per user: ranking at random finds
	// 20/160 = 12.5% of them; the block structure makes far more findable.
	for algo, r := range recall {
		if r < 0.25 {
			t.Errorf("%s: mean Recall@20 %.3f, no better than a weak baseline", algo, r)
		}
	}
	t.Logf("mean Recall@20: %v", recall)
}
