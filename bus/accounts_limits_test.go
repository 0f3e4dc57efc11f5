package bus

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Each account's limits bound its own party: a bank's ninth connection is
// refused and counted, while the other parties still connect; a bank's
// blob bucket has a size, and a stream beyond its account's store is
// refused.
func TestAccountLimits(t *testing.T) {
	e := startSecureServer(t)
	var open []*party
	for range partyConnections {
		open = append(open, e.connect(t, "bank-a"))
	}
	before := e.srv.Events()[ServerEventKey{Kind: ServerEventLimit, Reason: "max_account_connections"}]
	// Connect retries a refused connection in the background; it never
	// gets through while the others hold the account's allowance.
	extra, err := Connect(e.srv.ClientURL(), ConnectOptions{Name: "one-too-many", Creds: e.seeds["bank-a"]})
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	deadline := time.Now().Add(10 * time.Second)
	for e.srv.Events()[ServerEventKey{Kind: ServerEventLimit, Reason: "max_account_connections"}] == before {
		if time.Now().After(deadline) {
			t.Fatalf("the refused connection was not counted: %v", e.srv.Events())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if extra.IsConnected() {
		t.Fatalf("bank-a opened connection %d beyond its account's %d", partyConnections+1, partyConnections)
	}
	extra.Close()
	// Others are unaffected.
	e.connect(t, "bank-b")
	e.connect(t, AggregatorID)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(open[0].nc)
	if err != nil {
		t.Fatal(err)
	}
	payload := int(open[0].nc.MaxPayload())
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "HOARD", Subjects: []string{"hoard"},
		MaxBytes: BlobBucketBytes(payload) + 1<<30}); err == nil {
		t.Fatal("bank-a made a stream larger than its account's store")
	}
	store, err := NewJetStreamBlobs(open[0].nc, secJob, "bank-a", BlobStoreOptions{Create: true, Accounts: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, 1, "update-1-1", []byte("body")); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, "OBJ_"+BlobBucketName(secJob, "bank-a"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.CachedInfo().Config.MaxBytes, BlobBucketBytes(payload); got != want {
		t.Fatalf("bank-a's bucket holds at most %d bytes, want %d", got, want)
	}
}
