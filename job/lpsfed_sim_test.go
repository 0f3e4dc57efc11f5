package job

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/lpsfed"
	"graphfed/privacy"
	"graphfed/workload/rec"
)

// tinyLPSFedClients draws clients whose users prefer one block of their
// catalog, holds one interaction per user out, and prepares each with a
// dense eigendecomposition (the stand-in for Lanczos at this size).
func tinyLPSFedClients(t *testing.T, n, phi int) []rec.PreparedClient {
	t.Helper()
	rng := rand.New(rand.NewPCG(21, 22))
	var out []rec.PreparedClient
	for c := range n {
		users, items := 60+10*c, 40+8*c
		d := &lpsfed.Data{Users: users, Items: items, Train: make([][]int32, users), Test: make([][]int32, users)}
		for u := range users {
			block := u % 2 * items / 2
			seen := map[int32]bool{}
			for len(seen) < 6 {
				i := int32(block + rng.IntN(items/2))
				if rng.Float64() < 0.15 {
					i = int32(rng.IntN(items))
				}
				seen[i] = true
			}
			var it []int32
			for i := range seen {
				it = append(it, i)
			}
			slices.Sort(it)
			h := rng.IntN(len(it))
			d.Test[u] = []int32{it[h]}
			d.Train[u] = slices.Delete(it, h, h+1)
		}
		_, deg := d.Degrees()
		for i, g := range deg { // no isolated items
			if g == 0 {
				u := rng.IntN(users)
				d.Test[u] = slices.DeleteFunc(d.Test[u], func(x int32) bool { return x == int32(i) })
				d.Train[u] = append(d.Train[u], int32(i))
				slices.Sort(d.Train[u])
			}
		}
		vec, lam, err := lpsfed.DenseLowPass(d.Users, d.Items, d.Train, phi)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec.PreparedClient{ID: fmt.Sprintf("shop-%d", c), Prepared: rec.Prepared{Data: d, Vectors: vec, Kernel: lowPassKernel(t, lam)}})
	}
	return out
}

