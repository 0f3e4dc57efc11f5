package privacy_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"graphfed/privacy"
	"graphfed/privacy/ledgertest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// checkGolden compares got with testdata/name, or rewrites it under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed (run with -update if intended):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// The on-disk ledger format is stable: old ledgers must stay auditable.
func TestLedgerGoldenFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, err := privacy.OpenFileLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, e := range ledgertest.Entries() {
		if err := l.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	checkGolden(t, "ledger_golden.jsonl", got)
	ro, err := privacy.OpenFileLedgerReadOnly(filepath.Join("testdata", "ledger_golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	es, _ := ro.Entries(context.Background())
	for i, want := range ledgertest.Entries() {
		if !ledgertest.Equal(es[i], want) {
			t.Errorf("golden entry %d decodes to %+v", i, es[i])
		}
	}
}
