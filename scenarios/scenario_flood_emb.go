package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/aml/amllearner"
	"graphfed/aml/amlworld"
	"graphfed/aml/bank"
	"graphfed/aml/worldgen"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/seeds"
)

// The embedding-flood scenario (issue 29, items 4 and 7): an attacker
// holding one bank's key sends 60 correctly signed embedding messages of
// 17 MB to a neighbouring bank, the outside test that took that bank's
// agent from 69 MB to 1.41 GB. It runs an AML CE-FedGNN job of three banks
// of a small generated world (boundary embeddings bank to bank on
// gf.<job>.emb.<from>.<to>) on an embedded server started from the
// configuration `graphfed keys` writes with its default sizing (every
// party on its own key, the 21 MiB payload limit), once clean and once
// attacked.
//
// The flood is timed so that both runs see the honest traffic alike: it
// starts once the victim's inbox holds the attacker's bank's own round-2
// embeddings (which stay first in that bank's queue, and are kept), while
// the victim is in its round-2 step (a fixed delay before training keeps
// it busy there), and the aggregator holds round 2's close until the
// victim's inbox is empty, so that the bank's round-3 embeddings meet an
// empty queue. The flood's messages name accounts the bank does not hold:
// the learner ignores whatever of them the inbox lets through, so the
// honest banks' result must be bit for bit the clean run's.

const (
	embFloodRounds = 3
	// embFloodRound is the round in whose step the victim is flooded.
	embFloodRound = 2
	// embFloodMessages and embFloodBytes are the 60 messages of
	// 17 MB.
	embFloodMessages = 60
	embFloodBytes    = 17_000_000
	// embFloodDelay is the victim's fixed delay before each round's
	// training, in both runs: the flood arrives while its loop waits.
	embFloodDelay = 1500 * time.Millisecond
)

// InvInboxUnbounded: the victim's inbox held more than its bound, or the
// attacker's queue more than its allowance.
const InvInboxUnbounded = "inbox-unbounded"

func embeddingFloodScenario() Scenario {
	const name = "embedding-flood"
	return Scenario{
		Name: name,
		Doc: "an attacker with a bank's key sends 60 signed 17 MB embedding messages to a neighbouring bank (AML CE-FedGNN, server configured as graphfed keys does): " +
			"the victim's inbox stays within its bound, the drops are counted against the bank, the honest result bit-identical",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			w, err := newEmbFloodWorld(o.Seed)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: world: %w", name, err)
			}
			clean, err := runEmbFloodJob(ctx, "emb-flood-clean", o, w, false)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: clean run: %w", name, err)
			}
			flooded, err := runEmbFloodJob(ctx, "emb-flood", o, w, true)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: flooded run: %w", name, err)
			}
			return judgeEmbFlood(name, w, clean, flooded), nil
		},
	}
}

// embFloodWorld is the job's generated world, split into its banks.
type embFloodWorld struct {
	graph            *amlworld.Graph
	ids              []string // the banks, in split order
	victim, attacker string   // the attacker holds the attacker bank's key
}

// newEmbFloodWorld generates a world of three banks and 20,000 rows.
func newEmbFloodWorld(seed uint64) (*embFloodWorld, error) {
	dir, err := tempDir("graphfed-emb-flood-")
	if err != nil {
		return nil, err
	}
	defer dir.remove()
	cfg, err := worldgen.Preset(worldgen.Tiny, worldgen.HI, seed)
	if err != nil {
		return nil, err
	}
	cfg.Banks, cfg.Transactions = 3, 20000
	sum, err := worldgen.Generate(cfg, filepath.Join(dir.path, "world"), nil)
	if err != nil {
		return nil, err
	}
	g, _, err := amlworld.LoadTrans(sum.TransPath, amlworld.Options{})
	if err != nil {
		return nil, err
	}
	w := &embFloodWorld{graph: g}
	views, err := bank.SplitWorld(g, nil)
	if err != nil {
		return nil, err
	}
	for _, v := range views {
		w.ids = append(w.ids, v.ID)
	}
	if len(w.ids) != 3 {
		return nil, fmt.Errorf("the split gave %d banks, want 3", len(w.ids))
	}
	w.attacker, w.victim = w.ids[0], w.ids[1]
	return w, nil
}

// learners are the banks' fresh learners, every run its own.
func (w *embFloodWorld) learners() ([]*amllearner.Learner, error) {
	views, err := bank.SplitWorld(w.graph, nil)
	if err != nil {
		return nil, err
	}
	o := deploy.DefaultLearnerOptions()
	o.AML.Hidden, o.AML.BatchSize = 16, 256
	var ls []*amllearner.Learner
	for i, v := range views {
		d, err := deploy.AMLData(v)
		if err != nil {
			return nil, err
		}
		l, err := deploy.BuildLearner(deploy.TaskAML, aggregator.AlgoCEFedGNN, deploy.Data{Bank: &d}, o,
			deploy.Party{ID: v.ID, Seed: seeds.Party(1, i, seeds.Learner)}, zerolog.Nop())
		if err != nil {
			return nil, err
		}
		ls = append(ls, l.Learner.(*amllearner.Learner))
	}
	return ls, nil
}

