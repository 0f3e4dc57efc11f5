package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/dsim"
	"graphfed/privacy"
)

// The kill-and-recover scenarios of issue 12 run a durable job of one
// algorithm (AML CE-FedGNN, LPSFed) three times on one embedded NATS
// server, its agents built by deploy from data directories as `graphfed
// agent` builds them: uninterrupted, as the reference; with one client
// killed right after its first ledger entry of the kill round and started
// again from its directory and the job's ledger; and with the aggregator
// killed at a checkpoint write of the kill round and restarted. They are
// cmd/graphfed's process tests (TestProcessAMLBanksPermissionedDurable,
// TestProcessLPSFedPermissionedDurable) in process, on small synthetic
// worlds, so that `graphfed scenario run all` always runs them.

const (
	// InvReleasedTwice: a (client, channel, round) or (client, channel,
	// round, node) appears in the ledger more often than the channel
	// releases per round.
	InvReleasedTwice = dsim.InvReleasedTwice
	// InvNotRejoined: the restarted client released nothing after the
	// round it was killed in.
	InvNotRejoined = "client-not-rejoined"
)

// killJob is one algorithm's kill-and-recover job.
type killJob struct {
	name      string
	rounds    int
	killRound uint64
	// crashTimeout is the round deadline of the client-crash run: the
	// killed client's round may close without it (its release is in the
	// ledger, its update lost). The other runs close every round at quorum.
	crashTimeout time.Duration
	perRound     map[privacy.Channel]int // releases per round and channel beyond one
	// world writes the clients' data under dir and returns their spec.
	world func(dir string, seed uint64) (*partySpec, error)
}

// killScenario registers a killJob.
func killScenario(k killJob, doc string) Scenario {
	return Scenario{Name: k.name, Doc: doc, Run: k.run}
}

func (k killJob) run(ctx context.Context, o ScenarioOptions) (Outcome, error) {
	dir, err := tempDir("graphfed-" + k.name + "-")
	if err != nil {
		return Outcome{}, err
	}
	defer dir.remove()
	spec, err := k.world(dir.path, o.Seed)
	if err != nil {
		return Outcome{}, fmt.Errorf("scenarios: %s: world: %w", k.name, err)
	}
	srv, err := bus.StartServer(bus.ServerOptions{})
	if err != nil {
		return Outcome{}, fmt.Errorf("scenarios: %s: %w", k.name, err)
	}
	defer srv.Shutdown()
	cfg := recoveryConfig{job: k.name, urls: srv.ClientURL(), banks: len(spec.ids), rounds: k.rounds, seed: o.Seed,
		replicas: 1, log: o.Log, parties: spec}
	out := Outcome{Name: k.name, Repro: dsimRepro(k.name, o.Seed), Metrics: map[string]float64{}}
	steps := []struct {
		name string
		run  func(context.Context, recoveryConfig, *Outcome) (string, error)
	}{{"reference", k.reference}, {"client_crash", k.clientCrash}, {"aggregator_kill", k.aggregatorKill}}
	for _, step := range steps {
		began := time.Now()
		inv, err := step.run(ctx, cfg, &out)
		if err != nil || inv != "" {
			if err != nil && inv == "" {
				return Outcome{}, err
			}
			out.FailedInvariant, out.Detail = inv, fmt.Sprint(err)
			return out, nil
		}
		out.Metrics[step.name+"_seconds"] = time.Since(began).Seconds()
	}
	return out, nil
}

// reference runs the job uninterrupted and keeps its final digest.
func (k killJob) reference(ctx context.Context, cfg recoveryConfig, out *Outcome) (string, error) {
	cfg.job = k.name + "-ref"
	j, err := startRecoveryJob(ctx, cfg)
	if err != nil {
		return "", err
	}
	res, err := j.finish(recTimeout)
	if err != nil {
		return InvNoProgress, fmt.Errorf("reference run: %w", err)
	}
	if inv, err := k.judge(ctx, cfg, res, true); inv != "" {
		return inv, fmt.Errorf("reference run: %w", err)
	}
	if inv, err := k.modelsOut(cfg, res); inv != "" {
		return inv, fmt.Errorf("reference run: %w", err)
	}
	out.Detail = aggregator.ResultDigest(res)
	return "", nil
}

// modelsOut checks that the run has something to compare bit for bit: a
// global model, or every client's personalized model with its margin.
func (k killJob) modelsOut(cfg recoveryConfig, res aggregator.Result) (string, error) {
	if !cfg.parties.round.Personalizes() {
		if len(res.Model) == 0 {
			return InvNoProgress, fmt.Errorf("no final model")
		}
		return "", nil
	}
	if len(res.Models) != cfg.banks {
		return InvNoProgress, fmt.Errorf("%d personalized models for %d clients", len(res.Models), cfg.banks)
	}
	for _, m := range res.Models {
		if len(m.Params) == 0 || !m.HasMargin {
			return InvNoProgress, fmt.Errorf("%s's latest model has %d parameters, margin %v", m.To, len(m.Params), m.HasMargin)
		}
	}
	return "", nil
}

