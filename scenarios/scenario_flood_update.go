package scenarios

import (
	"context"
	"crypto/rand"
	"fmt"
	"math"
	"slices"
	"time"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
)

// The update-flood scenario (issue 14, item 2): one bank publishes 30
// messages of the payload limit on its own update subject during a run,
// the attack that used to get the aggregator cut off as a slow consumer
// and lose every other bank's update. It runs a small FedAvg job of three
// honest banks on an embedded server started from the configuration
// `graphfed keys` writes for the job's model size (deploy.LocalOptions.Secure
// and Size: every party on its own key, the payload limit the job's), once
// clean and once flooded by a fourth bank of the keyring with its own key.
//
// The flood arrives while the aggregator's round loop is held in its
// round-closed callback, as a long aggregation would hold it: every flood
// message then meets a queue the loop does not drain, so the bound is
// what decides, not a race between the flood and the loop. The loop then
// opens the next round with the flood's survivors still queued, and the
// honest banks' updates arrive beside them.

const (
	floodBanks  = 3
	floodRounds = 4
	// floodAfter is the round after whose close the flood is sent.
	floodAfter = 2
	// floodMessages is the 30 messages of the payload limit.
	floodMessages = 30
)

// InvFloodUncounted: a flood message was neither dropped and counted by
// the aggregator's queue nor rejected by its validators.
const InvFloodUncounted = "flood-uncounted"

// InvCutOff: a party's connection was cut, or its client library dropped
// messages, during the flood.
const InvCutOff = "cut-off"

func updateFloodScenario() Scenario {
	const name = "update-flood"
	return Scenario{
		Name: name,
		Doc:  "a bank sends 30 messages of the payload limit on its own update subject (server configured as graphfed keys does): no other bank's update lost, the final model bit-identical, the drops counted",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			clean, err := runFloodJob(ctx, "flood-clean", o, false)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: clean run: %w", name, err)
			}
			flooded, err := runFloodJob(ctx, "flood", o, true)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: flooded run: %w", name, err)
			}
			return judgeFlood(name, clean, flooded), nil
		},
	}
}

// floodRun is what one run left.
type floodRun struct {
	agg      aggregator.Result
	agents   []bus.ConnCounts
	payload  int // the server's payload limit
	flooder  string
	sent     int           // flood messages published
	floodFor time.Duration // how long the flood held the round loop
}

func floodBankIDs() (honest []string, flooder string) {
	for i := range floodBanks {
		honest = append(honest, deploy.ClientID(i))
	}
	return honest, deploy.ClientID(floodBanks)
}

// runFloodJob runs the job; with attack, the flooder floods after round
// floodAfter closed.
func runFloodJob(ctx context.Context, job string, o ScenarioOptions, attack bool) (floodRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	honest, flooder := floodBankIDs()
	learners, err := logisticLearners(floodBanks, 4, 64, o.Seed)
	if err != nil {
		return floodRun{}, err
	}
	// The keys as `graphfed keys --max-params N --max-emb-rows 0` makes
	// them for this job, the flooder's among them.
	local, err := deploy.StartLocal(ctx, deploy.LocalOptions{Job: job, Banks: append(slices.Clone(honest), flooder),
		Secure: true, Size: bus.JobSize{Params: learners[0].NumParams()}})
	if err != nil {
		return floodRun{}, err
	}
	defer local.Close()
	run := floodRun{payload: local.Server().MaxPayload(), flooder: flooder}
	var agg *deploy.Aggregator
	var floodErr error
	onRound := func(rc aggregator.RoundClosed) {
		if attack && rc.Round == floodAfter {
			start := time.Now()
			run.sent, floodErr = floodUpdates(ctx, local, job, flooder, agg.Server())
			run.floodFor = time.Since(start)
		}
	}
	// A quorum of the honest banks and a distant deadline: every round
	// closes with exactly them, so both runs are comparable bit for bit.
	agg, agents, closeAll, err := startFedAvg(ctx, local, job, o, fedavgParties{ids: honest, learners: learners,
		rounds: floodRounds, localEpochs: 2, slowdown: 20 * time.Millisecond, onRound: onRound})
	if err != nil {
		return floodRun{}, err
	}
	defer closeAll()
	var errs []error
	run.agg, errs, err = runAgentsBeside(ctx, cancel, agg, agents, honest)
	for _, a := range agents {
		run.agents = append(run.agents, a.ConnCounts())
	}
	for _, e := range append([]error{err, floodErr}, errs...) {
		if e != nil {
			return run, e
		}
	}
	return run, nil
}

