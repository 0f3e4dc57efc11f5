package bus

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"graphfed/privacy"
)

// The bus's aggregator id is the privacy package's: the aggregator's
// records are filed under it, and only entries of that client may be
// records (privacy.Entry.Validate).
func TestAggregatorIDIsThePrivacyOne(t *testing.T) {
	if AggregatorID != privacy.AggregatorClient {
		t.Fatalf("bus.AggregatorID %q, privacy.AggregatorClient %q", AggregatorID, privacy.AggregatorClient)
	}
}

// A signer derives the same secret in every life from its seed, another
// for other info, and another party another; the signer is the gate's
// SecretDeriver.
func TestSignerDeriveSecret(t *testing.T) {
	d, err := NewDeployment(secJob, []string{"bank-a", "bank-b"})
	if err != nil {
		t.Fatal(err)
	}
	signer := func(id string) *Signer {
		for _, c := range d.Creds {
			if c.ID == id {
				kp, err := nkeys.FromSeed(c.Seed)
				if err != nil {
					t.Fatal(err)
				}
				s, err := NewSigner(id, kp)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
		}
		t.Fatalf("no credential of %s", id)
		return nil
	}
	var _ privacy.SecretDeriver = signer("bank-a")
	a1, err := privacy.DeriveNodeKey(signer("bank-a"), secJob)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := privacy.DeriveNodeKey(signer("bank-a"), secJob) // a restarted agent
	other, _ := privacy.DeriveNodeKey(signer("bank-a"), "other-job")
	b, _ := privacy.DeriveNodeKey(signer("bank-b"), secJob)
	switch {
	case len(a1) != 32 || !bytes.Equal(a1, a2):
		t.Fatalf("the secret changes between lives: %x, %x", a1, a2)
	case bytes.Equal(a1, other):
		t.Fatal("the secret is the same for another job")
	case bytes.Equal(a1, b):
		t.Fatal("two banks derive the same secret")
	case bytes.Equal(a1, privacy.InsecureNodeKey(secJob, "bank-a")):
		t.Fatal("the derived secret is the insecure key")
	}
	// A gate signing with the bank's key keys node ids with it, and knows
	// it holds a secret.
	ctx := context.Background()
	g, err := privacy.NewGate(ctx, privacy.Config{Job: secJob, Client: "bank-a", Delta: 1e-5, Signer: signer("bank-a")}, privacy.NewMemLedger(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if !g.NodeIDsSecret() || g.LedgerNodeIDs([]int64{7})[0] != privacy.KeyedNodeID(a1, 7) {
		t.Fatalf("gate keys node 7 as %d, want %d (secret %v)", g.LedgerNodeIDs([]int64{7})[0], privacy.KeyedNodeID(a1, 7), g.NodeIDsSecret())
	}
}

// The keyring verifies the aggregator's records with its key, and still
// refuses the auditor's entries.
func TestKeyringVerifiesAggregatorEntries(t *testing.T) {
	d, err := NewDeployment(secJob, []string{"bank-a"})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := d.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	digest := bytes.Repeat([]byte{7}, 32)
	for _, c := range d.Creds {
		kp, err := nkeys.FromSeed(c.Seed)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSigner(c.ID, kp)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := s.SignEntry(digest)
		if err != nil {
			t.Fatal(err)
		}
		err = ring.VerifyEntry(secJob, c.ID, digest, sig)
		if want := c.Role != RoleAuditor; (err == nil) != want {
			t.Errorf("%s (%s): verify %v, want ok %v", c.ID, c.Role, err, want)
		}
	}
}
