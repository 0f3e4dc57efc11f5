package bus

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// Under the permissions of `graphfed keys`, the aggregator creates every
// blob bucket, each bank writes its own and reads the aggregator's, the
// aggregator reads every bank's, all without a permissions violation; a
// bank can neither write another bank's bucket, nor read another bank's
// blobs, nor create a bucket or a consumer on a blob stream.
func TestBlobPermissions(t *testing.T) {
	e := startSecureServer(t)
	agg, a, b := e.connect(t, AggregatorID), e.connect(t, "bank-a"), e.connect(t, "bank-b")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := EnsureBlobBuckets(ctx, agg.nc, secJob, append([]string{AggregatorID}, secBanks...), BlobStoreOptions{}); err != nil {
		t.Fatalf("aggregator creates the blob buckets: %v; violations %v", err, agg.violations(t))
	}
	store := func(p *party, id string) *JetStreamBlobs {
		s, err := NewJetStreamBlobs(p.nc, secJob, id, BlobStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	aggS, aS, bS := store(agg, AggregatorID), store(a, "bank-a"), store(b, "bank-b")
	body := bytes.Repeat([]byte("update body "), 30<<10) // 360 KiB: several chunks
	ref, err := aS.Put(ctx, 1, "update-1-1", body)
	if err != nil {
		t.Fatalf("bank-a puts its update: %v; violations %v", err, a.violations(t))
	}
	if got, err := aggS.Fetch(ctx, ref); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("aggregator fetches bank-a's update: %d bytes, %v; violations %v", len(got), err, agg.violations(t))
	}
	mref, err := aggS.Put(ctx, 1, "model-1-2", body[:100<<10])
	if err != nil {
		t.Fatalf("aggregator puts a model: %v", err)
	}
	for _, p := range []struct {
		p *party
		s *JetStreamBlobs
	}{{a, aS}, {b, bS}} {
		if got, err := p.s.Fetch(ctx, mref); err != nil || !mref.Matches(got) {
			t.Fatalf("%s fetches the model: %v", p.p.id, err)
		}
	}
	for _, p := range []*party{agg, a, b} {
		if v := p.violations(t); len(v) > 0 {
			t.Fatalf("%s: violations in legitimate blob traffic: %v", p.id, v)
		}
	}

	// bank-b against bank-a's bucket and the streams.
	short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
	defer cancelShort()
	if got, err := bS.Fetch(short, ref); err == nil {
		t.Fatalf("bank-b read bank-a's blob (%d bytes)", len(got))
	}
	forger := store(b, "bank-a") // bank-b's connection, bank-a's bucket
	if _, err := forger.Put(short, 1, "update-1-9", []byte("forged")); err == nil {
		t.Fatal("bank-b wrote bank-a's bucket")
	}
	aBucket, aggStream := BlobBucketName(secJob, "bank-a"), blobStreamName(secJob, AggregatorID)
	probes := []string{
		"$O." + aBucket + ".C.forged",
		"$JS.API.STREAM.MSG.GET.OBJ_" + aBucket,
		"$JS.API.STREAM.PURGE.OBJ_" + aBucket,
		"$JS.API.CONSUMER.CREATE." + aggStream,
		"$JS.API.CONSUMER.CREATE." + aggStream + ".c.>",
		"$JS.API.STREAM.CREATE." + blobStreamName(secJob, "bank-b"),
		"$JS.API.STREAM.UPDATE." + blobStreamName(secJob, "bank-b"),
	}
	for _, s := range probes {
		if err := b.nc.Publish(s, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	v := b.violations(t)
	for _, s := range probes {
		if !refused(v, "Publish", s) {
			t.Errorf("bank-b's publish on %s was not refused; violations %v", s, v)
		}
	}
	if got, err := aggS.Fetch(ctx, ref); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("bank-a's blob after bank-b's attempts: %v", err)
	}

	// Retention: the bank's objects two rounds old are deleted as it
	// stores newer ones.
	for r := uint64(2); r <= 3; r++ {
		if _, err := aS.Put(ctx, r, "update-"+string(rune('0'+r))+"-1", []byte("round body")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := aggS.Fetch(ctx, ref); ReasonOf(err) != ReasonBlobMissing {
		t.Fatalf("round 1's blob after round 3's put: %v, want %s", err, ReasonBlobMissing)
	}
	if st := aS.Stats(); st.Puts != 3 || st.Deleted != 1 {
		t.Fatalf("bank-a's blob stats %+v, want 3 puts and 1 deletion", st)
	}
	if v := a.violations(t); len(v) > 0 {
		t.Fatalf("bank-a: violations deleting its own blobs: %v", v)
	}
}