// floodUpdates publishes floodMessages messages of exactly the server's
// payload limit on the flooder's own update subject, with the flooder's
// key (what `nats --nkey bank.nk pub` does), and waits until the
// aggregator's queue has received all of them.
func floodUpdates(ctx context.Context, local *deploy.Local, job, flooder string, srv *aggregator.Server) (int, error) {
	c := local.Conn(flooder)
	nc, err := bus.Connect(c.URL, bus.ConnectOptions{Name: "flooder", Creds: c.Creds})
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	junk := make([]byte, nc.MaxPayload())
	rand.Read(junk)
	subject := bus.Subject(job, bus.KindUpdate, flooder)
	sent := 0
	for range floodMessages {
		if err := nc.Publish(subject, junk); err != nil {
			return sent, fmt.Errorf("flood: %w", err)
		}
		sent++
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return sent, fmt.Errorf("flood: %w", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for srv.InboxStats()[flooder].Received < uint64(sent) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return sent, fmt.Errorf("flood: the aggregator received %d of %d messages", srv.InboxStats()[flooder].Received, sent)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return sent, nil
}

func judgeFlood(name string, clean, flooded floodRun) Outcome {
	honest, flooder := floodBankIDs()
	if out, ok := checkHonestCloses(name, honest, namedResult{"clean", clean.agg}, namedResult{"flooded", flooded.agg}); !ok {
		return out
	}
	if !bitEqual(clean.agg.Model, flooded.agg.Model) {
		return fail(name, InvResultChanged, "the flooded run's final model differs from the clean run's")
	}
	if flooded.sent != floodMessages {
		return fail(name, InvNotExercised, "the flooder sent %d of %d messages", flooded.sent, floodMessages)
	}
	f := flooded.agg.Flow
	st := f.Senders[flooder]
	rejected := totalRejects(flooded.agg.Rejects) - totalRejects(clean.agg.Rejects)
	switch {
	case st.Received != uint64(flooded.sent):
		return fail(name, InvFloodUncounted, "the aggregator's queue received %d of the %d flood messages", st.Received, flooded.sent)
	case st.Dropped == 0:
		return fail(name, InvNotExercised, "no flood message was dropped: the queue bound was not reached")
	case st.Dropped+rejected != st.Received:
		return fail(name, InvFloodUncounted, "%d flood messages: %d dropped and %d rejected", st.Received, st.Dropped, rejected)
	}
	for _, id := range honest {
		if d := f.Senders[id].Dropped; d != 0 {
			return fail(name, InvUpdateLost, "the aggregator's queue dropped %d messages of honest %s", d, id)
		}
	}
	if f.PendingDropped != 0 || f.Conn.Disconnects != 0 || f.Conn.SlowConsumer != 0 {
		return fail(name, InvCutOff, "aggregator: %d messages dropped by the client library, connection events %+v", f.PendingDropped, f.Conn)
	}
	for i, c := range flooded.agents {
		if c.Disconnects != 0 || c.SlowConsumer != 0 {
			return fail(name, InvCutOff, "%s: connection events %+v", honest[i], c)
		}
	}
	return Outcome{Metrics: map[string]float64{
		"payload_limit_bytes": float64(flooded.payload),
		"flood_messages":      float64(flooded.sent),
		"flood_bytes":         float64(flooded.sent * flooded.payload),
		"flood_dropped":       float64(st.Dropped),
		"flood_rejected":      float64(rejected),
		"flood_seconds":       flooded.floodFor.Seconds(),
		"rounds":              float64(len(flooded.agg.Closes)),
	}}
}

// checkHonestCloses fails unless every run closed floodRounds rounds, each
// at quorum with exactly the honest banks: what the flood and limit
// scenarios require of the clean and the attacked run alike.
func checkHonestCloses(name string, honest []string, runs ...namedResult) (Outcome, bool) {
	for _, r := range runs {
		if n := len(r.res.Closes); n != floodRounds {
			return fail(name, InvNoProgress, "%s run: %d of %d rounds closed", r.what, n, floodRounds), false
		}
		for _, rc := range r.res.Closes {
			if in := slices.Sorted(slices.Values(rc.In)); !slices.Equal(in, honest) || rc.Reason != "quorum" {
				return fail(name, InvUpdateLost, "%s run: round %d closed by %s with %v, want every honest bank %v",
					r.what, rc.Round, rc.Reason, rc.In, honest), false
			}
		}
	}
	return Outcome{}, true
}

// namedResult is one run's aggregator result and what to call it.
type namedResult struct {
	what string
	res  aggregator.Result
}

func totalRejects(r map[string]uint64) uint64 {
	var n uint64
	for _, v := range r {
		n += v
	}
	return n
}

// bitEqual compares two models bit for bit (NaN included).
func bitEqual(a, b []float32) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
