package bus

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeebo/blake3"
)

var updateDigest = flag.Bool("update", false, "rewrite the golden files in testdata/ (signature digests, server configuration)")

// The signature digest of fixed envelopes is pinned: a change to what a
// signature covers, or how, must change SchemaVersion (and this file, with
// -update), or parties of one schema would fail each other's signatures
// without saying why.
func TestDigestGolden(t *testing.T) {
	cases := []struct {
		name string
		env  Envelope
	}{
		{"inline update", Envelope{Version: SchemaVersion, Job: "aml-1", Kind: KindUpdate, From: "bank-0", Round: 3, Seq: 7, Time: 1_700_000_000_000_000_000, Body: []byte{0x81, 0xa1, 'x', 0x01}}},
		{"by reference", Envelope{Version: SchemaVersion, Job: "j", Kind: KindModel, From: "aggregator", Round: 1, Seq: 1, Time: -5, Body: nil, Ref: []byte("ref")}},
		{"empty fields", Envelope{Version: SchemaVersion}},
	}
	var b strings.Builder
	for _, c := range cases {
		b.WriteString(c.name + " " + hex.EncodeToString(c.env.digest()) + "\n")
	}
	path := filepath.Join("testdata", "digest.golden")
	if *updateDigest {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Fatalf("signature digests changed (schema %d):\n got %s\nwant %s", SchemaVersion, got, want)
	}
}

// BenchmarkDigest compares the digest's hash (BLAKE3) with SHA-256, which
// schema 1 used, over a 4 MiB update body.
func BenchmarkDigest(b *testing.B) {
	body := make([]byte, 4<<20)
	for i := range body {
		body[i] = byte(i * 7)
	}
	b.Run("blake3-4MiB", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			blake3.Sum256(body)
		}
	})
	b.Run("sha256-4MiB", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			sha256.Sum256(body)
		}
	})
	env := Envelope{Version: SchemaVersion, Job: "j", Kind: KindUpdate, From: "bank-a", Round: 1, Seq: 1, Body: body}
	b.Run("envelope-4MiB", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			env.digest()
		}
	})
}