// lowPassKernel is Eq. 16 with the package's treatment of zero eigenvalues.
func lowPassKernel(t *testing.T, lam []float64) []float64 {
	k, err := lpsfed.Kernel(lam)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// denseReference draws a uniform random bipartite graph with the given
// counts and returns its kernel: a dense stand-in for the GNMK reference.
func denseReference(s aggregator.ReferenceStats, phi int, seed uint64) ([]float64, error) {
	rng := rand.New(rand.NewPCG(seed, 5))
	train := make([][]int32, s.Users)
	for range s.Edges {
		u := rng.IntN(s.Users)
		train[u] = append(train[u], int32(rng.IntN(s.Items)))
	}
	for u := range train {
		slices.Sort(train[u])
		train[u] = slices.Compact(train[u])
	}
	_, lam, err := lpsfed.DenseLowPass(s.Users, s.Items, train, phi)
	if err != nil {
		return nil, err
	}
	return lpsfed.Kernel(lam)
}

// TestLPSFedSimTapped runs each algorithm on tiny clients with a tap on
// gf.<job>.> and checks what went over the wire: only the MLPs (exactly
// NumShared values), at most one ρ_c and one M^c per update, K^R in the
// round payload, personalized models back; every release logged before
// it was published; nothing the size of an embedding table.
func TestLPSFedSimTapped(t *testing.T) {
	const phi = 8
	clients := tinyLPSFedClients(t, 3, phi)
	for _, algo := range []string{aggregator.AlgoFedAvg, aggregator.AlgoLPSFedBPR, aggregator.AlgoLPSFed} {
		t.Run(algo, func(t *testing.T) {
			srv, err := bus.StartServer(bus.ServerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Shutdown)
			job := "tap-" + algo
			tp := startTap(t, srv.ClientURL(), job)
			mc := lpsfed.DefaultConfig()
			mc.Dim, mc.BatchSize, mc.LR = 8, 64, 0.01
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			const rounds = 3
			learners, ids, err := RecLearners(clients, algo, deploy.RecOptions{Model: mc}, 1, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			res, err := RunSim(ctx, SimConfig{Job: job, Task: deploy.TaskRec, Algo: algo, Learners: learners, IDs: ids, SecAgg: SecAggOff,
				Rounds: rounds, LocalEpochs: 2, EvalEvery: -1, FreezeRounds: 1,
				LPSFed:       aggregator.LPSFedConfig{Phi: phi, Reference: denseReference, Seed: 1},
				RoundTimeout: 20 * time.Second, FinalWait: 20 * time.Second, Seed: 1, NATSURL: srv.ClientURL(), Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond) // let the tap drain
			if res.Agg.Rounds != rounds || len(res.Agg.Final) != len(clients) {
				t.Fatalf("%d rounds, %d final reports", res.Agg.Rounds, len(res.Agg.Final))
			}
			for id, sc := range res.Agg.Final {
				if r, n := sc["recall_at_20"], sc["ndcg_at_20"]; !(r >= 0 && r <= 1 && n >= 0 && n <= 1) || sc["eval_users"] == 0 {
					t.Fatalf("%s: final scores %v", id, sc)
				}
			}
			m, err := lpsfed.NewModel(clients[0].Data, clients[0].Vectors, mc)
			if err != nil {
				t.Fatal(err)
			}
			checkLPSFedWire(t, job, algo, m.NumShared(), phi, clients, tp.snapshot())
		})
	}
}

func checkLPSFedWire(t *testing.T, job, algo string, numShared, phi int, clients []rec.PreparedClient, msgs []bus.Msg) {
	t.Helper()
	// The largest thing allowed on the wire is the MLP vector with its
	// envelope; a client's embedding table is far larger.
	limit := 4*numShared + 512
	for _, c := range clients {
		if emb := 4 * c.Data.Nodes() * 8; emb <= limit {
			t.Fatalf("test is blind: embedding table of %d bytes under the %d-byte limit", emb, limit)
		}
	}
	logged := map[string]int{} // client/round/channel → ledger entries so far
	var updates, models, opens int
	for i, m := range msgs {
		ps, err := bus.ParseSubject(m.Subject)
		if err != nil {
			t.Fatalf("message %d on unreadable subject %q", i, m.Subject)
		}
		if ps.Kind == "ledger" {
			// Ledger entries are published on their own subject as they are
			// stored: count them by client, round and channel in wire order.
			var e privacy.Entry
			if err := json.Unmarshal(m.Data, &e); err != nil {
				t.Fatalf("ledger message %d: %v", i, err)
			}
			logged[fmt.Sprintf("%s/%d/%s", e.Client, e.Round, e.Channel)]++
			continue
		}
		if len(m.Data) > limit {
			t.Fatalf("message %d on %s has %d bytes, over %d", i, m.Subject, len(m.Data), limit)
		}
		env, err := bus.Open(m.Data)
		if err != nil {
			t.Fatalf("message %d on %s: %v", i, m.Subject, err)
		}
		switch ps.Kind {
		case bus.KindUpdate:
			var u bus.Update
			if err := env.UnmarshalBody(&u); err != nil {
				t.Fatal(err)
			}
			updates++
			if u.Params.Len() != numShared || u.Grad.Len() != 0 {
				t.Fatalf("update of %s carries %d params and %d grads, want %d and 0", env.From, u.Params.Len(), u.Grad.Len(), numShared)
			}
			wantRho, wantMargin := algo != aggregator.AlgoFedAvg && u.Round == 1, algo == aggregator.AlgoLPSFed
			if (u.Rho.Len() == 1) != wantRho || u.Rho.Len() > 1 || (u.Margin.Len() == 1) != wantMargin || u.Margin.Len() > 1 {
				t.Fatalf("%s round %d: %d rho and %d margin values under %s", env.From, u.Round, u.Rho.Len(), u.Margin.Len(), algo)
			}
			need := map[privacy.Channel]int{privacy.ChannelModel: 1, privacy.ChannelMargin: u.Rho.Len() + u.Margin.Len()}
			for ch, n := range need {
				if got := logged[fmt.Sprintf("%s/%d/%s", env.From, u.Round, ch)]; got != n {
					t.Fatalf("update of %s round %d on the wire after %d %s ledger entries, want %d", env.From, u.Round, got, ch, n)
				}
			}
		case bus.KindModel:
			var pm bus.Model
			if err := env.UnmarshalBody(&pm); err != nil {
				t.Fatal(err)
			}
			models++
			// FedAvg sends one model to every client, LPSFed one to each.
			if len(pm.Params) != numShared || (ps.From == "all") != (algo == aggregator.AlgoFedAvg) || pm.HasMargin != (algo == aggregator.AlgoLPSFed) {
				t.Fatalf("model on %s: %d params, margin %v", m.Subject, len(pm.Params), pm.HasMargin)
			}
		case bus.KindRound:
			var ro bus.RoundOpen
			if err := env.UnmarshalBody(&ro); err != nil {
				t.Fatal(err)
			}
			opens++
			if algo == aggregator.AlgoFedAvg {
				if len(ro.Payload) != 0 {
					t.Fatal("fedavg round carries a payload")
				}
				break
			}
			var lr bus.LPSFedRound
			if err := msgpack.Unmarshal(ro.Payload, &lr); err != nil || len(lr.Kernel) != phi || lr.Version != 1 {
				t.Fatalf("round %d payload: %v, kernel of %d (version %d)", ro.Round, err, len(lr.Kernel), lr.Version)
			}
		}
	}
	wantModels := 2 * len(clients)
	if algo == aggregator.AlgoFedAvg {
		wantModels = 2
	}
	if updates != 3*len(clients) || opens != 3 || models != wantModels {
		t.Fatalf("%d updates, %d round opens, %d models; want %d, 3, %d (round 1 frozen)", updates, opens, models, 3*len(clients), wantModels)
	}
}
