package scenarios

import (
	"context"
	"slices"
	"time"

	"graphfed/deploy"
	"graphfed/job"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/learner"
	"graphfed/seeds"
)

// slowBankScenario runs a real job (RunSim: embedded NATS, the aggregator's
// server, one agent per bank, JetStream ledgers) in which one bank is five
// times slower than the others: every bank waits 20ms a round, the slow one
// 100ms. With a quorum of the fast banks every round must close at quorum
// or deadline, the slow bank must be left out (late) of some round rather
// than holding it up, and the job must finish.
func slowBankScenario() Scenario {
	const name = "slow-bank"
	return Scenario{
		Name: name,
		Doc:  "a real job over embedded NATS with one bank 5x slower: rounds close at quorum or deadline, the job finishes",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			const (
				banks  = 4
				slow   = banks - 1
				rounds = 6
				pace   = 20 * time.Millisecond
			)
			learners := make([]learner.Learner, banks)
			slowdown := map[int]time.Duration{}
			for i := range learners {
				l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: o.Seed, DataSeed: seeds.Party(o.Seed, i, seeds.Sampler)})
				if err != nil {
					return Outcome{}, err
				}
				learners[i] = l
				slowdown[i] = pace
			}
			slowdown[slow] = 5 * pace
			rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			res, err := job.RunSim(rctx, job.SimConfig{
				Job:          name,
				Algo:         aggregator.AlgoFedAvg,
				Learners:     learners,
				Rounds:       rounds,
				LocalEpochs:  1,
				RoundTimeout: 10 * time.Second,
				Quorum:       banks - 1,
				Staleness:    aggregator.Staleness{Policy: aggregator.StalePolynomial, A: 0.5},
				Seed:         o.Seed,
				Slowdown:     slowdown,
				Log:          o.Log,
			})
			if err != nil {
				return fail(name, InvNoProgress, "the job did not finish: %v", err), nil
			}
			return judgeSlowBank(name, res, rounds, deploy.ClientID(slow)), nil
		},
	}
}

// judgeSlowBank checks a slow-bank job's close decisions.
func judgeSlowBank(name string, res job.SimResult, rounds int, slowID string) Outcome {
	closes := res.Agg.Closes
	if len(closes) != rounds {
		return fail(name, InvNoProgress, "%d of %d rounds closed", len(closes), rounds)
	}
	left := 0
	reasons := map[string]int{}
	for _, rc := range closes {
		reasons[rc.Reason]++
		if rc.Reason != "quorum" && rc.Reason != "deadline" {
			return fail(name, InvRoundOpen, "round %d closed by %q, want quorum or deadline", rc.Round, rc.Reason)
		}
		if slices.Contains(rc.Late, slowID) {
			left++
		}
	}
	if left == 0 {
		return fail(name, InvRoundOpen, "the 5x slower %s made every round: closes %v", slowID, reasons)
	}
	out := Outcome{Name: name, Metrics: map[string]float64{
		"rounds": float64(len(closes)), "slow_bank_late": float64(left), "messages": float64(res.Messages),
		"stale_folded": float64(countStale(closes, slowID)), "dropped_late": float64(res.Agg.Dropped["late"]),
	}}
	for r, n := range reasons {
		out.Metrics["closed_"+r] = float64(n)
	}
	if len(res.Agg.Model) == 0 {
		return fail(name, InvNoProgress, "no global model after %d rounds", len(closes))
	}
	return out
}

func countStale(closes []aggregator.RoundClosed, id string) int {
	n := 0
	for _, rc := range closes {
		if slices.Contains(rc.Stale, id) {
			n++
		}
	}
	return n
}
