package amlworld

import (
	"os"
	"testing"
)

// BenchmarkLoadAMLTrans loads the file named by $AML_TRANS (skipped when
// unset), e.g. a generated HI-Small_Trans.csv.
func BenchmarkLoadAMLTrans(b *testing.B) {
	path := os.Getenv("AML_TRANS")
	if path == "" {
		b.Skip("set AML_TRANS to a *_Trans.csv file")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for b.Loop() {
		if _, _, err := LoadTrans(path, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseTxRow parses one typical row.
func BenchmarkParseTxRow(b *testing.B) {
	line := []byte("2022/09/01 05:14,00952,8139F54E0,0111632,8062C56E0,5331.44,Euro,6209.09,US Dollar,ACH,1")
	var f amlFields
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if err := f.parse(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendTxRow formats one typical row.
func BenchmarkAppendTxRow(b *testing.B) {
	r := TxRow{Time: 1662009240, FromBank: "00952", FromAccount: "8139F54E0", ToBank: "0111632", ToAccount: "8062C56E0",
		AmountReceived: 5331.44, RecvCurrency: Euro, AmountPaid: 6209.09, PayCurrency: USDollar, Format: FormatACH, Laundering: true}
	var buf []byte
	for b.Loop() {
		buf = AppendTxRow(buf[:0], &r)
	}
}
