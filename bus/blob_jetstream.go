package bus

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultBlobTTL is how long a blob bucket keeps an object (the stream's
// max age): a backstop behind the sender's own deletion (BlobStoreOptions.
// KeepRounds). A body is read within seconds of being sent; a durable
// aggregator down for longer than this loses the unread updates of its
// open round, which their banks then send again when they rejoin.
const DefaultBlobTTL = time.Hour

// DefaultBlobKeepRounds is how many rounds of its own blobs a party keeps.
const DefaultBlobKeepRounds = 2

// BlobStoreOptions configure a party's JetStreamBlobs.
type BlobStoreOptions struct {
	// Create lets the party create its own bucket when it does not exist:
	// on an open server, and in the accounts layout, where the bucket is in
	// the party's own account and captures only what reaches it.
	Create bool
	// TTL is the max age of objects in buckets this party creates; 0:
	// DefaultBlobTTL.
	TTL time.Duration
	// KeepRounds: storing a body of round r deletes the party's objects of
	// rounds up to r − KeepRounds; 0: DefaultBlobKeepRounds.
	KeepRounds uint64
	Replicas   int // of buckets this party creates; 0: 1
	// MaxBytes bounds a bucket this party creates; 0: BlobBucketBytes of
	// the connection's payload limit. A full bucket refuses the next body,
	// at its sender.
	MaxBytes int64
	// Accounts says the job runs in the accounts layout (JobAccounts):
	// the party's own bucket is in its own account, where it creates it,
	// and another party's bucket is read through that party's exported
	// read API, under BlobAPIPrefix(owner).
	Accounts bool
}

func (o BlobStoreOptions) withDefaults() BlobStoreOptions {
	if o.TTL <= 0 {
		o.TTL = DefaultBlobTTL
	}
	if o.KeepRounds == 0 {
		o.KeepRounds = DefaultBlobKeepRounds
	}
	o.Replicas = max(o.Replicas, 1)
	return o
}

// BlobStats count a party's blob traffic.
type BlobStats struct {
	Puts, PutBytes, Fetches, FetchBytes, Deleted uint64
}

// JetStreamBlobs is a party's BlobStore on JetStream: it writes its own
// bucket (BlobBucketName) with nats.go's object store, and reads other
// parties' buckets by message gets alone (the object store layout: a meta
// message $O.<bucket>.M.<name> and chunks $O.<bucket>.C.<nuid>), not with
// nats.go's Get, which creates an ordered push consumer: the permissions
// refuse every consumer on blob streams, as on the ledger stream, since a
// push consumer's deliver subject could be any subject of the job. Safe
// for concurrent use.
type JetStreamBlobs struct {
	nc         *nats.Conn
	js         jetstream.JetStream
	job, party string
	bucket     string
	o          BlobStoreOptions

	mu    sync.Mutex
	own   jetstream.ObjectStore
	read  map[string]jetstream.Stream // by bucket
	kept  []keptBlob
	stats BlobStats
}

type keptBlob struct {
	round uint64
	name  string
}

// NewJetStreamBlobs returns party's blob store in job on nc. It does no
// I/O: the own bucket is bound (or created, with o.Create) at the first
// Put, others' at their first Fetch.
func NewJetStreamBlobs(nc *nats.Conn, job, party string, o BlobStoreOptions) (*JetStreamBlobs, error) {
	if !ValidID(job) || !ValidID(party) {
		return nil, fmt.Errorf("bus: blob store: job %q or party %q is not [a-z0-9-]{1,64}", job, party)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: blob store of %s: %w", party, err)
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = BlobBucketBytes(int(nc.MaxPayload()))
	}
	return &JetStreamBlobs{nc: nc, js: js, job: job, party: party, bucket: BlobBucketName(job, party), o: o.withDefaults(),
		read: map[string]jetstream.Stream{}}, nil
}

// Bucket is the party's own bucket.
func (b *JetStreamBlobs) Bucket() string { return b.bucket }

// Stats returns the counters so far.
func (b *JetStreamBlobs) Stats() BlobStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// blobBucketConfig is the configuration of party's bucket.
func blobBucketConfig(job, party string, o BlobStoreOptions) jetstream.ObjectStoreConfig {
	return jetstream.ObjectStoreConfig{Bucket: BlobBucketName(job, party),
		Description: "graphfed bodies sent by reference by " + party + " in job " + job,
		TTL:         o.TTL, Storage: jetstream.FileStorage, Replicas: o.Replicas, MaxBytes: o.MaxBytes}
}

// EnsureBlobBuckets creates (or updates) the blob buckets of parties in
// job: the aggregator makes its own and every bank's of the keyring at its
// start.
func EnsureBlobBuckets(ctx context.Context, nc *nats.Conn, job string, parties []string, o BlobStoreOptions) error {
	o = o.withDefaults()
	if o.MaxBytes == 0 {
		o.MaxBytes = BlobBucketBytes(int(nc.MaxPayload()))
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("bus: blob buckets of %s: %w", job, err)
	}
	ctx, cancel := bound(ctx, DefaultJSTimeout)
	defer cancel()
	for _, p := range parties {
		if !ValidID(p) {
			return fmt.Errorf("bus: blob buckets of %s: party %q is not [a-z0-9-]{1,64}", job, p)
		}
		err := retryJS(ctx, createRetry, func(ctx context.Context) error {
			_, err := js.CreateOrUpdateObjectStore(ctx, blobBucketConfig(job, p, o))
			return err
		})
		if err != nil {
			return fmt.Errorf("bus: blob bucket %s: %w", BlobBucketName(job, p), err)
		}
	}
	return nil
}

// ownStore binds (or creates) the party's bucket.
func (b *JetStreamBlobs) ownStore(ctx context.Context) (jetstream.ObjectStore, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.own != nil {
		return b.own, nil
	}
	var obs jetstream.ObjectStore
	err := retryJS(ctx, createRetry, func(ctx context.Context) error {
		var err error
		obs, err = b.js.ObjectStore(ctx, b.bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) && b.o.Create {
			obs, err = b.js.CreateObjectStore(ctx, blobBucketConfig(b.job, b.party, b.o))
			if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				obs, err = b.js.ObjectStore(ctx, b.bucket)
			}
		}
		return err
	})
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("bucket %s does not exist, and this party may not create it: %w", b.bucket, err)
	}
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", b.bucket, err)
	}
	b.own = obs
	return obs, nil
}

