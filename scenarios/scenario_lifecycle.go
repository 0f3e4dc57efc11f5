package scenarios

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/bus"
	"graphfed/deploy"
)

// lifecycleScenarios are the safe-by-default and clean-shutdown checks of
// issue 14 (the rig is scenario_lifecycle_rig.go).
func lifecycleScenarios() []Scenario {
	return []Scenario{sigintAggregatorScenario(), replayedHelloScenario(), replayedDoneScenario()}
}

// sigintAggregatorScenario stops the aggregator after round 2 the way the
// CLI does on SIGINT: it must return its result so far with the reason,
// having told the agents, and every agent must leave within 5 s with the
// aggregator's reason. The job is then resumed (--resume) and must finish.
func sigintAggregatorScenario() Scenario {
	const name = "sigint-aggregator"
	return Scenario{
		Name: name,
		Doc:  "SIGINT on the aggregator (secure server): its report so far, agents told and gone within 5 s; --resume then finishes the job",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			r, err := startLifeRig(ctx, "life-sigint", o)
			if err != nil {
				return Outcome{}, lifeErr(name, err)
			}
			defer r.close()
			first, err := r.run(ctx, runOpts{stopAfter: 2})
			if err != nil {
				return Outcome{}, lifeErr(name, err)
			}
			out, ok := stoppedCleanly(name, first, 2)
			if !ok {
				return out, nil
			}
			second, err := r.run(ctx, runOpts{resume: true})
			if err != nil {
				return Outcome{}, lifeErr(name, err)
			}
			if fin, ok := finishedCleanly(name, second); !ok {
				return fin, nil
			}
			out.Metrics["resumed_round"] = float64(second.agg.ResumedRound)
			return out, nil
		},
	}
}

// replayedHelloScenario records every bank's hellos with the auditor's key
// in a first run, which is stopped; during the resumed run it replays them
// (and, later, the resumed run's own hellos) with each bank's key, which
// may publish on the bank's hello subject. Every replay must be rejected
// as "replay" and none taken for a rejoin: every round counts the three
// banks and the job finishes.
func replayedHelloScenario() Scenario {
	const name = "replayed-hello"
	return Scenario{
		Name: name,
		Doc:  "hellos of an earlier run and copies of this run's, replayed with the banks' own keys: rejected as replay, no rejoin",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			return replayScenario(ctx, name, "life-hello", o, func(r *lifeRig, old []*nats.Msg, _ []*nats.Msg) (int, error) {
				all, _ := r.recorded()
				sent := 0
				for i := range lifeBanks {
					id := deploy.ClientID(i)
					var mine []*nats.Msg
					for _, m := range all { // the first run's and this run's
						if m.Subject == bus.Subject(r.local.Job(), bus.KindHello, id) {
							mine = append(mine, m)
						}
					}
					n, err := r.publishAs(id, mine)
					if err != nil {
						return sent, err
					}
					sent += n
				}
				return sent, nil
			}, func(run lifeRun, sent int) (Outcome, bool) {
				if got := run.agg.Rejects[bus.ReasonReplay]; int(got) != sent || sent < 2*lifeBanks {
					return fail(name, InvNotRejected, "%d hellos replayed, the aggregator rejected %d as replay (all: %v)", sent, got, run.agg.Rejects), false
				}
				if len(run.agg.Rejects) != 1 {
					return fail(name, InvNotRejected, "rejects %v: want replays only", run.agg.Rejects), false
				}
				return Outcome{Metrics: map[string]float64{"hellos_replayed": float64(sent), "rejected_replay": float64(run.agg.Rejects[bus.ReasonReplay])}}, true
			})
		},
	}
}

// replayedDoneScenario records the first run's done (the stop notice,
// signed by the aggregator) and replays it during the resumed run with
// the aggregator's key, which may publish on the done subject. Every agent
// must reject it as "replay" and go on to finish the job.
func replayedDoneScenario() Scenario {
	const name = "replayed-done"
	return Scenario{
		Name: name,
		Doc:  "the aggregator's signed done of an earlier run, replayed with its key: every agent rejects it as replay and finishes the job",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			return replayScenario(ctx, name, "life-done", o, func(r *lifeRig, _ []*nats.Msg, oldDones []*nats.Msg) (int, error) {
				return r.publishAs(bus.AggregatorID, oldDones)
			}, func(run lifeRun, sent int) (Outcome, bool) {
				if sent == 0 {
					return fail(name, InvNotExercised, "the first run sent no done to replay"), false
				}
				out := Outcome{Metrics: map[string]float64{"dones_replayed": float64(sent)}}
				for i, a := range run.agents {
					if got := a.Rejects[bus.ReasonReplay]; int(got) != sent {
						return fail(name, InvNotRejected, "%s rejected %d of %d replayed dones as replay (all: %v)", deploy.ClientID(i), got, sent, a.Rejects), false
					}
					out.Metrics["rejected_replay_"+deploy.ClientID(i)] = float64(a.Rejects[bus.ReasonReplay])
				}
				return out, true
			})
		},
	}
}

// replayScenario runs the job, stops it after round 1 (recording its
// hellos and done), resumes it, and once round 3 closed in the resumed run
// calls attack with what the first run left; judge then checks the
// resumed run, which must also finish cleanly.
func replayScenario(ctx context.Context, name, job string, o ScenarioOptions,
	attack func(r *lifeRig, hellos, dones []*nats.Msg) (int, error), judge func(lifeRun, int) (Outcome, bool)) (Outcome, error) {
	r, err := startLifeRig(ctx, job, o)
	if err != nil {
		return Outcome{}, lifeErr(name, err)
	}
	defer r.close()
	first, err := r.run(ctx, runOpts{stopAfter: 1})
	if err != nil {
		return Outcome{}, lifeErr(name, err)
	}
	if out, ok := stoppedCleanly(name, first, 1); !ok {
		return out, nil
	}
	hellos, dones := r.recordedDone(ctx)
	time.Sleep(2 * lifeSkew) // the next run begins after every recorded hello, skew included
	sent := 0
	second, err := r.run(ctx, runOpts{resume: true, duringAfter: 3, during: func(context.Context) error {
		var err error
		sent, err = attack(r, hellos, dones)
		return err
	}})
	if err != nil {
		return Outcome{}, lifeErr(name, fmt.Errorf("replaying: %w", err))
	}
	if out, ok := finishedCleanly(name, second); !ok {
		return out, nil
	}
	out, _ := judge(second, sent)
	return out, nil
}
