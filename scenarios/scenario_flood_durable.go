package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
)

// The durable-update-flood scenario (issue 29, item 3): in durable mode a
// bank's update subject feeds the aggregator's update stream, which used
// to take everything: 60,000 messages of 10 bytes on one bank's own
// subject made round 1 take 77 s and every honest agent exit. Now the
// stream keeps at most bus.UpdatesPerSender(rounds) messages per sender
// (discard new per subject): the flood stops at the flooder's own bound,
// the aggregator reads and rejects only those, and the honest banks'
// job is bit-identical to the clean durable run.
const durableFloodMessages = 60000

func durableUpdateFloodScenario() Scenario {
	const name = "durable-update-flood"
	return Scenario{
		Name: name,
		Doc:  "durable: a bank sends 60,000 small messages on its own update subject; the update stream keeps its per-sender bound, the rest is refused, the honest job is bit-identical",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			clean, err := runDurableFloodJob(ctx, "dflood-clean", o, false)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: clean run: %w", name, err)
			}
			flooded, err := runDurableFloodJob(ctx, "dflood", o, true)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: flooded run: %w", name, err)
			}
			return judgeDurableFlood(name, clean, flooded), nil
		},
	}
}

// durableFloodRun is what one durable run left.
type durableFloodRun struct {
	agg      aggregator.Result
	sent     int    // flood messages published
	stored   uint64 // of them, kept by the update stream on the flooder's subject
	floodFor time.Duration
}

func runDurableFloodJob(ctx context.Context, job string, o ScenarioOptions, attack bool) (durableFloodRun, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	honest, flooder := floodBankIDs()
	learners, err := logisticLearners(floodBanks, 4, 64, o.Seed)
	if err != nil {
		return durableFloodRun{}, err
	}
	local, err := deploy.StartLocal(ctx, deploy.LocalOptions{Job: job, Banks: append(slices.Clone(honest), flooder),
		Secure: true, Size: bus.JobSize{Params: learners[0].NumParams()}})
	if err != nil {
		return durableFloodRun{}, err
	}
	defer local.Close()
	var run durableFloodRun
	var floodErr error
	onRound := func(rc aggregator.RoundClosed) {
		if attack && rc.Round == floodAfter {
			start := time.Now()
			run.sent, run.stored, floodErr = floodDurableUpdates(ctx, local, job, flooder)
			run.floodFor = time.Since(start)
		}
	}
	agg, agents, closeAll, err := startFedAvg(ctx, local, job, o, fedavgParties{ids: honest, learners: learners,
		rounds: floodRounds, localEpochs: 2, durable: true, slowdown: 20 * time.Millisecond, onRound: onRound})
	if err != nil {
		return durableFloodRun{}, err
	}
	defer closeAll()
	var errs []error
	run.agg, errs, err = runAgentsBeside(ctx, cancel, agg, agents, honest)
	for _, e := range append([]error{err, floodErr}, errs...) {
		if e != nil {
			return run, e
		}
	}
	return run, nil
}

// floodDurableUpdates publishes durableFloodMessages messages of 10 bytes
// on the flooder's own update subject with its own key (`nats --nkey
// bank.nk pub` in a loop), and returns how many the update stream kept on
// that subject, as the aggregator's account sees it.
func floodDurableUpdates(ctx context.Context, local *deploy.Local, job, flooder string) (int, uint64, error) {
	c := local.Conn(flooder)
	nc, err := bus.Connect(c.URL, bus.ConnectOptions{Name: "flooder", Creds: c.Creds})
	if err != nil {
		return 0, 0, err
	}
	defer nc.Close()
	subject := bus.Subject(job, bus.KindUpdate, flooder)
	sent := 0
	for range durableFloodMessages {
		if err := nc.Publish(subject, []byte("0123456789")); err != nil {
			return sent, 0, fmt.Errorf("flood: %w", err)
		}
		sent++
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		return sent, 0, fmt.Errorf("flood: %w", err)
	}
	agg, err := bus.Connect(local.URL(), bus.ConnectOptions{Name: "observer", Creds: local.Creds(bus.AggregatorID)})
	if err != nil {
		return sent, 0, err
	}
	defer agg.Close()
	js, err := jetstream.New(agg)
	if err != nil {
		return sent, 0, err
	}
	st, err := js.Stream(ctx, bus.UpdateStreamName(job))
	if err != nil {
		return sent, 0, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return sent, 0, err
	}
	return sent, info.State.Subjects[subject], nil
}

func judgeDurableFlood(name string, clean, flooded durableFloodRun) Outcome {
	honest, _ := floodBankIDs()
	if out, ok := checkHonestCloses(name, honest, namedResult{"clean", clean.agg}, namedResult{"flooded", flooded.agg}); !ok {
		return out
	}
	if !bitEqual(clean.agg.Model, flooded.agg.Model) {
		return fail(name, InvResultChanged, "the flooded run's final model differs from the clean run's")
	}
	bound := uint64(bus.UpdatesPerSender(floodRounds))
	rejected := totalRejects(flooded.agg.Rejects) - totalRejects(clean.agg.Rejects)
	switch {
	case flooded.sent != durableFloodMessages:
		return fail(name, InvNotExercised, "the flooder sent %d of %d messages", flooded.sent, durableFloodMessages)
	case flooded.stored == 0 || flooded.stored > bound:
		return fail(name, InvFloodUncounted, "the update stream kept %d of the flooder's messages, want 1 to its bound %d", flooded.stored, bound)
	case rejected < flooded.stored:
		return fail(name, InvFloodUncounted, "%d flood messages stored, the aggregator rejected %d", flooded.stored, rejected)
	}
	return Outcome{Metrics: map[string]float64{
		"flood_messages": float64(flooded.sent),
		"flood_stored":   float64(flooded.stored),
		"flood_refused":  float64(uint64(flooded.sent) - flooded.stored),
		"flood_rejected": float64(rejected),
		"per_sender_cap": float64(bound),
		"flood_seconds":  flooded.floodFor.Seconds(),
		"rounds":         float64(len(flooded.agg.Closes)),
	}}
}
