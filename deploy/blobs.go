package deploy

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"graphfed/bus"
)

// BlobOptions say how a party sends updates and models too large to go
// inline: through its JetStream blob bucket, by reference (bus.BlobRef).
type BlobOptions struct {
	// InlineLimit is the sealed size above which an update or model goes
	// by reference; 0: three quarters of the server's payload limit
	// (bus.InlineLimitFor); negative: never (a body over the payload limit
	// is then an error naming it). `--inline-limit`.
	InlineLimit int
	// TTL is the max age of objects in the blob buckets this party
	// creates; 0: bus.DefaultBlobTTL.
	TTL time.Duration
}

// attachBlobs gives party's transport its blob store: bodies over the
// inline limit go by reference, and bodies others sent so are read. Each
// party creates its own bucket when it is missing: on an open server, and
// in the accounts layout, where the bucket is in the party's own account
// and other parties read it through its exports.
func attachBlobs(tr *bus.NATSTransport, job, party string, o BlobOptions, accounts bool) error {
	if o.InlineLimit < 0 {
		tr.SetBlobs(nil, 0)
		return nil
	}
	store, err := bus.NewJetStreamBlobs(tr.Conn(), job, party, bus.BlobStoreOptions{Create: true, TTL: o.TTL, Accounts: accounts})
	if err != nil {
		return fmt.Errorf("blobs: %w", err)
	}
	tr.SetBlobs(store, o.InlineLimit)
	return nil
}

// ensureBlobBuckets creates the aggregator's own blob bucket up front in
// the accounts layout, where every party makes its own; without a keyring
// each party creates its own at its first large body. A server without
// JetStream is no reason to stop: the job runs as long as its models fit
// inline, and a larger one fails naming the payload limit.
func ensureBlobBuckets(ctx context.Context, tr *bus.NATSTransport, job string, accounts bool, o BlobOptions, log zerolog.Logger) {
	if !accounts || o.InlineLimit < 0 {
		return
	}
	parties := []string{bus.AggregatorID}
	if err := bus.EnsureBlobBuckets(ctx, tr.Conn(), job, parties, bus.BlobStoreOptions{TTL: o.TTL}); err != nil {
		log.Warn().Err(err).Str("job", job).Int("max_payload", int(tr.Conn().MaxPayload())).
			Msg("no blob buckets: updates and models must fit the server's payload limit")
	}
}

// BlobStats are the party's blob traffic so far (zero without a store).
func blobStats(tr *bus.NATSTransport) bus.BlobStats {
	if tr == nil {
		return bus.BlobStats{}
	}
	if s, ok := tr.Carriage().Blobs.(*bus.JetStreamBlobs); ok {
		return s.Stats()
	}
	return bus.BlobStats{}
}
