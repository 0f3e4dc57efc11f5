package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
)

// The large-model-by-reference scenario (issue 14, Deliver 2): a FedAvg
// job whose updates and models are larger than the server's payload limit
// runs on an embedded server configured as `graphfed keys` configures it
// (every party on its own key, under its permissions), with a 64 KiB
// payload limit. Every update and model then travels through its sender's
// blob bucket by reference. The final model must be bit-identical to the
// same job's (same seeded noise) on a server whose payload limit holds
// the models inline. After round 1 an insider with bank 0's key sends a
// signed update whose reference's digest does not match the object it
// names: the aggregator must reject it as blob_digest, count it, and go
// on.

const (
	largeBanks  = 3
	largeRounds = 3
	// largeDim makes a model of 40,001 parameters: a 160 KB update, 2.5
	// times the 64 KiB payload limit of the by-reference run.
	largeDim = 40_000
	// largeMaxPayload is the by-reference run's server payload limit.
	largeMaxPayload = 64 << 10
)

// InvBadRefAccepted: a reference whose digest does not match its object
// was not rejected and counted as blob_digest.
const InvBadRefAccepted = "bad-ref-accepted"

func largeModelScenario() Scenario {
	const name = "large-model-by-reference"
	return Scenario{
		Name: name,
		Doc:  "a job whose models exceed the 64 KiB payload limit sends them through the object store by reference (server configured as graphfed keys does): final model bit-identical to the inline run, a bad digest rejected and counted",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			inline, err := runLargeJob(ctx, "large-inline", o, 0, false)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: inline run: %w", name, err)
			}
			byRef, err := runLargeJob(ctx, "large-ref", o, largeMaxPayload, true)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: by-reference run: %w", name, err)
			}
			out := judgeLarge(name, inline, byRef)
			if out.FailedInvariant != "" {
				return out, nil
			}
			// Again with --durable: the references travel in the update
			// stream and the checkpoints, the bodies in the blob buckets.
			durable, err := runLargeJob(ctx, "large-ref-durable", o, -largeMaxPayload, false)
			if err != nil {
				return Outcome{}, fmt.Errorf("scenarios: %s: durable by-reference run: %w", name, err)
			}
			if d := durable.aggBlobs; d.Puts < largeRounds || d.Fetches < largeBanks*largeRounds {
				return fail(name, InvNotExercised, "durable run: the aggregator put %d models and fetched %d updates by reference", d.Puts, d.Fetches), nil
			}
			if !bitEqual(inline.agg.Model, durable.agg.Model) {
				return fail(name, InvResultChanged, "the durable by-reference run's final model differs from the inline run's"), nil
			}
			out.Metrics["durable_blob_fetches"] = float64(durable.aggBlobs.Fetches)
			return out, nil
		},
	}
}

// largeRun is what one run left.
type largeRun struct {
	agg        aggregator.Result
	payload    int // the server's payload limit
	modelBytes int // one update's body
	aggBlobs   bus.BlobStats
	bankBlobs  []bus.BlobStats
	injected   bool // the bad reference was sent
}

// runLargeJob runs the job on a server of payload limit maxPayload (0:
// the job's, from its size); a negative maxPayload is its opposite with
// every party durable.
func runLargeJob(ctx context.Context, job string, o ScenarioOptions, maxPayload int, attack bool) (largeRun, error) {
	durable := maxPayload < 0
	maxPayload = max(maxPayload, -maxPayload)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var banks []string
	for i := range largeBanks {
		banks = append(banks, deploy.ClientID(i))
	}
	learners, err := logisticLearners(largeBanks, largeDim, 32, o.Seed)
	if err != nil {
		return largeRun{}, err
	}
	params := learners[0].NumParams()
	local, err := deploy.StartLocal(ctx, deploy.LocalOptions{Job: job, Banks: banks, Secure: true,
		Size: bus.JobSize{Params: params}, MaxPayload: maxPayload})
	if err != nil {
		return largeRun{}, err
	}
	defer local.Close()
	run := largeRun{payload: local.Server().MaxPayload(), modelBytes: 4 * params}
	var injectErr error
	onRound := func(rc aggregator.RoundClosed) {
		if attack && rc.Round == 1 {
			injectErr = injectBadRef(ctx, local, job, banks[0], params)
			run.injected = injectErr == nil
		}
	}
	agg, agents, closeAll, err := startFedAvg(ctx, local, job, o, fedavgParties{ids: banks, learners: learners,
		rounds: largeRounds, localEpochs: 1, durable: durable, onRound: onRound})
	if err != nil {
		return largeRun{}, err
	}
	defer closeAll()
	var errs []error
	run.agg, errs, err = runAgentsBeside(ctx, cancel, agg, agents, banks)
	run.aggBlobs = agg.BlobStats()
	for _, a := range agents {
		run.bankBlobs = append(run.bankBlobs, a.BlobStats())
	}
	for _, e := range append([]error{err, injectErr}, errs...) {
		if e != nil {
			return run, e
		}
	}
	return run, nil
}