// Put implements BlobStore. After storing the object it deletes the
// party's objects KeepRounds rounds older than round.
func (b *JetStreamBlobs) Put(ctx context.Context, round uint64, name string, data []byte) (BlobRef, error) {
	ctx, cancel := bound(ctx, DefaultJSTimeout)
	defer cancel()
	obs, err := b.ownStore(ctx)
	if err != nil {
		return BlobRef{}, fmt.Errorf("bus: blob store of %s: put %s: %w", b.party, name, err)
	}
	err = retryJS(ctx, bulkRetry, func(ctx context.Context) error {
		return putObject(ctx, b.nc, obs, name, data)
	})
	if err != nil {
		return BlobRef{}, fmt.Errorf("bus: blob store of %s: put %s/%s: %w", b.party, b.bucket, name, err)
	}
	b.mu.Lock()
	b.stats.Puts++
	b.stats.PutBytes += uint64(len(data))
	b.kept = append(b.kept, keptBlob{round: round, name: name})
	var old []keptBlob
	keep := b.kept[:0]
	for _, k := range b.kept {
		if k.round+b.o.KeepRounds <= round {
			old = append(old, k)
		} else {
			keep = append(keep, k)
		}
	}
	b.kept = keep
	b.mu.Unlock()
	for _, k := range old {
		// A failed deletion leaves the object to the bucket's TTL.
		if obs.Delete(ctx, k.name) == nil {
			b.mu.Lock()
			b.stats.Deleted++
			b.mu.Unlock()
		}
	}
	return NewBlobRef(b.bucket, name, data), nil
}