// embFloodRun is what one run left.
type embFloodRun struct {
	agg        aggregator.Result
	agents     map[string]agent.Result
	victim     agent.InboxReport
	victimConn bus.ConnCounts
	payload    int // the server's payload limit
	flood      embFlood
	// linked: the attacker's bank is one of the victim's neighbours.
	linked bool
}

// runEmbFloodJob runs the job; with attack, the flood strikes in round
// embFloodRound.
func runEmbFloodJob(ctx context.Context, job string, o ScenarioOptions, w *embFloodWorld, attack bool) (embFloodRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	learners, err := w.learners()
	if err != nil {
		return embFloodRun{}, err
	}
	run := embFloodRun{agents: map[string]agent.Result{}}
	vi := slices.Index(w.ids, w.victim)
	run.linked = slices.Contains(learners[vi].Neighbours(), w.attacker)
	_, _, dim := learners[slices.Index(w.ids, w.attacker)].Boundary(w.victim)
	// The keys and configuration of `graphfed keys` without sizing flags,
	// the deployment the outside test attacked.
	local, err := deploy.StartLocal(ctx, deploy.LocalOptions{Job: job, Banks: w.ids, Secure: true})
	if err != nil {
		return run, err
	}
	defer local.Close()
	run.payload = local.Server().MaxPayload()
	var victim *deploy.Agent
	fl := &embFlooder{job: job, from: w.attacker, to: w.victim, round: embFloodRound, dim: max(dim, 1), done: make(chan struct{})}
	onRound := func(rc aggregator.RoundClosed) {
		if attack && rc.Round == embFloodRound {
			fl.settle(ctx, victim)
		}
	}
	contract := aggregator.Contract{SchemaHash: learners[0].SchemaHash(), NumParams: learners[0].NumParams()}
	agg, err := deploy.NewAggregator(ctx, local.AggregatorOptions(deploy.AggregatorOptions{
		Job: job, Task: deploy.TaskAML, InitSeed: o.Seed, FinalWait: 5 * time.Second, Log: o.Log, OnRound: onRound,
		Round: aggregator.Config{Algo: aggregator.AlgoCEFedGNN, Rounds: embFloodRounds, MinClients: len(w.ids),
			Quorum: len(w.ids), RoundTimeout: time.Minute, Contract: contract}}))
	if err != nil {
		return run, err
	}
	defer agg.Close()
	var agents []*deploy.Agent
	defer func() {
		for _, a := range agents {
			a.Close()
		}
	}()
	for i, l := range learners {
		ao := deploy.AgentOptions{ID: w.ids[i], Job: job, Task: deploy.TaskAML, Algo: aggregator.AlgoCEFedGNN, Learner: l,
			LocalEpochs: 1, EvalEvery: -1, Privacy: seededPrivacy(o.Seed, i), Log: o.Log}
		if i == vi {
			ao.Slowdown = embFloodDelay
		}
		a, err := deploy.NewAgent(ctx, local.AgentOptions(ao))
		if err != nil {
			return run, err
		}
		agents = append(agents, a)
	}
	victim = agents[vi]
	if attack {
		go fl.run(ctx, local, victim, o.Log)
	} else {
		close(fl.done)
	}
	res, errs, err := runAgentsKeeping(ctx, cancel, agg, agents, w.ids)
	run.agg, run.victim, run.victimConn = res.Aggregator, victim.Inbox(), victim.ConnCounts()
	for i, r := range res.Agents {
		run.agents[w.ids[i]] = r
	}
	cancel()
	<-fl.done
	run.flood = fl.result()
	return run, errors.Join(append([]error{err, run.flood.err}, errs...)...)
}

// runAgentsKeeping is runAgentsBeside keeping every agent's result.
func runAgentsKeeping(ctx context.Context, cancel context.CancelFunc, agg *deploy.Aggregator, agents []*deploy.Agent, ids []string) (deploy.JobResult, []error, error) {
	res := deploy.JobResult{Agents: make([]agent.Result, len(agents))}
	errs := make([]error, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Go(func() {
			var err error
			if res.Agents[i], err = a.Run(ctx); err != nil {
				errs[i] = fmt.Errorf("agent %s: %w", ids[i], err)
				cancel()
			}
		})
	}
	var err error
	if res.Aggregator, err = agg.Run(ctx); err != nil {
		cancel()
	}
	wg.Wait()
	return res, errs, err
}