// clientCrash kills client 1 right after its first ledger entry of the
// kill round and starts it again: the job finishes, every round closes,
// nothing is in the ledger twice and the client takes part again.
func (k killJob) clientCrash(ctx context.Context, cfg recoveryConfig, out *Outcome) (string, error) {
	cfg.job = k.name + "-cli"
	cfg.parties = cloneSpec(cfg.parties)
	cfg.parties.round.RoundTimeout = k.crashTimeout
	const victim = 1
	id := cfg.id(victim)
	hit, stopWatch, err := watchLedger(cfg, id, k.killRound)
	if err != nil {
		return "", err
	}
	defer stopWatch()
	j, err := startRecoveryJob(ctx, cfg)
	if err != nil {
		return "", err
	}
	defer j.stop()
	j.mu.Lock()
	agg := j.agg
	j.mu.Unlock()
	var e privacy.Entry
	select {
	case e = <-hit:
	case <-agg.done:
		return InvNotExercised, fmt.Errorf("the job ended before %s released in round %d", id, k.killRound)
	case <-time.After(recTimeout):
		return InvNoProgress, fmt.Errorf("%s released nothing in round %d within %v", id, k.killRound, recTimeout)
	}
	j.killAgent(victim)
	// Restarted at once: the new agent may read its chain before a ledger
	// append the killed one had already sent is stored. Its own append of
	// that seq is then refused, and its gate finds the killed life's
	// release of the same round and channel there and counts it as made
	// (privacy.ErrAlreadyReleased): the round is not released again. The
	// killed life's entry of an earlier round (or a calibration) it counts
	// and releases after.
	if err := j.startAgent(victim); err != nil {
		return "", err
	}
	res, err := j.finish(recTimeout)
	if err != nil {
		return InvNoProgress, fmt.Errorf("client crash: %w", err)
	}
	if inv, err := k.judge(ctx, cfg, res, false); inv != "" {
		return inv, fmt.Errorf("client crash: %w", err)
	}
	es, err := ledgerEntries(ctx, cfg)
	if err != nil {
		return "", err
	}
	var after []uint64
	for _, x := range es {
		if x.Client == id && x.Channel == privacy.ChannelModel && x.Round > k.killRound {
			after = append(after, x.Round)
		}
	}
	if len(after) == 0 {
		return InvNotRejoined, fmt.Errorf("%s, killed after its %s entry of round %d, released no model after it", id, e.Channel, e.Round)
	}
	out.Metrics["crash_rounds_at_deadline"] = float64(atDeadline(res))
	out.Metrics["crash_rejoined_rounds"] = float64(len(after))
	return "", nil
}

// aggregatorKill kills the aggregator at a checkpoint write of the kill
// round (after or before the write reaches the store, by seed) and starts
// it again: it resumes, and the final model(s) equal the reference's bit
// for bit.
func (k killJob) aggregatorKill(ctx context.Context, cfg recoveryConfig, out *Outcome) (string, error) {
	want := out.Detail
	out.Detail = ""
	cfg.job = k.name + "-agg"
	j, err := startRecoveryJob(ctx, cfg)
	if err != nil {
		return "", err
	}
	defer j.stop()
	if err := j.waitClosed(k.killRound-1, recTimeout); err != nil {
		return InvNoProgress, err
	}
	write, saved := 2, cfg.seed%2 == 0
	j.mu.Lock()
	crashed := j.agg.store.arm(write, saved)
	agg := j.agg
	j.mu.Unlock()
	select {
	case <-crashed:
	case <-agg.done:
		return InvNotExercised, fmt.Errorf("the aggregator ended before checkpoint write %d of round %d", write, k.killRound)
	}
	j.killAggregator()
	if err := j.startAggregator(); err != nil {
		return "", err
	}
	res, err := j.finish(recTimeout)
	if err != nil {
		return InvNoProgress, fmt.Errorf("aggregator kill: %w", err)
	}
	if inv, err := k.judge(ctx, cfg, res, true); inv != "" {
		return inv, fmt.Errorf("aggregator kill: %w", err)
	}
	if !res.Resumed {
		return InvNotExercised, fmt.Errorf("the restarted aggregator did not resume from a checkpoint")
	}
	if got := aggregator.ResultDigest(res); got != want {
		return InvResultChanged, fmt.Errorf("final model(s) %s after the kill, %s uninterrupted", got[:16], want[:16])
	}
	out.Metrics["kill_after_write"], out.Metrics["resumed_round"] = b2f(saved), float64(res.ResumedRound)
	out.Metrics["model_bit_identical"] = 1
	return "", nil
}

