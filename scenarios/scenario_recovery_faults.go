package scenarios

import (
	"context"
	"fmt"
	"time"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
)

const (
	recBanks  = 3
	recRounds = 5
	// recPace is each bank's pause per round: the faults strike while the
	// banks train, not while the aggregator's announcements are in flight.
	recPace = 150 * time.Millisecond
	// recWeight is one round's aggregation weight with every bank in: each
	// logistic bank trains on 48 of its 64 examples.
	recWeight = recBanks * 48
	// recTimeout bounds each scenario's job.
	recTimeout = time.Minute
)

// recoveryScenarios are the recovery scenarios, in registration order.
func recoveryScenarios() []Scenario {
	return []Scenario{aggregatorKill9Scenario(), agentCrashRejoinScenario(), natsRestartScenario(), clusterNodeLossScenario(),
		amlKillRecoverScenario(), lpsfedKillRecoverScenario()}
}

func recoveryConfigFor(job string, o ScenarioOptions, urls string, replicas int) recoveryConfig {
	return recoveryConfig{job: job, urls: urls, banks: recBanks, rounds: recRounds, seed: o.Seed, replicas: replicas,
		pace: recPace, log: o.Log}
}

// referenceDigest runs the job without faults, as job, and returns the
// digest of its final model.
func referenceDigest(ctx context.Context, cfg recoveryConfig, job string) (string, error) {
	cfg.job = job
	j, err := startRecoveryJob(ctx, cfg)
	if err != nil {
		return "", err
	}
	res, err := j.finish(recTimeout)
	if err != nil {
		return "", fmt.Errorf("reference run: %w", err)
	}
	return aggregator.ModelDigest(res.Model), nil
}

// judgeRecovery checks a struck job: every round closed at quorum with
// every bank in (an update lost holds its round up until the deadline),
// with exactly the banks' weight (an update counted twice adds its weight
// again), and, when want is set, the final model equals the uninterrupted
// run's bit for bit.
func judgeRecovery(name string, res aggregator.Result, want string) Outcome {
	if len(res.Closes) != recRounds {
		return fail(name, InvNoProgress, "%d of %d rounds closed", len(res.Closes), recRounds)
	}
	for i, rc := range res.Closes {
		if rc.Round != uint64(i+1) || rc.Reason != "quorum" || len(rc.In) != recBanks {
			return fail(name, InvUpdateLost, "round %d closed by %s with %v (late %v)", rc.Round, rc.Reason, rc.In, rc.Late)
		}
		if rc.Weight != recWeight || len(rc.Stale) > 0 {
			return fail(name, InvCountedTwice, "round %d aggregated weight %v (stale %v), want %d", rc.Round, rc.Weight, rc.Stale, recWeight)
		}
	}
	got := aggregator.ModelDigest(res.Model)
	if want != "" && got != want {
		return fail(name, InvResultChanged, "final model %s, %s without the fault", got[:16], want[:16])
	}
	out := Outcome{Name: name, Metrics: map[string]float64{"rounds": float64(len(res.Closes))}}
	if want != "" {
		out.Metrics["model_bit_identical"] = 1
	}
	for k, n := range res.Dropped {
		out.Metrics["dropped_"+k] = float64(n)
	}
	return out
}

// aggregatorKill9Scenario kills the aggregator mid-round at one of its
// checkpoint writes, just before or just after the write (the seed picks
// the round, the write and which), restarts it, and requires the model of
// an uninterrupted run bit for bit.
func aggregatorKill9Scenario() Scenario {
	const name = "aggregator-kill9"
	return Scenario{
		Name: name,
		Doc:  "a durable aggregator killed mid-round on JetStream resumes; the final model equals an uninterrupted run's bit for bit",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			srv, err := bus.StartServer(bus.ServerOptions{})
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: %w", name, err)
			}
			defer srv.Shutdown()
			cfg := recoveryConfigFor(name, o, srv.ClientURL(), 1)
			want, err := referenceDigest(ctx, cfg, name+"-ref")
			if err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			j, err := startRecoveryJob(ctx, cfg)
			if err != nil {
				return Outcome{}, err
			}
			defer j.stop()
			round := 2 + o.Seed%(recRounds-2)
			write, saved := 1+int(o.Seed/3%recBanks), o.Seed%2 == 0
			if err := j.waitClosed(round-1, 20*time.Second); err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			j.mu.Lock()
			crashed := j.agg.store.arm(write, saved)
			j.mu.Unlock()
			select {
			case <-crashed:
			case <-time.After(20 * time.Second):
				return fail(name, InvNotExercised, "no checkpoint write to crash at in round %d", round), nil
			}
			j.killAggregator()
			began := time.Now()
			if err := j.startAggregator(); err != nil {
				return Outcome{}, err
			}
			if err := j.waitClosed(round, 20*time.Second); err != nil {
				return fail(name, InvNoProgress, "after the restart: %v", err), nil
			}
			resumed := time.Since(began)
			res, err := j.finish(recTimeout)
			if err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			out := judgeRecovery(name, res, want)
			if out.FailedInvariant == "" && !res.Resumed {
				return fail(name, InvNotExercised, "the restarted aggregator did not resume from a checkpoint"), nil
			}
			out.Repro = dsimRepro(name, o.Seed)
			if out.Metrics != nil {
				out.Metrics["crash_round"], out.Metrics["crash_write"] = float64(round), float64(write)
				out.Metrics["crash_after_write"] = b2f(saved)
				out.Metrics["resumed_round"] = float64(res.ResumedRound)
				out.Metrics["restart_to_round_close_ms"] = float64(resumed.Milliseconds())
			}
			return out, nil
		},
	}
}

