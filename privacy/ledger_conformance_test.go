package privacy_test

import (
	"path/filepath"
	"testing"

	"graphfed/privacy"
	"graphfed/privacy/ledgertest"
)

func TestMemLedgerConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) privacy.Ledger { return privacy.NewMemLedger() })
}

func TestFileLedgerConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) privacy.Ledger {
		l, err := privacy.OpenFileLedger(filepath.Join(t.TempDir(), "ledger.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		return l
	})
}