// judge checks a finished run: every round closed, in order (at quorum
// with every client in when quorum is set), and the ledger holds no
// release twice.
func (k killJob) judge(ctx context.Context, cfg recoveryConfig, res aggregator.Result, quorum bool) (string, error) {
	if len(res.Closes) != k.rounds {
		return InvRoundOpen, fmt.Errorf("%d of %d rounds closed", len(res.Closes), k.rounds)
	}
	for i, rc := range res.Closes {
		switch {
		case rc.Round != uint64(i+1):
			return InvRoundOpen, fmt.Errorf("close %d is of round %d", i+1, rc.Round)
		case quorum && (rc.Reason != "quorum" || len(rc.In) != cfg.banks):
			return InvUpdateLost, fmt.Errorf("round %d closed by %s with %v", rc.Round, rc.Reason, rc.In)
		}
	}
	es, err := ledgerEntries(ctx, cfg)
	if err != nil {
		return InvNoProgress, err
	}
	if err := releasedOnce(es, k.perRound); err != nil {
		return InvReleasedTwice, err
	}
	return "", nil
}

// releasedOnce checks that no client released a channel more often in one
// round than perRound allows (default once), nor one node's embedding
// twice in one round. Calibrations are not releases.
func releasedOnce(es []privacy.Entry, perRound map[privacy.Channel]int) error {
	type key struct {
		client  string
		channel privacy.Channel
		round   uint64
	}
	type nodeKey struct {
		key
		node int64
	}
	seen, nodes := map[key]int{}, map[nodeKey]bool{}
	for _, e := range es {
		if !e.Channel.Releases() {
			continue
		}
		k := key{e.Client, e.Channel, e.Round}
		if seen[k]++; seen[k] > max(perRound[e.Channel], 1) {
			return fmt.Errorf("%s released %s of round %d %d times (ledger seq %d)", e.Client, e.Channel, e.Round, seen[k], e.Seq)
		}
		for _, id := range e.NodeIDs {
			nk := nodeKey{k, id}
			if nodes[nk] {
				return fmt.Errorf("%s released node %d's %s twice in round %d", e.Client, id, e.Channel, e.Round)
			}
			nodes[nk] = true
		}
	}
	return nil
}

// ledgerEntries reads the job's whole ledger stream, read-only.
func ledgerEntries(ctx context.Context, cfg recoveryConfig) ([]privacy.Entry, error) {
	tr, err := deploy.Conn(deploy.ConnOptions{URL: cfg.urls, Name: "auditor"})
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	l, err := bus.OpenJetStreamLedger(ctx, tr.Conn(), cfg.job, bus.JSLedgerOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("scenarios: %s: ledger: %w", cfg.job, err)
	}
	es, err := l.Entries(ctx)
	if err != nil {
		return nil, fmt.Errorf("scenarios: %s: ledger: %w", cfg.job, err)
	}
	return es, nil
}

// watchLedger delivers client's first non-calibration ledger entry of
// round, as the auditor sees it appended.
func watchLedger(cfg recoveryConfig, client string, round uint64) (<-chan privacy.Entry, func(), error) {
	nc, err := bus.Connect(cfg.urls, bus.ConnectOptions{Name: "ledger-watch"})
	if err != nil {
		return nil, nil, fmt.Errorf("scenarios: %s: %w", cfg.job, err)
	}
	hit := make(chan privacy.Entry, 1)
	_, err = nc.Subscribe(bus.LedgerSubject(cfg.job, client), func(m *nats.Msg) {
		var e privacy.Entry
		if json.Unmarshal(m.Data, &e) == nil && e.Round == round && e.Channel.Releases() {
			select {
			case hit <- e:
			default:
			}
		}
	})
	if err == nil {
		err = nc.Flush()
	}
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("scenarios: %s: watch the ledger: %w", cfg.job, err)
	}
	return hit, nc.Close, nil
}

func atDeadline(res aggregator.Result) int {
	n := 0
	for _, rc := range res.Closes {
		if rc.Reason == "deadline" {
			n++
		}
	}
	return n
}

func cloneSpec(p *partySpec) *partySpec {
	c := *p
	return &c
}

// clientDirs maps client ids to directories under root.
func clientDirs(root string, ids []string) []string {
	dirs := make([]string, len(ids))
	for i, id := range ids {
		dirs[i] = filepath.Join(root, id)
	}
	return dirs
}
