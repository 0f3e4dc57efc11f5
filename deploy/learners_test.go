package deploy

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/aml/bank"
	"graphfed/aml/worldgen"
	"graphfed/fedgsp"
	"graphfed/graph"
	"graphfed/learner"
	"graphfed/learner/node"
	"graphfed/lpsfed"
	"graphfed/seeds"
	"graphfed/workload/rec"
)

// amlBankDirs generates a small three-bank world and writes one directory
// per bank, as `graphfed gen aml` and `graphfed split aml` do.
func amlBankDirs(t *testing.T) (string, []bank.Files) {
	t.Helper()
	cfg, err := worldgen.Preset(worldgen.Tiny, worldgen.HI, 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Banks, cfg.Transactions = 3, 20_000
	dir := t.TempDir()
	sum, err := worldgen.Generate(cfg, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "banks")
	ws, err := bank.Write(bank.SplitOptions{Trans: sum.TransPath, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	return out, ws.Banks
}

// recClientDirs writes a small recommendation world split into clients,
// as `graphfed split rec` does.
func recClientDirs(t *testing.T, clients int) string {
	t.Helper()
	w, err := recWorld()
	if err != nil {
		t.Fatal(err)
	}
	cs, _, err := rec.Split(w, rec.SplitOptions{Clients: clients, Partition: rec.PartitionSpectral, EdgeVariation: 0.2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := rec.WriteClients(out, cs); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestBuildLearner(t *testing.T) {
	banks, files := amlBankDirs(t)
	recDir := recClientDirs(t, 2)
	nodeDir := filepath.Join("..", "graph", "testdata", "tsv", "tiny")
	bf := files[0]
	bankDir := filepath.Join(banks, bank.ClientID(bf.Bank))
	small := DefaultLearnerOptions()
	small.Rec.Phi = 8
	for _, tc := range []struct {
		name, task, algo, dir string
		want                  string // substring of the error; empty: built
		id                    string // client id the data names
	}{
		{"aml cefedgnn", TaskAML, aggregator.AlgoCEFedGNN, bankDir, "", bank.ClientID(bf.Bank)},
		{"aml fedgnn-st", TaskAML, aggregator.AlgoFedGNNST, bankDir, "", bank.ClientID(bf.Bank)},
		{"aml fedavg", TaskAML, aggregator.AlgoFedAvg, bankDir, "", bank.ClientID(bf.Bank)},
		{"aml from a node directory", TaskAML, aggregator.AlgoCEFedGNN, nodeDir, "split.json", ""},
		{"node fedavg", TaskNode, aggregator.AlgoFedAvg, nodeDir, "", ""},
		{"node local", TaskNode, aggregator.AlgoLocal, nodeDir, "", ""},
		{"node fedprox", TaskNode, aggregator.AlgoFedProx, nodeDir, "", ""},
		{"node fedper", TaskNode, aggregator.AlgoFedPer, nodeDir, "", ""},
		{"node fedgsp", TaskNode, aggregator.AlgoFedGSP, nodeDir, "", ""},
		{"aml fedgsp refused", TaskAML, aggregator.AlgoFedGSP, bankDir, `task aml has no algorithm "fedgsp"`, ""},
		{"node cefedgnn refused", TaskNode, aggregator.AlgoCEFedGNN, nodeDir, "records no cross-client edges", ""},
		{"node fedgnn-st refused", TaskNode, aggregator.AlgoFedGNNST, nodeDir, "records no cross-client edges", ""},
		{"rec lpsfed", TaskRec, aggregator.AlgoLPSFed, filepath.Join(recDir, "client-0"), "", ""},
		{"rec lpsfed-bpr", TaskRec, aggregator.AlgoLPSFedBPR, filepath.Join(recDir, "client-1"), "", ""},
		{"rec fedavg", TaskRec, aggregator.AlgoFedAvg, filepath.Join(recDir, "client-1"), "", ""},
		{"rec from a bank directory", TaskRec, aggregator.AlgoLPSFed, bankDir, "train.txt", ""},
		{"task without the algorithm", TaskRec, aggregator.AlgoCEFedGNN, recDir, `task rec has no algorithm "cefedgnn"`, ""},
		{"unknown task", "graph", aggregator.AlgoFedAvg, nodeDir, `unknown task "graph"`, ""},
		{"no directory", TaskNode, aggregator.AlgoFedAvg, "", "no data directory", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := small
			o.Dir = tc.dir
			l, err := BuildLearner(tc.task, tc.algo, Data{Dir: o.Dir}, o, Party{ID: "c", Seed: o.Seed}, zerolog.Nop())
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.ID != tc.id || l.Learner == nil || l.Learner.NumParams() == 0 || l.Learner.TrainSize() == 0 {
				t.Fatalf("learner %T id %q (want %q), %d params, %d training examples", l.Learner, l.ID, tc.id,
					l.Learner.NumParams(), l.Learner.TrainSize())
			}
			// The learner trains with what the algorithm needs: an AML
			// bank exchanges with the banks its rows name; an LPSFed
			// client has the algorithm's loss.
			switch lr := l.Learner.(type) {
			case *fedgsp.Learner:
				if _, ok := l.Learner.(learner.DescriptorReleaser); !ok || tc.algo != aggregator.AlgoFedGSP {
					t.Fatalf("FedGSP learner for %s, or one that releases no descriptors", tc.algo)
				}
			case *node.Learner:
				if tc.algo == aggregator.AlgoFedGSP {
					t.Fatal("fedgsp built a GCN learner")
				}
			case *lpsfed.Learner:
				if err := lr.SetAlgo(tc.algo); err != nil {
					t.Fatalf("learner built for %s refuses it: %v", tc.algo, err)
				}
			case learner.ExchangeScheduler: // an AML bank, counting what it receives
				if got := lr.Neighbours(); len(got) != 2 || slices.Contains(got, tc.id) {
					t.Fatalf("bank %s exchanges with %v, want the two other banks", tc.id, got)
				}
				if l.Counters == nil || l.Counters()["emb_received_messages"] != 0 {
					t.Fatalf("bank %s counts no received embeddings, or counts some before any arrived", tc.id)
				}
			}
		})
	}
}

// A bank directory is one bank's: the agent takes its id from it, and
// refuses to run as another client.
func TestNewAgentAMLClientID(t *testing.T) {
	banks, files := amlBankDirs(t)
	dir := filepath.Join(banks, bank.ClientID(files[1].Bank))
	o := AgentOptions{Job: testJob, Task: TaskAML, Algo: aggregator.AlgoCEFedGNN, Privacy: DefaultPrivacy(),
		Data: DefaultLearnerOptions(), Conn: ConnOptions{URL: "nats://127.0.0.1:1"}, Log: zerolog.Nop()}
	o.Data.Dir = dir
	if err := o.Validate(); err != nil {
		t.Fatalf("an aml agent without an id refused: %v", err)
	}
	o.ID = bank.ClientID(files[0].Bank)
	_, err := NewAgent(context.Background(), o)
	if want := "holds the data of " + bank.ClientID(files[1].Bank); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
	node := o
	node.Task, node.Algo, node.ID = TaskNode, aggregator.AlgoFedAvg, ""
	if err := node.Validate(); err == nil || !strings.Contains(err.Error(), `agent id ""`) {
		t.Fatalf("a node agent without an id: error %v", err)
	}
}

// TestDeployRecJob runs LPSFed end to end with every party built by deploy
// from options: the aggregator with its reference, each client from its
// LightGCN directory.
func TestDeployRecJob(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const clients, rounds, phi = 2, 3, 8
	dir := recClientDirs(t, clients)
	ids := []string{rec.ClientID(0), rec.ClientID(1)}
	l, err := StartLocal(ctx, LocalOptions{Job: testJob, Banks: ids, Secure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	round := aggregator.Config{Algo: aggregator.AlgoLPSFed, Rounds: rounds, MinClients: clients, RoundTimeout: time.Minute,
		FreezeRounds: 1, LPSFed: aggregator.LPSFedConfig{Phi: phi, Seed: 1}}
	agg, err := NewAggregator(ctx, l.AggregatorOptions(AggregatorOptions{Job: testJob, Task: TaskRec, Round: round,
		InitSeed: 1, FinalWait: 20 * time.Second, Log: zerolog.Nop()}))
	if err != nil {
		t.Fatal(err)
	}
	defer agg.Close()
	agents := make([]*Agent, clients)
	for i, id := range ids {
		lo := DefaultLearnerOptions()
		lo.Dir, lo.Seed, lo.Rec.Phi = filepath.Join(dir, id), uint64(i+1), phi
		lo.Rec.Model.LR, lo.Rec.Model.BatchSize = 5e-3, 256
		p := DefaultPrivacy()
		seed := seeds.Party(1, i, seeds.Noise)
		p.NoiseSeed = &seed
		if agents[i], err = NewAgent(ctx, l.AgentOptions(AgentOptions{Job: testJob, ID: id, Task: TaskRec,
			Algo: aggregator.AlgoLPSFed, Privacy: p, Data: lo, EvalEvery: -1, HelloRetry: 200 * time.Millisecond,
			Log: zerolog.Nop()})); err != nil {
			t.Fatal(err)
		}
		defer agents[i].Close()
	}
	run, err := RunParties(ctx, agg, agents)
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, run, ids, rounds)
	for _, id := range ids {
		sc := run.Aggregator.Final[id]
		if _, ok := sc["recall_at_20"]; !ok {
			t.Fatalf("%s: final scores %v have no recall", id, sc)
		}
	}
	mixed := 0
	for _, c := range run.Aggregator.Closes {
		if c.Mix != nil && len(c.Mix.RhoBar) == clients {
			mixed++
		}
	}
	if mixed == 0 {
		t.Fatal("no round mixed personalized models: the clients' ρ never reached the aggregator")
	}
	led, err := l.LedgerEntries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(led) == 0 {
		t.Fatal("empty ledger")
	}
}

// recWorld is a user–item world with four communities: 160 users, 96
// items, a user drawing 8 of its block's 24 items, 2 of them held out.
func recWorld() (*graph.Interactions, error) {
	const users, items, blocks, deg, held = 160, 96, 4, 8, 2
	rng := rand.New(rand.NewPCG(7, 7))
	train := &graph.CSR{Rows: users, Cols: items, RowPtr: make([]int, users+1)}
	test := &graph.CSR{Rows: users, Cols: items, RowPtr: make([]int, users+1)}
	block := items / blocks
	for u := range users {
		lo := (u % blocks) * block
		pick := rng.Perm(block)[:deg]
		row := make([]int32, deg)
		for k, j := range pick {
			row[k] = int32(lo + j)
		}
		tr, te := row[:deg-held], row[deg-held:]
		slices.Sort(tr)
		slices.Sort(te)
		train.ColIdx = append(train.ColIdx, tr...)
		train.RowPtr[u+1] = len(train.ColIdx)
		test.ColIdx = append(test.ColIdx, te...)
		test.RowPtr[u+1] = len(test.ColIdx)
	}
	d := &graph.Interactions{Name: "world", Users: users, Items: items, Train: train, Test: test}
	return d, d.Validate()
}

func TestDefaultLocalEpochs(t *testing.T) {
	for _, tt := range []struct {
		algo     string
		fallback int
		want     int
	}{
		{aggregator.AlgoFedGSP, 5, FedGSPLocalEpochs},
		{aggregator.AlgoFedAvg, 5, 5},
		{aggregator.AlgoCEFedGNN, 32, 32},
	} {
		if got := DefaultLocalEpochs(tt.algo, tt.fallback); got != tt.want {
			t.Errorf("DefaultLocalEpochs(%q, %d) = %d, want %d", tt.algo, tt.fallback, got, tt.want)
		}
	}
}

func TestTSVAlgorithmsExchangeNoEmbeddings(t *testing.T) {
	got := TSVAlgorithms()
	for _, algo := range Algorithms(TaskNode) {
		if want := !ExchangesEmbeddings(algo); slices.Contains(got, algo) != want {
			t.Errorf("TSVAlgorithms() = %v: %s listed %v, want %v", got, algo, !want, want)
		}
	}
}
