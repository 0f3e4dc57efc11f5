package main

import (
	"github.com/spf13/cobra"

	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
)

// What a party keeps in the job's JetStream: the aggregator's durable
// state, and the updates and models too large to go inline.

// recoveryFlags make the aggregator durable: its state in the job's
// JetStream KV bucket and object store, its updates from the job's update
// stream (docs/DEPLOY.md, "Surviving crashes").
type recoveryFlags struct {
	durable bool
	o       deploy.DurableOptions
}

func (r *recoveryFlags) register(cmd *cobra.Command) {
	f, d := cmd.Flags(), deploy.DefaultDurable()
	f.BoolVar(&r.durable, "durable", false, "checkpoint to JetStream and read updates from the job's update stream; a restart resumes the job (agents need --durable too)")
	f.IntVar(&r.o.Replicas, "replicas", d.Replicas, "replicas of the update stream, checkpoint bucket and model store when created (3 on a 3-node cluster)")
	f.DurationVar(&r.o.AckWait, "ack-wait", bus.DefaultUpdateAckWait, "redelivery delay of an update a killed aggregator had not acknowledged")
	f.DurationVar(&r.o.Reannounce, "reannounce", d.Reannounce, "with --durable: announce the open round again after this long without news (0: never)")
	f.DurationVar(&r.o.LeaseTTL, "lease-ttl", aggregator.DefaultLeaseTTL, "with --durable: the job's run lease lapses after this long unrenewed; a second aggregator watches a held lease this long, then refuses (renewed) or takes the job over (lapsed: --resume after a crash)")
}

// options are the durable options of the flags (used with --durable).
func (r *recoveryFlags) options() deploy.DurableOptions {
	o := r.o
	if o.Reannounce == 0 {
		o.Reannounce = -1 // --reannounce 0: never
	}
	return o
}

// blobFlags say how updates and models too large to go inline travel:
// through the party's JetStream blob bucket, by reference (docs/DEPLOY.md,
// "Large models").
type blobFlags struct{ o deploy.BlobOptions }

func (b *blobFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&b.o.InlineLimit, "inline-limit", 0, "bytes above which an update or model goes through the object store by reference (0: 3/4 of the server's max_payload; -1: never)")
	f.DurationVar(&b.o.TTL, "blob-ttl", bus.DefaultBlobTTL, "max age of objects in the blob buckets this party creates")
}

func (b *blobFlags) options() deploy.BlobOptions {
	return b.o
}