// readStream binds the stream behind bucket for message gets.
func (b *JetStreamBlobs) readStream(ctx context.Context, bucket string) (jetstream.Stream, error) {
	b.mu.Lock()
	st := b.read[bucket]
	b.mu.Unlock()
	if st != nil {
		return st, nil
	}
	js := b.js
	if b.o.Accounts {
		owner, ok := strings.CutPrefix(bucket, BlobBucketName(b.job, ""))
		if !ok || !ValidID(owner) {
			return nil, fmt.Errorf("bucket %s is no party's of job %s", bucket, b.job)
		}
		var err error
		if js, err = jetstream.NewWithAPIPrefix(b.nc, BlobAPIPrefix(owner)); err != nil {
			return nil, err
		}
	}
	err := retryJS(ctx, defaultRetry, func(ctx context.Context) error {
		var err error
		st, err = js.Stream(ctx, "OBJ_"+bucket)
		return err
	})
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.read[bucket] = st
	b.mu.Unlock()
	return st, nil
}

// metaRetries bound the retries of a reference whose object is not found:
// a direct get may be answered by a replica that has not caught up yet.
var metaRetries = []time.Duration{50 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond}

// Fetch implements BlobStore.
func (b *JetStreamBlobs) Fetch(ctx context.Context, ref BlobRef) ([]byte, error) {
	missing := func(format string, args ...any) ([]byte, error) {
		return nil, &RejectError{Reason: ReasonBlobMissing, Err: fmt.Errorf("%s/%s: "+format, append([]any{ref.Bucket, ref.Name}, args...)...)}
	}
	ctx, cancel := bound(ctx, DefaultJSTimeout)
	defer cancel()
	st, err := b.readStream(ctx, ref.Bucket)
	if err != nil {
		return missing("%w", err)
	}
	metaSubj := "$O." + ref.Bucket + ".M." + base64.URLEncoding.EncodeToString([]byte(ref.Name))
	var m *jetstream.RawStreamMsg
	for i := 0; ; i++ {
		err = retryJS(ctx, defaultRetry, func(ctx context.Context) error {
			var err error
			m, err = st.GetLastMsgForSubject(ctx, metaSubj)
			return err
		})
		if !errors.Is(err, jetstream.ErrMsgNotFound) || i == len(metaRetries) {
			break
		}
		select {
		case <-ctx.Done():
			return missing("%w", ctx.Err())
		case <-time.After(metaRetries[i]):
		}
	}
	if err != nil {
		return missing("%w", err)
	}
	var info jetstream.ObjectInfo
	if err := json.Unmarshal(m.Data, &info); err != nil {
		return missing("object meta: %w", err)
	}
	switch {
	case info.Deleted:
		return missing("deleted")
	case info.Size != ref.Size:
		return nil, &RejectError{Reason: ReasonBlobDigest, Err: fmt.Errorf("%s/%s: stored %d bytes, the reference says %d", ref.Bucket, ref.Name, info.Size, ref.Size)}
	case !validBucket(info.NUID):
		return missing("object meta: chunk id %q", info.NUID)
	}
	chunkSubj := "$O." + ref.Bucket + ".C." + info.NUID
	data := make([]byte, 0, ref.Size)
	for seq := uint64(1); uint64(len(data)) < ref.Size; {
		var c *jetstream.RawStreamMsg
		err := retryJS(ctx, defaultRetry, func(ctx context.Context) error {
			var err error
			c, err = st.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(chunkSubj))
			return err
		})
		if err != nil {
			return missing("chunk after %d bytes: %w", len(data), err)
		}
		if uint64(len(data))+uint64(len(c.Data)) > ref.Size || len(c.Data) == 0 {
			return nil, &RejectError{Reason: ReasonBlobDigest, Err: fmt.Errorf("%s/%s: chunks run past the reference's %d bytes", ref.Bucket, ref.Name, ref.Size)}
		}
		data = append(data, c.Data...)
		seq = c.Sequence + 1
	}
	b.mu.Lock()
	b.stats.Fetches++
	b.stats.FetchBytes += uint64(len(data))
	b.mu.Unlock()
	return data, nil
}

// putObject stores data as object name in chunks that fit the server's
// payload limit: nats.go's default of 128 KiB does not fit a small one.
func putObject(ctx context.Context, nc *nats.Conn, obs jetstream.ObjectStore, name string, data []byte) error {
	chunk := uint32(min(128<<10, max(1<<10, nc.MaxPayload()/2)))
	_, err := obs.Put(ctx, jetstream.ObjectMeta{Name: name, Opts: &jetstream.ObjectMetaOptions{ChunkSize: chunk}}, bytes.NewReader(data))
	return err
}
