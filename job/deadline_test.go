package job

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/aggregator"
	"graphfed/deploy"
	"graphfed/learner"
)

// Banks whose local work takes three times the configured round timeout,
// on a real (embedded) NATS server: with adaptive deadlines every round
// waits for them and closes with every bank in; with fixed ones the rounds
// close empty (the control, which shows the test can fail).
func TestAdaptiveDeadlineFitsSlowTraining(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two jobs on an embedded NATS server")
	}
	const (
		banks  = 3
		rounds = 4
		floor  = 100 * time.Millisecond
		step   = 150 * time.Millisecond // two local steps: 300 ms a round
	)
	run := func(t *testing.T, factor float64) ([]aggregator.RoundClosed, aggregator.Result) {
		learners := make([]learner.Learner, banks)
		for i := range learners {
			learners[i] = &paceLearner{target: []float32{float32(i), 1}, step: step}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var closes []aggregator.RoundClosed
		res, err := RunSim(ctx, SimConfig{
			Job: "deadline", Algo: aggregator.AlgoFedAvg, Learners: learners, Rounds: rounds, LocalEpochs: 2,
			RoundTimeout: floor, DeadlineFactor: factor, DeadlineCap: time.Minute, FinalWait: 3 * time.Second, Seed: 1,
			Log:     zerolog.Nop(),
			OnRound: func(rc aggregator.RoundClosed, _ map[string]map[string]float64) { closes = append(closes, rc) },
		})
		if err != nil {
			t.Fatal(err)
		}
		return closes, res.Agg
	}
	t.Run("adaptive", func(t *testing.T) {
		closes, res := run(t, 3)
		if len(closes) != rounds {
			t.Fatalf("%d rounds closed, want %d", len(closes), rounds)
		}
		all := []string{deploy.ClientID(0), deploy.ClientID(1), deploy.ClientID(2)}
		for _, rc := range closes {
			if rc.Reason != "quorum" || !slices.Equal(rc.In, all) {
				t.Errorf("round %d closed by %s with %v in (late %v), want every bank in by quorum", rc.Round, rc.Reason, rc.In, rc.Late)
			}
			if rc.Budget < floor {
				t.Errorf("round %d budget %v below the floor", rc.Round, rc.Budget)
			}
		}
		if closes[0].Extensions == 0 {
			t.Errorf("round 1, with nothing measured, was never extended: %+v", closes[0])
		}
		reasons := map[string]int{}
		for _, d := range res.Deadlines {
			reasons[d.Reason]++
			if d.Median > 0 && d.Median < 2*step {
				t.Errorf("round %d: median update time %v, but a round's work takes at least %v", d.Round, d.Median, 2*step)
			}
		}
		if reasons[aggregator.AdaptEmpty] == 0 || reasons[aggregator.AdaptMeasured] == 0 {
			t.Fatalf("adaptations %v: want both empty-round extensions and measured budgets", res.Deadlines)
		}
	})
	t.Run("fixed deadline control", func(t *testing.T) {
		closes, _ := run(t, 0)
		if len(closes) == 0 || closes[0].Reason != "deadline" || len(closes[0].In) != 0 {
			t.Fatalf("with a fixed %v deadline round 1 should close empty: %+v", floor, closes)
		}
	})
}
