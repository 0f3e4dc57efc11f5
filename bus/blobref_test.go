package bus

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
	"github.com/vmihailenco/msgpack/v5"
)

func TestParseBlobRef(t *testing.T) {
	good := NewBlobRef(BlobBucketName("j1", "bank-a"), "update-3-7", []byte("body"))
	enc := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	with := func(f func(m map[string]any)) []byte {
		m := map[string]any{"b": good.Bucket, "n": good.Name, "s": good.Size, "d": good.Digest}
		f(m)
		return enc(m)
	}
	data, err := good.Encode()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"valid", data, true},
		{"empty", nil, false},
		{"nil", []byte{0xc0}, false},
		{"array", enc([]any{good.Bucket, good.Name, good.Size, good.Digest}), false},
		{"truncated", data[:len(data)-3], false},
		{"unknown field", with(func(m map[string]any) { m["x"] = 1 }), false},
		{"bucket with a dot", with(func(m map[string]any) { m["b"] = "GF_BLOBS.J1" }), false},
		{"bucket wildcard", with(func(m map[string]any) { m["b"] = ">" }), false},
		{"empty name", with(func(m map[string]any) { m["n"] = "" }), false},
		{"name with a slash", with(func(m map[string]any) { m["n"] = "../x" }), false},
		{"long name", with(func(m map[string]any) { m["n"] = strings.Repeat("a", maxBlobName+1) }), false},
		{"size 0", with(func(m map[string]any) { m["s"] = 0 }), false},
		{"size over the maximum", with(func(m map[string]any) { m["s"] = uint64(MaxBlobSize) + 1 }), false},
		{"negative size", with(func(m map[string]any) { m["s"] = -1 }), false},
		{"short digest", with(func(m map[string]any) { m["d"] = good.Digest[:31] }), false},
		{"no digest", with(func(m map[string]any) { delete(m, "d") }), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := ParseBlobRef(tc.data)
			if tc.ok {
				if err != nil || ref.Bucket != good.Bucket || ref.Name != good.Name || ref.Size != good.Size || !bytes.Equal(ref.Digest, good.Digest) {
					t.Fatalf("ParseBlobRef = %+v, %v; want %+v", ref, err, good)
				}
				return
			}
			if ReasonOf(err) != ReasonBlobRef {
				t.Fatalf("ParseBlobRef = %+v, %v; want a %s reject", ref, err, ReasonBlobRef)
			}
		})
	}
}

