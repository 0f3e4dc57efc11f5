package job

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/graph"
	"graphfed/runreport"
)

// TestRunNodeRoundScoresComplete: a client's per-round scores travel apart
// from its update and may reach the aggregator after the round closed, so
// rounds.csv takes each round's score from every score the aggregator
// holds at the job's end: the mean over all clients that reported for the
// round, never over those that had arrived by its close (to the four
// decimals rounds.csv keeps).
func TestRunNodeRoundScoresComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job on an embedded server")
	}
	csbm := graph.DefaultCSBM()
	csbm.Nodes = 300
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := RunNode(ctx, NodeSpec{Sim: SimConfig{Rounds: 4, Log: zerolog.Nop()}, Out: dir,
		Data: NodeData{Scenario: "csbm", CSBM: csbm, Clients: 4}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := runreport.Load(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Rounds) != 4 {
		t.Fatalf("%d rounds in rounds.csv, want 4", len(run.Rounds))
	}
	for _, r := range run.Rounds {
		per := res.Sim.Agg.PerRound[r.Round]
		if len(per) != 4 {
			t.Fatalf("round %d: %d clients' scores held at the end, want all 4", r.Round, len(per))
		}
		if want := meanOf(per, nodeScore); math.Abs(r.Score-want) > 5e-5 {
			t.Errorf("round %d: score %v in rounds.csv, want the mean of all 4 clients' %v", r.Round, r.Score, want)
		}
	}
}
