package job

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/graph"
)

// TestRunNodeFromAlmostZeroSpec: a node job that names only its data and
// a short run takes every other setting from the library (fedavg, the
// gates' default noise under RDP, local epochs, partition and split), and
// its summary says what ran.
func TestRunNodeFromAlmostZeroSpec(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job on an embedded server")
	}
	csbm := graph.DefaultCSBM()
	csbm.Nodes = 300
	for _, algo := range []string{"", "cefedgnn"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := RunNode(ctx, NodeSpec{Sim: SimConfig{Algo: algo, Rounds: 2, Log: zerolog.Nop()},
			Data: NodeData{Scenario: "csbm", CSBM: csbm, Clients: 3}})
		cancel()
		if err != nil {
			t.Fatalf("algo %q: %v", algo, err)
		}
		s := res.Summary
		want := algo
		if want == "" {
			want = "fedavg"
		}
		if s.Algo != want || s.Clients != 3 || s.Rounds != 2 || s.Seed != 1 || s.Metrics["partition"] != DefaultNodePartition {
			t.Errorf("algo %q: summary %s/%d clients/%d rounds/seed %d/partition %v", algo, s.Algo, s.Clients, s.Rounds, s.Seed, s.Metrics["partition"])
		}
		if s.Privacy["accountant"] != "rdp" || s.Privacy["seeded_noise"] != false {
			t.Errorf("algo %q: privacy %v, want rdp with noise from crypto/rand (no seed given)", algo, s.Privacy)
		}
		if n, _ := s.Metrics["clients_reporting"].(int); n != 3 {
			t.Errorf("algo %q: %v clients reporting, want 3", algo, s.Metrics["clients_reporting"])
		}
	}
}