// judgeEmbFlood compares the flooded run with the clean one.
func judgeEmbFlood(name string, w *embFloodWorld, clean, flooded embFloodRun) Outcome {
	for _, r := range []struct {
		what string
		run  embFloodRun
	}{{"clean", clean}, {"flooded", flooded}} {
		if n := len(r.run.agg.Closes); n != embFloodRounds {
			return fail(name, InvNoProgress, "%s run: %d of %d rounds closed", r.what, n, embFloodRounds)
		}
		for _, rc := range r.run.agg.Closes {
			if in := slices.Sorted(slices.Values(rc.In)); !slices.Equal(in, slices.Sorted(slices.Values(w.ids))) || rc.Reason != "quorum" {
				return fail(name, InvUpdateLost, "%s run: round %d closed by %s with %v, want every bank %v", r.what, rc.Round, rc.Reason, rc.In, w.ids)
			}
		}
		for _, id := range w.ids {
			if got := r.run.agents[id].Rounds; got != embFloodRounds {
				return fail(name, InvNoProgress, "%s run: %s trained %d of %d rounds", r.what, id, got, embFloodRounds)
			}
		}
	}
	if !clean.linked {
		return fail(name, InvNotExercised, "%s is not a neighbour of %s: its embeddings would not reach the victim's learner", w.attacker, w.victim)
	}
	if !bitEqual(clean.agg.Model, flooded.agg.Model) {
		return fail(name, InvResultChanged, "the flooded run's final model differs from the clean run's")
	}
	for _, id := range w.ids {
		if !sameScores(clean.agents[id].Final, flooded.agents[id].Final) {
			return fail(name, InvResultChanged, "%s's final scores %v under the flood, %v without", id, flooded.agents[id].Final, clean.agents[id].Final)
		}
	}
	fl := flooded.flood
	if fl.sent != embFloodMessages {
		return fail(name, InvNotExercised, "the attacker sent %d of %d messages", fl.sent, embFloodMessages)
	}
	att, base := flooded.victim.Senders[w.attacker], clean.victim.Senders[w.attacker]
	lim := agent.InboxLimitsFor(flooded.payload)
	switch {
	case base.Dropped != 0:
		return fail(name, InvUpdateLost, "the clean run dropped %d of %s's messages", base.Dropped, w.attacker)
	case att.Received != base.Received+uint64(fl.sent):
		return fail(name, InvFloodUncounted, "the victim's inbox received %d messages from %s, want its %d honest ones and the %d of the flood",
			att.Received, w.attacker, base.Received, fl.sent)
	case att.Dropped == 0:
		return fail(name, InvNotExercised, "no flood message was dropped: the inbox's bound was not reached")
	case att.Dropped > uint64(fl.sent):
		return fail(name, InvUpdateLost, "%d messages of %s dropped, more than the flood's %d", att.Dropped, w.attacker, fl.sent)
	case att.PeakBytes > lim.Neighbour.Bytes:
		return fail(name, InvInboxUnbounded, "%s had %d bytes waiting in the victim's inbox, over its allowance of %d", w.attacker, att.PeakBytes, lim.Neighbour.Bytes)
	case flooded.victim.PeakBytes > flooded.victim.BoundBytes:
		return fail(name, InvInboxUnbounded, "the victim's inbox held %d bytes, over its bound of %d", flooded.victim.PeakBytes, flooded.victim.BoundBytes)
	}
	for s, st := range flooded.victim.Senders {
		if s != w.attacker && st.Dropped != 0 {
			return fail(name, InvUpdateLost, "the victim's inbox dropped %d messages of %s", st.Dropped, s)
		}
	}
	if c := flooded.victimConn; c.Disconnects != 0 || c.SlowConsumer != 0 {
		return fail(name, InvCutOff, "%s: connection events %+v", w.victim, c)
	}
	return Outcome{Metrics: map[string]float64{
		"payload_limit_bytes":      float64(flooded.payload),
		"flood_messages":           float64(fl.sent),
		"flood_message_bytes":      float64(fl.bytes),
		"flood_bytes":              float64(fl.sent * fl.bytes),
		"flood_dropped":            float64(att.Dropped),
		"flood_dropped_bytes":      float64(att.DroppedBytes),
		"flood_kept":               float64(uint64(fl.sent) - att.Dropped),
		"flood_seconds":            fl.took.Seconds(),
		"attacker_peak_bytes":      float64(att.PeakBytes),
		"attacker_allowance_bytes": float64(lim.Neighbour.Bytes),
		"victim_peak_bytes":        float64(flooded.victim.PeakBytes),
		"victim_peak_bytes_clean":  float64(clean.victim.PeakBytes),
		"victim_inbox_bound_bytes": float64(flooded.victim.BoundBytes),
		"victim_inbox_dropped_all": float64(flooded.victim.Dropped()),
		"rounds":                   float64(len(flooded.agg.Closes)),
		"honest_results_bit_equal": 1,
	}}
}

// sameScores compares two score maps bit for bit.
func sameScores(a, b map[string]float64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || math.Float64bits(v) != math.Float64bits(w) {
			return false
		}
	}
	return true
}
