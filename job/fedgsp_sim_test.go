package job

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/fedgsp"
	"graphfed/graph"
	"graphfed/learner"
	"graphfed/privacy"
)

// fedgspClients are three METIS clients of a small heterophilous CSBM
// graph, and FedGSP learners on them in a configuration small enough for
// make test.
func fedgspClients(t *testing.T) ([]*graph.ClientGraph, []learner.Learner, []string, fedgsp.Config) {
	t.Helper()
	gc := graph.DefaultCSBM()
	gc.Nodes, gc.Classes, gc.Features, gc.Homophily = 600, 3, 48, 0.2
	d, err := graph.GenerateCSBM(gc, rand.New(rand.NewPCG(11, 12)))
	if err != nil {
		t.Fatal(err)
	}
	owner, err := graph.PartitionMetis(d.Adj, 3, graph.MetisOptions{}, rand.New(rand.NewPCG(13, 14)))
	if err != nil {
		t.Fatal(err)
	}
	clients, err := graph.SplitByOwner(d, owner, 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fedgsp.HeterophilicConfig()
	cfg.Orders, cfg.Hidden, cfg.Layers, cfg.Principal = 3, 32, 2, 2
	var ls []learner.Learner
	var ids []string
	for i, cg := range clients {
		c := cfg
		c.Seed = uint64(i + 1)
		l, err := fedgsp.NewLearner(cg.Data, c)
		if err != nil {
			t.Fatal(err)
		}
		ls, ids = append(ls, l), append(ids, deploy.ClientID(i))
	}
	return clients, ls, ids, cfg
}

// TestFedGSPSimTapped runs FedGSP on the embedded server with a tap on
// gf.<job>.> and checks what left the clients: model parameters of the
// job's length every round, the descriptors exactly once per client and
// only after their ledger entry, one personalised model per client back,
// no embeddings, gradients or scalars; and no raw feature row, no basis
// and nothing the size of a client's feature matrix.
func TestFedGSPSimTapped(t *testing.T) {
	clients, learners, ids, cfg := fedgspClients(t)
	numParams := learners[0].NumParams()
	srv, err := bus.StartServer(bus.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	const job, rounds = "tap-fedgsp", 4
	tp := startTap(t, srv.ClientURL(), job)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := RunSim(ctx, SimConfig{Job: job, Algo: aggregator.AlgoFedGSP, Learners: learners, IDs: ids,
		Rounds: rounds, LocalEpochs: 1, RoundTimeout: 30 * time.Second, FinalWait: 20 * time.Second, Seed: 1,
		FedGSP:  aggregator.FedGSPConfig{Gamma: 4, Alpha: 0.25, Beta: 1.2, GraphRounds: 3},
		NATSURL: srv.ClientURL(), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // let the tap drain
	if res.Agg.Rounds != rounds || len(res.Agg.Final) != len(ids) {
		t.Fatalf("%d rounds, %d final reports", res.Agg.Rounds, len(res.Agg.Final))
	}
	for id, sc := range res.Agg.Final {
		if v := sc["test_at_best_val"]; !(v > 0 && v <= 1) {
			t.Fatalf("%s: final scores %v", id, sc)
		}
	}

	// Raw data a client holds: every feature row's bytes, in windows of
	// four values, and the size of its feature matrix.
	smallest := math.MaxInt
	raw := map[string]bool{}
	for _, cg := range clients {
		f := cg.Data.Features
		smallest = min(smallest, 4*f.Rows*f.Cols)
		for r := 0; r < f.Rows; r++ {
			row := f.Val[f.RowPtr[r]:f.RowPtr[r+1]]
			for k := 0; k+4 <= len(row); k += 4 {
				raw[string(floatBytes(row[k:k+4]))] = true
			}
		}
	}
	if len(raw) < 100 {
		t.Fatalf("test is blind: %d raw feature windows to look for", len(raw))
	}
	descLen := 4 * cfg.Orders * cfg.Principal * clients[0].Data.NumFeatures()
	// The largest message allowed is the first update: the model and the
	// descriptors with their envelope.
	limit := 4*(numParams+descLen) + 1024
	if limit >= smallest {
		t.Fatalf("test is blind: messages of %d bytes allowed, a feature matrix has %d", limit, smallest)
	}

	logged := map[string]int{}
	desc := map[string]int{}
	personal := map[string]int{}
	for i, m := range tp.snapshot() {
		ps, err := bus.ParseSubject(m.Subject)
		if err != nil {
			t.Fatalf("message %d on unreadable subject %q", i, m.Subject)
		}
		if ps.Kind == "ledger" {
			var e privacy.Entry
			if err := json.Unmarshal(m.Data, &e); err != nil {
				t.Fatalf("ledger message %d: %v", i, err)
			}
			logged[fmt.Sprintf("%s/%s", e.Client, e.Channel)]++
			continue
		}
		if len(m.Data) > limit {
			t.Fatalf("message %d on %s has %d bytes: more than a model and the descriptors", i, m.Subject, len(m.Data))
		}
		for k := 0; k+16 <= len(m.Data); k++ {
			if raw[string(m.Data[k:k+16])] {
				t.Fatalf("message %d on %s carries a raw feature row at byte %d", i, m.Subject, k)
			}
		}
		env, err := bus.Open(m.Data)
		if err != nil {
			t.Fatalf("message %d on %s: %v", i, m.Subject, err)
		}
		switch ps.Kind {
		case bus.KindEmb:
			t.Fatalf("FedGSP sent boundary embeddings on %s", m.Subject)
		case bus.KindUpdate:
			var u bus.Update
			if err := env.UnmarshalBody(&u); err != nil {
				t.Fatal(err)
			}
			if u.Params.Len() != numParams || u.Grad.Len() != 0 || u.Rho.Len() != 0 || u.Margin.Len() != 0 {
				t.Fatalf("update of %s round %d: %d params (want %d), %d grad, %d rho, %d margin",
					env.From, u.Round, u.Params.Len(), numParams, u.Grad.Len(), u.Rho.Len(), u.Margin.Len())
			}
			if logged[env.From+"/"+string(privacy.ChannelModel)] == 0 {
				t.Fatalf("update of %s round %d on the wire before any model ledger entry", env.From, u.Round)
			}
			if u.Descriptors.Len() > 0 {
				desc[env.From]++
				if u.Descriptors.Len() != descLen || u.DescOrders != cfg.Orders || u.DescPrincipal != cfg.Principal {
					t.Fatalf("descriptors of %s: %d values K=%d kpr=%d, want %d K=%d kpr=%d", env.From, u.Descriptors.Len(),
						u.DescOrders, u.DescPrincipal, descLen, cfg.Orders, cfg.Principal)
				}
				if logged[env.From+"/"+string(privacy.ChannelDescriptor)] != 1 {
					t.Fatalf("descriptors of %s on the wire after %d descriptor ledger entries, want 1", env.From,
						logged[env.From+"/"+string(privacy.ChannelDescriptor)])
				}
			}
		case bus.KindModel:
			to := ps.To
			if to == "" {
				to = ps.From
			}
			if to == "all" || to == "" {
				t.Fatalf("FedGSP published a global model on %s; each client gets its own", m.Subject)
			}
			personal[to]++
		}
	}
	for _, id := range ids {
		if desc[id] != 1 {
			t.Errorf("%s sent its descriptors %d times, want once", id, desc[id])
		}
		if personal[id] < rounds {
			t.Errorf("%s received %d personalised models in %d rounds", id, personal[id], rounds)
		}
	}
}

// TestFedGSPDescriptorsInAudit checks the audit of a FedGSP run lists one
// descriptor release per client, with its stated sensitivity.
func TestFedGSPDescriptorsInAudit(t *testing.T) {
	_, learners, ids, cfg := fedgspClients(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := RunSim(ctx, SimConfig{Job: "audit-fedgsp", Algo: aggregator.AlgoFedGSP, Learners: learners, IDs: ids,
		Rounds: 2, LocalEpochs: 1, RoundTimeout: 30 * time.Second, FinalWait: 20 * time.Second, Seed: 1, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := privacy.Audit(res.Ledger, privacy.AuditOptions{Delta: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	rows := 4 * cfg.Orders * cfg.Principal
	for _, d := range rep.Descriptors {
		seen[d.Client]++
		if want := 2 * math.Sqrt(float64(rows)); math.Abs(d.Sensitivity-want) > 1e-9 || d.Rows != rows {
			t.Errorf("%s: descriptor release of %d rows at sensitivity %v, want %d rows at %v", d.Client, d.Rows, d.Sensitivity, rows, want)
		}
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("audit lists %d descriptor releases of %s, want 1", seen[id], id)
		}
	}
}

func floatBytes(v []float32) []byte {
	var b bytes.Buffer
	for _, x := range v {
		var w [4]byte
		binary.LittleEndian.PutUint32(w[:], math.Float32bits(x))
		b.Write(w[:])
	}
	return b.Bytes()
}