// agentCrashRejoinScenario kills one bank while it trains, starts it
// again from nothing but its seeds and the job's ledger, and requires
// every round to close at quorum with it in: the bank rejoins, gets the
// current model and round, and resumes its ledger sequence. Its noise
// restarts with its gate, so the model is not compared with a reference.
func agentCrashRejoinScenario() Scenario {
	const name = "agent-crash-rejoin"
	return Scenario{
		Name: name,
		Doc:  "a bank killed mid-round rejoins with a fresh process, resynchronizes and keeps its ledger; every round closes at quorum",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			srv, err := bus.StartServer(bus.ServerOptions{})
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: %w", name, err)
			}
			defer srv.Shutdown()
			j, err := startRecoveryJob(ctx, recoveryConfigFor(name, o, srv.ClientURL(), 1))
			if err != nil {
				return Outcome{}, err
			}
			defer j.stop()
			bank := int(o.Seed % recBanks)
			if err := j.waitClosed(2, 20*time.Second); err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			time.Sleep(recPace / 3) // into the bank's training of round 3
			j.killAgent(bank)
			time.Sleep(200 * time.Millisecond)
			began := time.Now()
			if err := j.startAgent(bank); err != nil {
				return Outcome{}, err
			}
			if err := j.waitClosed(3, 20*time.Second); err != nil {
				return fail(name, InvUpdateLost, "round 3 never closed after %s rejoined: %v", deploy.ClientID(bank), err), nil
			}
			rejoined := time.Since(began)
			res, err := j.finish(recTimeout)
			if err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			out := judgeRecovery(name, res, "")
			if out.Metrics != nil {
				out.Metrics["crashed_bank"] = float64(bank)
				out.Metrics["rejoin_to_round_close_ms"] = float64(rejoined.Milliseconds())
			}
			return out, nil
		},
	}
}

// natsRestartScenario shuts the NATS server down while the banks train
// and starts it again on the same port and store: every client
// reconnects, the streams, consumer and checkpoints are still there, and
// the model equals an uninterrupted run's bit for bit.
func natsRestartScenario() Scenario {
	const name = "nats-restart"
	return Scenario{
		Name: name,
		Doc:  "the NATS server restarts mid-round on its store: clients reconnect, no update is lost or counted twice, the model is unchanged",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			store, err := tempDir("graphfed-nats-restart-")
			if err != nil {
				return Outcome{}, err
			}
			defer store.remove()
			srv, err := bus.StartServer(bus.ServerOptions{StoreDir: store.path})
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: %w", name, err)
			}
			url := srv.ClientURL()
			port, err := urlPort(url)
			if err != nil {
				srv.Shutdown()
				return Outcome{}, err
			}
			cfg := recoveryConfigFor(name, o, url, 1)
			want, err := referenceDigest(ctx, cfg, name+"-ref")
			if err != nil {
				srv.Shutdown()
				return fail(name, InvNoProgress, "%v", err), nil
			}
			j, err := startRecoveryJob(ctx, cfg)
			if err != nil {
				srv.Shutdown()
				return Outcome{}, err
			}
			defer j.stop()
			if err := j.waitClosed(2, 20*time.Second); err != nil {
				srv.Shutdown()
				return fail(name, InvNoProgress, "%v", err), nil
			}
			time.Sleep(recPace / 3)
			srv.Shutdown()
			down := time.Now()
			time.Sleep(300 * time.Millisecond)
			srv, err = bus.StartServer(bus.ServerOptions{StoreDir: store.path, Port: port})
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: restart: %w", name, err)
			}
			defer srv.Shutdown()
			if err := j.waitClosed(3, 20*time.Second); err != nil {
				return fail(name, InvUpdateLost, "after the restart: %v", err), nil
			}
			recovered := time.Since(down)
			res, err := j.finish(recTimeout)
			if err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			out := judgeRecovery(name, res, want)
			if out.Metrics != nil {
				out.Metrics["outage_to_round_close_ms"] = float64(recovered.Milliseconds())
			}
			return out, nil
		},
	}
}

// clusterNodeLossScenario runs the job on a 3-node loopback cluster with
// every stream, bucket and consumer replicated three times, and shuts
// down, while the banks train, the node that leads the update stream:
// clients on it fail over, the stream elects a new leader, and the job
// completes with the model of an uninterrupted run.
func clusterNodeLossScenario() Scenario {
	const name = "cluster-node-loss"
	return Scenario{
		Name: name,
		Doc:  "a 3-node NATS cluster loses the update stream's leader mid-round: the job completes, no update lost, model unchanged",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			c, err := startLoopbackCluster(3)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: %w", name, err)
			}
			defer c.shutdown()
			cfg := recoveryConfigFor(name, o, c.urls(), 3)
			want, err := referenceDigest(ctx, cfg, name+"-ref")
			if err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			j, err := startRecoveryJob(ctx, cfg)
			if err != nil {
				return Outcome{}, err
			}
			defer j.stop()
			if err := j.waitClosed(2, 20*time.Second); err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			leader, err := c.streamLeader(ctx, bus.UpdateStreamName(name))
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: %w", name, err)
			}
			time.Sleep(recPace / 3)
			c.kill(leader)
			down := time.Now()
			if err := j.waitClosed(3, 30*time.Second); err != nil {
				return fail(name, InvUpdateLost, "after losing node %d: %v", leader+1, err), nil
			}
			recovered := time.Since(down)
			res, err := j.finish(recTimeout)
			if err != nil {
				return fail(name, InvNoProgress, "%v", err), nil
			}
			out := judgeRecovery(name, res, want)
			if out.Metrics != nil {
				out.Metrics["lost_node"] = float64(leader + 1)
				out.Metrics["failover_to_round_close_ms"] = float64(recovered.Milliseconds())
				out.Metrics["nodes_alive"] = float64(c.alive())
			}
			return out, nil
		},
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
