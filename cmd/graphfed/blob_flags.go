package main

import (
	"time"

	"github.com/spf13/cobra"

	"graphfed/bus"
	"graphfed/deploy"
)

// blobFlags say how updates and models too large to go inline travel:
// through the party's JetStream blob bucket, by reference (docs/DEPLOY.md,
// "Large models").
type blobFlags struct {
	inline int
	ttl    time.Duration
}

func (b *blobFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&b.inline, "inline-limit", 0, "bytes above which an update or model goes through the object store by reference (0: 3/4 of the server's max_payload; -1: never)")
	f.DurationVar(&b.ttl, "blob-ttl", bus.DefaultBlobTTL, "max age of objects in the blob buckets this party creates")
}

func (b *blobFlags) options() deploy.BlobOptions {
	return deploy.BlobOptions{InlineLimit: b.inline, TTL: b.ttl}
}