// No two (job, party) pairs share a bucket: the job token is upper case
// with underscores, the party id lower case without.
func TestBlobBucketNamesDistinct(t *testing.T) {
	pairs := [][2]string{{"a", "b-c"}, {"a-b", "c"}, {"a", "aggregator"}, {"a-1", "x"}, {"a", "1-x"}, {"a-agg", "x"}, {"a", "1"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		n := strings.ToLower(BlobBucketName(p[0], p[1]))
		if q, ok := seen[n]; ok {
			t.Fatalf("%v and %v share bucket %s", p, q, n)
		}
		seen[n] = p
	}
}

// carried is a transport with a carriage, as a NATSTransport with SetBlobs.
type carried struct {
	Transport
	c Carriage
}

func (t carried) Carriage() Carriage { return t.c }

const refJob = "j1"

// refPair is an aggregator and a bank on one in-memory network, both
// carrying bodies above inline bytes by reference through blobs.
func refPair(t *testing.T, blobs *MemBlobs, inline, params int) (agg, bank *Endpoint) {
	t.Helper()
	net := NewInmemNetwork()
	var err error
	agg, err = NewEndpoint(EndpointConfig{Job: refJob, ID: AggregatorID,
		Schema: Schema{NumParams: params, Senders: map[string]bool{"bank-a": true}}},
		carried{net.Transport(), Carriage{Blobs: blobs.For(refJob, AggregatorID), Inline: inline, MaxPayload: 2 * inline}})
	if err != nil {
		t.Fatal(err)
	}
	bank, err = NewEndpoint(EndpointConfig{Job: refJob, ID: "bank-a", Schema: Schema{NumParams: params}},
		carried{net.Transport(), Carriage{Blobs: blobs.For(refJob, "bank-a"), Inline: inline, MaxPayload: 2 * inline}})
	if err != nil {
		t.Fatal(err)
	}
	return agg, bank
}

// sent publishes through ep and returns the message as received.
func sent(t *testing.T, ep *Endpoint, subject string, kind Kind, round uint64, body any) Msg {
	t.Helper()
	got := make(chan Msg, 1)
	sub, err := ep.Transport().Subscribe(func(m Msg) { got <- m }, subject)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := ep.Publish(context.Background(), subject, kind, round, body); err != nil {
		t.Fatal(err)
	}
	return <-got
}

func TestEndpointByReference(t *testing.T) {
	const params, inline = 4096, 4096 // a model of 16 KiB over a 4 KiB inline limit
	blobs := NewMemBlobs()
	agg, bank := refPair(t, blobs, inline, params)
	p := make(Vector, params)
	for i := range p {
		p[i] = float32(i) / 7
	}
	m := sent(t, agg, Subject(refJob, KindModel, "all"), KindModel, 3, &Model{Round: 3, Params: p})
	if len(m.Data) > inline {
		t.Fatalf("a %d-byte model went inline", len(m.Data))
	}
	env, _ := Open(m.Data)
	if len(env.Ref) == 0 || len(env.Body) != 0 {
		t.Fatalf("envelope ref %d bytes, body %d bytes: not by reference", len(env.Ref), len(env.Body))
	}
	_, body, err := bank.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	if got := body.(*Model); got.Round != 3 || !slices.Equal(got.Params, p) {
		t.Fatalf("model by reference arrived as round %d with %d params", got.Round, len(got.Params))
	}

	u := sent(t, bank, Subject(refJob, KindUpdate, "bank-a"), KindUpdate, 3,
		&Update{Round: 3, Weight: 5, Params: Sensitive{v: p}})
	_, body, err = agg.Open(u)
	if err != nil {
		t.Fatal(err)
	}
	if got := body.(*Update); !slices.Equal(got.Params.Floats(), p) || got.Weight != 5 {
		t.Fatal("update by reference arrived changed")
	}

	// A small body stays inline.
	s := sent(t, agg, Subject(refJob, KindModel, "all"), KindModel, 4, &Model{Round: 4, Final: true})
	if env, _ := Open(s.Data); len(env.Ref) != 0 {
		t.Fatal("a small model went by reference")
	}
}

// A personalised model (gf.<job>.model.<client>) never goes by
// reference, however large: the aggregator's blob bucket is read by every
// bank (accounts.go), so a model stored there would be read by all of
// them. Within the payload limit it goes inline and nothing is stored;
// over it, the publish is refused and says why.
func TestEndpointPersonalisedModelInline(t *testing.T) {
	const params, inline = 4096, 4096 // a model of 16 KiB over a 4 KiB inline limit
	p := make(Vector, params)
	for i := range p {
		p[i] = float32(i) / 3
	}
	blobs := NewMemBlobs()
	net := NewInmemNetwork()
	agg, err := NewEndpoint(EndpointConfig{Job: refJob, ID: AggregatorID},
		carried{net.Transport(), Carriage{Blobs: blobs.For(refJob, AggregatorID), Inline: inline, MaxPayload: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	bank, err := NewEndpoint(EndpointConfig{Job: refJob, ID: "bank-a", Schema: Schema{NumParams: params}},
		carried{net.Transport(), Carriage{Inline: inline, MaxPayload: 1 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	m := sent(t, agg, Subject(refJob, KindModel, "bank-a"), KindModel, 2, &Model{Round: 2, Params: p})
	env, err := Open(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Ref) != 0 || len(env.Body) == 0 {
		t.Fatalf("a personalised model went by reference (ref %d bytes, body %d bytes)", len(env.Ref), len(env.Body))
	}
	blobs.mu.Lock()
	n := len(blobs.buckets[BlobBucketName(refJob, AggregatorID)])
	blobs.mu.Unlock()
	if n != 0 {
		t.Fatalf("the aggregator's bucket holds %d objects after a personalised model", n)
	}
	_, body, err := bank.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	if got := body.(*Model); got.Round != 2 || !slices.Equal(got.Params, p) {
		t.Fatalf("personalised model arrived as round %d with %d params", got.Round, len(got.Params))
	}
	// The global model of the same size goes by reference.
	g := sent(t, agg, Subject(refJob, KindModel, "all"), KindModel, 2, &Model{Round: 2, Params: p})
	if genv, _ := Open(g.Data); len(genv.Ref) == 0 {
		t.Fatal("the global model did not go by reference")
	}

	tight, err := NewEndpoint(EndpointConfig{Job: refJob, ID: AggregatorID},
		carried{NewInmemNetwork().Transport(), Carriage{Blobs: blobs.For(refJob, AggregatorID), Inline: inline, MaxPayload: 2 * inline}})
	if err != nil {
		t.Fatal(err)
	}
	err = tight.Publish(context.Background(), Subject(refJob, KindModel, "bank-a"), KindModel, 3, &Model{Round: 3, Params: p})
	if err == nil || !strings.Contains(err.Error(), "travels inline only") {
		t.Fatalf("a personalised model over the payload limit: %v, want a refusal saying it travels inline only", err)
	}
}

// Every bad reference is a counted reject with its reason, never a panic
// nor an accepted body.
func TestEndpointBadReference(t *testing.T) {
	const params, inline = 4096, 4096
	big := &Update{Round: 1, Weight: 1, Params: Sensitive{v: make([]float32, params)}}
	bucket := BlobBucketName(refJob, "bank-a")
	tests := []struct {
		name   string
		reason string
		// tamper changes the envelope or the store after a genuine send.
		tamper func(env *Envelope, ref *BlobRef, blobs *MemBlobs)
		noRead bool // the receiver reads no object store
	}{
		{"digest mismatch", ReasonBlobDigest, func(_ *Envelope, ref *BlobRef, b *MemBlobs) {
			data := make([]byte, ref.Size)
			b.Set(ref.Bucket, ref.Name, data)
		}, false},
		{"size mismatch", ReasonBlobDigest, func(_ *Envelope, ref *BlobRef, b *MemBlobs) { b.Set(ref.Bucket, ref.Name, []byte{0x80}) }, false},
		{"missing object", ReasonBlobMissing, func(_ *Envelope, ref *BlobRef, _ *MemBlobs) { ref.Name = "update-1-999" }, false},
		{"another bank's bucket", ReasonBlobRef, func(_ *Envelope, ref *BlobRef, b *MemBlobs) {
			data, _ := b.For(refJob, AggregatorID).Fetch(context.Background(), *ref)
			b.Set(BlobBucketName(refJob, "bank-b"), ref.Name, data)
			ref.Bucket = BlobBucketName(refJob, "bank-b")
		}, false},
		{"oversized", ReasonOversized, func(_ *Envelope, ref *BlobRef, _ *MemBlobs) { ref.Size = 1 << 30 }, false},
		{"malformed", ReasonBlobRef, func(env *Envelope, _ *BlobRef, _ *MemBlobs) { env.Ref = []byte{0x81, 0xa1} }, false},
		{"kind not by reference", ReasonBlobRef, func(env *Envelope, _ *BlobRef, _ *MemBlobs) { env.Kind = KindMetrics }, false},
		{"body and reference", ReasonBlobRef, func(env *Envelope, _ *BlobRef, _ *MemBlobs) { env.Body = []byte{0x80} }, false},
		{"receiver without a store", ReasonBlobMissing, func(*Envelope, *BlobRef, *MemBlobs) {}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blobs := NewMemBlobs()
			agg, bank := refPair(t, blobs, inline, params)
			m := sent(t, bank, Subject(refJob, KindUpdate, "bank-a"), KindUpdate, 1, big)
			env, err := Open(m.Data)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := ParseBlobRef(env.Ref)
			if err != nil || ref.Bucket != bucket {
				t.Fatalf("reference %+v, %v", ref, err)
			}
			tc.tamper(&env, &ref, blobs)
			if string(env.Ref) != string([]byte{0x81, 0xa1}) {
				if env.Ref, err = ref.Encode(); err != nil {
					t.Fatal(err)
				}
			}
			data, err := msgpack.Marshal(&env)
			if err != nil {
				t.Fatal(err)
			}
			m.Data, m.Subject = data, Subject(refJob, env.Kind, "bank-a")
			recv := agg
			if tc.noRead {
				recv, err = NewEndpoint(EndpointConfig{Job: refJob, ID: AggregatorID,
					Schema: Schema{NumParams: params, Senders: map[string]bool{"bank-a": true}}}, NewInmemNetwork().Transport())
				if err != nil {
					t.Fatal(err)
				}
			}
			_, body, err := recv.Open(m)
			if err == nil || ReasonOf(err) != tc.reason {
				t.Fatalf("Open = %T, %v; want a %s reject", body, err, tc.reason)
			}
			if n := recv.Validator().Rejects()[tc.reason]; n != 1 {
				t.Fatalf("rejects %v, want one %s", recv.Validator().Rejects(), tc.reason)
			}
		})
	}
}

// Without an object store, a body over the server's payload limit is
// refused at the sender with the limit named.
func TestEndpointTooLargeWithoutStore(t *testing.T) {
	ep, err := NewEndpoint(EndpointConfig{Job: refJob, ID: AggregatorID},
		carried{NewInmemNetwork().Transport(), Carriage{MaxPayload: 1024}})
	if err != nil {
		t.Fatal(err)
	}
	err = ep.Publish(context.Background(), Subject(refJob, KindModel, "all"), KindModel, 1, &Model{Round: 1, Params: make(Vector, 1024)})
	if err == nil || !strings.Contains(err.Error(), "max_payload) of 1024 bytes") {
		t.Fatalf("publish of 4 KiB over a 1 KiB limit: %v", err)
	}
}

// The signature covers the reference: a signed envelope whose reference
// is changed no longer verifies, and so a signed reference authenticates
// the blob through its digest.
func TestSignatureCoversReference(t *testing.T) {
	dep, err := NewDeployment(refJob, []string{"bank-a"})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := dep.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	var signer *Signer
	for _, c := range dep.Creds {
		if c.ID == "bank-a" {
			kp, err := nkeys.FromSeed(c.Seed)
			if err != nil {
				t.Fatal(err)
			}
			if signer, err = NewSigner(c.ID, kp); err != nil {
				t.Fatal(err)
			}
		}
	}
	ref, err := NewBlobRef(BlobBucketName(refJob, "bank-a"), "update-1-1", []byte("x")).Encode()
	if err != nil {
		t.Fatal(err)
	}
	env := Envelope{Job: refJob, Kind: KindUpdate, From: "bank-a", Round: 1, Seq: 1, Ref: ref}
	if err := signer.Sign(&env); err != nil {
		t.Fatal(err)
	}
	if err := ring.Verify(&env); err != nil {
		t.Fatalf("signed reference: %v", err)
	}
	other, _ := NewBlobRef(BlobBucketName(refJob, "bank-a"), "update-1-1", []byte("y")).Encode()
	env.Ref = other
	if err := ring.Verify(&env); err == nil {
		t.Fatal("a changed reference still verifies")
	}
	env.Ref = nil
	if err := ring.Verify(&env); err == nil {
		t.Fatal("a dropped reference still verifies")
	}
}
