package deploy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"graphfed/bus"
)

func TestSigning(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := StartLocal(ctx, LocalOptions{Job: testJob, Banks: testBanks(2), Secure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// Another job's keyring, as a party handed the wrong file would have.
	other, err := bus.NewDeployment("other-job", []string{"bank-0"})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := other.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := ring.Encode()
	if err != nil {
		t.Fatal(err)
	}
	otherRing := filepath.Join(t.TempDir(), "keyring.json")
	if err := os.WriteFile(otherRing, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, party, keyring, creds string
		signs, verifies             bool
		want                        string
	}{
		{"neither", "bank-0", "", "", false, false, ""},
		{"own seed and keyring", "bank-0", l.KeyringPath(), l.Creds("bank-0"), true, true, ""},
		{"aggregator", bus.AggregatorID, l.KeyringPath(), l.Creds(bus.AggregatorID), true, true, ""},
		{"seed only", "bank-1", "", l.Creds("bank-1"), true, false, ""},
		{"another party's seed", "bank-1", l.KeyringPath(), l.Creds("bank-0"), false, false, "is not bank-1's"},
		{"another job's keyring", "bank-0", otherRing, l.Creds("bank-0"), false, false, "is job other-job's, not deploy-test's"},
		{"party not in the keyring", "bank-9", l.KeyringPath(), l.Creds("bank-0"), false, false, "lists no party bank-9"},
		{"missing seed file", "bank-0", "", "/nonexistent/bank-0.nk", false, false, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ring, signer, err := Signing(testJob, tc.party, tc.keyring, tc.creds)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (signer != nil) != tc.signs || (ring != nil) != tc.verifies {
				t.Fatalf("signer %v keyring %v, want signing %v verifying %v", signer != nil, ring != nil, tc.signs, tc.verifies)
			}
			if signer != nil && signer.ID() != tc.party {
				t.Fatalf("signer signs as %s, want %s", signer.ID(), tc.party)
			}
		})
	}
}