// injectBadRef sends, with bank's key and on its connection, what a
// compromised bank process could: an object in its own bucket and a
// signed update for round 2 whose reference names that object with the
// digest of other bytes.
func injectBadRef(ctx context.Context, local *deploy.Local, job, bank string, params int) error {
	c := local.Conn(bank)
	nc, err := bus.Connect(c.URL, bus.ConnectOptions{Name: "insider", Creds: c.Creds})
	if err != nil {
		return err
	}
	defer nc.Close()
	signer, err := bus.LoadSigner(bank, c.Creds)
	if err != nil {
		return err
	}
	store, err := bus.NewJetStreamBlobs(nc, job, bank, bus.BlobStoreOptions{})
	if err != nil {
		return err
	}
	body, err := msgpack.Marshal(&bus.Update{Round: 2, Weight: 1e6})
	if err != nil {
		return err
	}
	const seq = 999_999 // far above the bank's own numbering in this short job
	ref, err := store.Put(ctx, 2, fmt.Sprintf("update-2-%d", seq), body)
	if err != nil {
		return fmt.Errorf("insider's put: %w", err)
	}
	ref.Digest = bus.NewBlobRef(ref.Bucket, ref.Name, append(slices.Clone(body), 0)).Digest // another body's digest
	env := bus.Envelope{Job: job, Kind: bus.KindUpdate, From: bank, Round: 2, Seq: seq, Time: time.Now().UnixNano()}
	if env.Ref, err = ref.Encode(); err != nil {
		return err
	}
	if err := signer.Sign(&env); err != nil {
		return err
	}
	data, err := msgpack.Marshal(&env)
	if err != nil {
		return err
	}
	if err := nc.Publish(bus.Subject(job, bus.KindUpdate, bank), data); err != nil {
		return fmt.Errorf("insider's publish: %w", err)
	}
	return nc.FlushWithContext(ctx)
}

func judgeLarge(name string, inline, byRef largeRun) Outcome {
	banks := make([]string, largeBanks)
	for i := range banks {
		banks[i] = deploy.ClientID(i)
	}
	for _, r := range []struct {
		what string
		run  largeRun
	}{{"inline", inline}, {"by-reference", byRef}} {
		if n := len(r.run.agg.Closes); n != largeRounds {
			return fail(name, InvNoProgress, "%s run: %d of %d rounds closed", r.what, n, largeRounds)
		}
		for _, rc := range r.run.agg.Closes {
			if in := slices.Sorted(slices.Values(rc.In)); !slices.Equal(in, banks) || rc.Reason != "quorum" {
				return fail(name, InvUpdateLost, "%s run: round %d closed by %s with %v, want every bank", r.what, rc.Round, rc.Reason, rc.In)
			}
		}
	}
	switch {
	case inline.payload < 2*inline.modelBytes || inline.aggBlobs.Puts != 0 || inline.aggBlobs.Fetches != 0:
		return fail(name, InvNotExercised, "inline run: payload limit %d for %d-byte models, aggregator blobs %+v", inline.payload, inline.modelBytes, inline.aggBlobs)
	case byRef.payload >= byRef.modelBytes:
		return fail(name, InvNotExercised, "by-reference run: payload limit %d holds the %d-byte models", byRef.payload, byRef.modelBytes)
	case byRef.aggBlobs.Puts < largeRounds || byRef.aggBlobs.Fetches < largeBanks*largeRounds:
		return fail(name, InvNotExercised, "by-reference run: the aggregator put %d models and fetched %d updates by reference", byRef.aggBlobs.Puts, byRef.aggBlobs.Fetches)
	}
	for i, st := range byRef.bankBlobs {
		if st.Puts < largeRounds || st.Fetches < largeRounds {
			return fail(name, InvNotExercised, "by-reference run: %s put %d updates and fetched %d models by reference", banks[i], st.Puts, st.Fetches)
		}
	}
	if !bitEqual(inline.agg.Model, byRef.agg.Model) {
		return fail(name, InvResultChanged, "the by-reference run's final model differs from the inline run's")
	}
	if !byRef.injected {
		return fail(name, InvNotExercised, "the bad reference was not sent")
	}
	if got, want := byRef.agg.Rejects[bus.ReasonBlobDigest], inline.agg.Rejects[bus.ReasonBlobDigest]+1; got != want {
		return fail(name, InvBadRefAccepted, "%d blob_digest rejects, want %d (rejects %v)", got, want, byRef.agg.Rejects)
	}
	var deleted uint64
	for _, st := range append(byRef.bankBlobs, byRef.aggBlobs) {
		deleted += st.Deleted
	}
	return Outcome{Metrics: map[string]float64{
		"payload_limit_bytes":        float64(byRef.payload),
		"inline_payload_limit_bytes": float64(inline.payload),
		"model_bytes":                float64(byRef.modelBytes),
		"aggregator_blob_puts":       float64(byRef.aggBlobs.Puts),
		"aggregator_blob_fetches":    float64(byRef.aggBlobs.Fetches),
		"blob_bytes_put":             float64(byRef.aggBlobs.PutBytes),
		"blobs_deleted":              float64(deleted),
		"blob_digest_rejects":        float64(byRef.agg.Rejects[bus.ReasonBlobDigest]),
		"rounds":                     float64(len(byRef.agg.Closes)),
	}}
}
