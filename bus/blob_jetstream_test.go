package bus

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// Blobs in the accounts layout: each party creates and writes its own
// bucket in its own account; the aggregator reads every bank's and each
// bank the aggregator's, through the owner's exported read API
// (BlobAPIPrefix), by message gets; none of it raises an asynchronous
// error. bank-b can neither read bank-a's bucket (no import reaches it),
// nor write it: without Create its store finds no bucket of that name in
// its own account, and with Create the bucket it makes is its own
// account's, which nobody reads as bank-a's. A bank's own objects two
// rounds old are deleted as it stores newer ones.
func TestBlobAccounts(t *testing.T) {
	e := startSecureServer(t)
	agg, a, b := e.connect(t, AggregatorID), e.connect(t, "bank-a"), e.connect(t, "bank-b")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts := BlobStoreOptions{Create: true, Accounts: true}
	store := func(p *party, id string, o BlobStoreOptions) *JetStreamBlobs {
		s, err := NewJetStreamBlobs(p.nc, secJob, id, o)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	aggS, aS, bS := store(agg, AggregatorID, opts), store(a, "bank-a", opts), store(b, "bank-b", opts)
	body := bytes.Repeat([]byte("update body "), 30<<10) // 360 KiB: several chunks
	ref, err := aS.Put(ctx, 1, "update-1-1", body)
	if err != nil {
		t.Fatalf("bank-a puts its update in its own bucket: %v", err)
	}
	if got, err := aggS.Fetch(ctx, ref); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("aggregator fetches bank-a's update: %d bytes, %v", len(got), err)
	}
	bref, err := bS.Put(ctx, 1, "update-1-1", body[:1000])
	if err != nil {
		t.Fatalf("bank-b puts its update: %v", err)
	}
	if got, err := aggS.Fetch(ctx, bref); err != nil || !bytes.Equal(got, body[:1000]) {
		t.Fatalf("aggregator fetches bank-b's update: %v", err)
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
		if errs := p.asyncErrors(t); len(errs) > 0 {
			t.Fatalf("%s: asynchronous errors in legitimate blob traffic: %v", p.id, errs)
		}
	}

	// bank-b against bank-a's bucket.
	short, cancelShort := context.WithTimeout(ctx, 5*time.Second)
	defer cancelShort()
	if got, err := bS.Fetch(short, ref); err == nil {
		t.Fatalf("bank-b read bank-a's blob (%d bytes)", len(got))
	}
	if _, err := store(b, "bank-a", BlobStoreOptions{Accounts: true}).Put(short, 1, "update-1-9", []byte("forged")); err == nil {
		t.Fatal("bank-b wrote a bucket of bank-a's name without creating one")
	}
	forger := store(b, "bank-a", opts) // bank-b's connection, bank-a's bucket name
	fref, err := forger.Put(short, 1, "update-1-1", []byte("forged"))
	if err == nil {
		// The bucket it made is its own account's: the aggregator reads
		// bank-a's, which still holds bank-a's update.
		if got, err := aggS.Fetch(ctx, fref); err == nil {
			t.Fatalf("the aggregator read bank-b's forgery as bank-a's blob: %q", got)
		}
	}
	if got, err := aggS.Fetch(ctx, ref); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("bank-a's blob after bank-b's attempts: %v", err)
	}
	// The auditor reads no blob at all.
	aud := e.connect(t, AuditorID)
	audS := store(aud, AuditorID, BlobStoreOptions{Accounts: true})
	for _, r := range []BlobRef{ref, mref} {
		if _, err := audS.Fetch(short, r); err == nil {
			t.Fatalf("the auditor read %s/%s", r.Bucket, r.Name)
		}
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
	if errs := a.asyncErrors(t); len(errs) > 0 {
		t.Fatalf("bank-a: asynchronous errors deleting its own blobs: %v", errs)
	}
}
