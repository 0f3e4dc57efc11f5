package amlworld

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func loadFixture(t *testing.T, name string, opt Options) (*Graph, Issues) {
	t.Helper()
	g, iss, err := LoadTrans(filepath.Join("testdata", name), opt)
	if err != nil {
		t.Fatalf("LoadTrans(%s): %v", name, err)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g, iss
}

// TestAMLFixtureEdges reads the hand-written fixture that covers the
// format's edges: leading-zero bank ids, the repeated Account header,
// Bitcoin's 6 decimals, mixed currencies, rows out of time order, and
// laundering rows outside any pattern block.
func TestAMLFixtureEdges(t *testing.T) {
	g, iss := loadFixture(t, "Edges_Trans.csv", Options{})
	if iss.Count != 0 {
		t.Fatalf("issues: %+v", iss)
	}
	if g.Name != "Edges" || g.NumEdges() != 10 {
		t.Fatalf("name %q, %d edges", g.Name, g.NumEdges())
	}
	// 010 and 10 are different banks; 8000EBD30 exists at both.
	a010, ok1 := g.Account("010", "8000EBD30")
	a10, ok2 := g.Account("10", "8000EBD30")
	if !ok1 || !ok2 || a010 == a10 {
		t.Fatalf("010/8000EBD30=%d,%v 10/8000EBD30=%d,%v", a010, ok1, a10, ok2)
	}
	if g.AccountBank[a010] == g.AccountBank[a10] {
		t.Fatal("banks 010 and 10 merged")
	}
	wantBanks := []string{"010", "10", "0112", "70", "00952", "0111632"}
	if strings.Join(g.BankIDs, " ") != strings.Join(wantBanks, " ") {
		t.Fatalf("banks %q, want %q", g.BankIDs, wantBanks)
	}
	if g.NumAccounts() != 7 {
		t.Fatalf("%d accounts, want 7", g.NumAccounts())
	}
	cases := []struct {
		name string
		e    int
		want TxRow
	}{
		{"self transfer", 0, TxRow{Time: 1661991600, FromBank: "010", FromAccount: "8000EBD30", ToBank: "010", ToAccount: "8000EBD30",
			AmountReceived: 3697.34, RecvCurrency: USDollar, AmountPaid: 3697.34, PayCurrency: USDollar, Format: FormatReinvestment}},
		{"bitcoin 6 decimals, out of order", 2, TxRow{Time: 1661990520, FromBank: "0112", FromAccount: "80AB52E10", ToBank: "70", ToAccount: "800BC6F20",
			AmountReceived: 0.123456, RecvCurrency: Bitcoin, AmountPaid: 0.123456, PayCurrency: Bitcoin, Format: FormatBitcoin}},
		{"currencies differ", 3, TxRow{Time: 1662009240, FromBank: "00952", FromAccount: "8139F54E0", ToBank: "0111632", ToAccount: "8062C56E0",
			AmountReceived: 5331.44, RecvCurrency: Euro, AmountPaid: 6209.09, PayCurrency: USDollar, Format: FormatACH, Laundering: true}},
		{"laundering outside a pattern", 5, TxRow{Time: 1662112800, FromBank: "70", FromAccount: "800BC6F20", ToBank: "010", ToAccount: "8000F4580",
			AmountReceived: 1000000, RecvCurrency: Yen, AmountPaid: 7012.5, PayCurrency: SwissFranc, Format: FormatWire, Laundering: true}},
		{"previous day", 6, TxRow{Time: 1661990340, FromBank: "0111632", FromAccount: "8062C56E0", ToBank: "10", ToAccount: "8000EBD30",
			AmountReceived: 12.5, RecvCurrency: UKPound, AmountPaid: 14.45, PayCurrency: USDollar, Format: FormatCreditCard}},
		{"bitcoin to dollars", 8, TxRow{Time: 1662371100, FromBank: "0112", FromAccount: "80AB52E10", ToBank: "0112", ToAccount: "80AB52E10",
			AmountReceived: 0.000015, RecvCurrency: Bitcoin, AmountPaid: 0.3, PayCurrency: USDollar, Format: FormatBitcoin}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := g.Row(c.e); got != c.want {
				t.Fatalf("row %d:\n got %+v\nwant %+v", c.e, got, c.want)
			}
		})
	}
	st := g.Stats()
	if st.LaunderingRows != 3 || st.SelfTransfers != 2 || st.MixedCurrencyRows != 5 || st.Banks != 6 {
		t.Fatalf("stats %+v", st)
	}
	// Every fixture line survives a write/read round trip byte for byte.
	raw, err := os.ReadFile(filepath.Join("testdata", "Edges_Trans.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")[1:]
	for e, l := range lines {
		r := g.Row(e)
		if got := string(AppendTxRow(nil, &r)); got != l {
			t.Errorf("line %d rewritten as\n%s\nwant\n%s", e+2, got, l)
		}
	}
}

func TestAMLFixturePatternsAndAccounts(t *testing.T) {
	at, iss, err := LoadPatterns(filepath.Join("testdata", "Edges_Patterns.txt"), Options{})
	if err != nil || iss.Count != 0 {
		t.Fatalf("patterns: %v %+v", err, iss)
	}
	if len(at) != 1 || at[0].Type != FanOut || at[0].Detail != "Max 2-degree Fan-Out" || len(at[0].Rows) != 2 || at[0].Line != 1 {
		t.Fatalf("attempts %+v", at)
	}
	g, _ := loadFixture(t, "Edges_Trans.csv", Options{})
	if at[0].Rows[0] != g.Row(3) || at[0].Rows[1] != g.Row(4) {
		t.Fatal("pattern rows differ from the Trans rows")
	}
	acc, iss, err := LoadAccounts(filepath.Join("testdata", "Edges_accounts.csv"), Options{})
	if err != nil || iss.Count != 0 {
		t.Fatalf("accounts: %v %+v", err, iss)
	}
	if len(acc) != 7 || acc[2].BankID != "10" || acc[0].BankID != "010" ||
		acc[3].BankName != "Bank of Lyon, Rhone" || acc[3].EntityName != `Corporation "Blue" #33520` {
		t.Fatalf("accounts %+v", acc)
	}
	for i := range acc {
		if _, ok := g.Account(acc[i].BankID, acc[i].Account); !ok {
			t.Errorf("account %s/%s not in the graph", acc[i].BankID, acc[i].Account)
		}
	}
	line := AppendAccount(nil, &acc[3])
	if string(line) != `"Bank of Lyon, Rhone",0112,80AB52E10,8003F1D70,"Corporation ""Blue"" #33520"` {
		t.Fatalf("account line %s", line)
	}
}

func TestAMLMalformedTrans(t *testing.T) {
	want := []struct {
		line int64
		kind error
	}{{3, ErrColumns}, {4, ErrTimestamp}, {5, ErrCurrency}, {6, ErrAmount}, {7, ErrLabel}}
	t.Run("lenient", func(t *testing.T) {
		g, iss := loadFixture(t, "Bad_Trans.csv", Options{Policy: Lenient})
		if g.NumEdges() != 2 || iss.Count != int64(len(want)) || len(iss.First) != len(want) {
			t.Fatalf("%d edges, issues %+v", g.NumEdges(), iss)
		}
		for i, w := range want {
			e := iss.First[i]
			if e.File != "Bad_Trans.csv" || e.Line != w.line || !errors.Is(e, w.kind) {
				t.Errorf("issue %d: %v, want line %d kind %v", i, e, w.line, w.kind)
			}
		}
	})
	t.Run("lenient bounded", func(t *testing.T) {
		_, iss := loadFixture(t, "Bad_Trans.csv", Options{Policy: Lenient, MaxIssues: 2})
		if iss.Count != 5 || len(iss.First) != 2 {
			t.Fatalf("issues %+v", iss)
		}
	})
	t.Run("strict", func(t *testing.T) {
		_, _, err := LoadTrans(filepath.Join("testdata", "Bad_Trans.csv"), Options{})
		var re *RowError
		if !errors.As(err, &re) || re.Line != 3 || !errors.Is(err, ErrColumns) {
			t.Fatalf("err %v", err)
		}
		if !strings.Contains(err.Error(), "Bad_Trans.csv:3:") {
			t.Fatalf("error lacks file:line: %v", err)
		}
	})
}

func TestAMLMalformedPatterns(t *testing.T) {
	path := filepath.Join("testdata", "Bad_Patterns.txt")
	at, iss, err := LoadPatterns(path, Options{Policy: Lenient})
	if err != nil {
		t.Fatal(err)
	}
	wantLines := []int64{1, 4, 8, 14, 16, 18}
	if iss.Count != int64(len(wantLines)) {
		t.Fatalf("issues %+v", iss)
	}
	for i, l := range wantLines {
		if iss.First[i].Line != l {
			t.Errorf("issue %d at line %d, want %d: %v", i, iss.First[i].Line, l, iss.First[i])
		}
	}
	if len(at) != 3 || at[0].Type != Cycle || len(at[0].Rows) != 2 || at[1].Type != Stack || at[2].Type != Bipartite {
		t.Fatalf("attempts %+v", at)
	}
	if _, _, err := LoadPatterns(path, Options{}); !errors.Is(err, ErrPattern) || !strings.Contains(err.Error(), "Bad_Patterns.txt:1:") {
		t.Fatalf("strict: %v", err)
	}
}

func TestAMLHeaderAndStructure(t *testing.T) {
	cases := []struct {
		name, in string
		policy   Policy
		kind     error
		edges    int
		issues   int64
	}{
		{"empty", "", Lenient, ErrHeader, 0, 0},
		{"wrong header", "Timestamp,From Bank\n", Lenient, ErrHeader, 0, 0},
		{"deduplicated Account header", strings.Replace(TransHeader, "Account,Amount", "Account.1,Amount", 1) + "\n", Lenient, ErrHeader, 0, 0},
		{"header only", TransHeader + "\n", Strict, nil, 0, 0},
		{"crlf and bom", "\xef\xbb\xbf" + TransHeader + "\r\n2022/09/01 00:20,1,A,2,B,1.00,Euro,1.00,Euro,Cash,0\r\n", Strict, nil, 1, 0},
		{"no final newline", TransHeader + "\n2022/09/01 00:20,1,A,2,B,1.00,Euro,1.00,Euro,Cash,0", Strict, nil, 1, 0},
		{"blank lines", TransHeader + "\n\n2022/09/01 00:20,1,A,2,B,1,Euro,1,Euro,Cash,1\n\n", Strict, nil, 1, 0},
		{"too long", TransHeader + "\n" + strings.Repeat("x", 70000) + "\n2022/09/01 00:20,1,A,2,B,1,Euro,1,Euro,Cash,1\n", Lenient, nil, 1, 1},
		{"too long strict", TransHeader + "\n" + strings.Repeat("x", 70000) + "\n", Strict, ErrLine, 0, 0},
		{"quoted", TransHeader + "\n\"2022/09/01 00:20\",1,A,2,B,1,\"Euro\",1,Euro,Cash,0\n", Strict, nil, 1, 0},
		{"bad quote", TransHeader + "\n\"2022/09/01 00:20,1,A,2,B,1,Euro,1,Euro,Cash,0\n", Lenient, nil, 0, 1},
		{"bank with space", TransHeader + "\n2022/09/01 00:20,1 2,A,2,B,1,Euro,1,Euro,Cash,0\n", Strict, ErrBank, 0, 0},
		{"nan amount", TransHeader + "\n2022/09/01 00:20,1,A,2,B,NaN,Euro,1,Euro,Cash,0\n", Strict, ErrAmount, 0, 0},
		{"unknown format", TransHeader + "\n2022/09/01 00:20,1,A,2,B,1,Euro,1,Euro,Barter,0\n", Strict, ErrFormat, 0, 0},
		{"feb 30", TransHeader + "\n2023/02/29 00:20,1,A,2,B,1,Euro,1,Euro,Cash,0\n", Strict, ErrTimestamp, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, iss, err := ReadTrans(strings.NewReader(c.in), "x_Trans.csv", Options{Policy: c.policy})
			if c.kind != nil {
				if !errors.Is(err, c.kind) {
					t.Fatalf("err %v, want %v", err, c.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.NumEdges() != c.edges || iss.Count != c.issues {
				t.Fatalf("%d edges %d issues (%v), want %d %d", g.NumEdges(), iss.Count, iss.First, c.edges, c.issues)
			}
		})
	}
}

func TestAMLAmounts(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"3697.34", 3697.34, true}, {"0.000015", 0.000015, true}, {"100", 100, true}, {"1.", 1, true},
		{".5", 0.5, true}, {"0", 0, true}, {"1e3", 1000, true}, {"1234567890123.45", 1234567890123.45, true},
		{"12345678901234567890.5", 12345678901234567890.5, true}, {"0.0000000000000000000000001", 1e-25, true},
		{"", 0, false}, {"-1.00", 0, false}, {"-0", 0, false}, {".", 0, false}, {"1,5", 0, false}, {"Inf", 0, false},
		{"1.2.3", 0, false}, {"+5", 5, true}, {"1e400", 0, false},
	}
	for _, c := range cases {
		got, err := amlParseAmount([]byte(c.in))
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("amlParseAmount(%q) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
		if err != nil && !errors.Is(err, ErrAmount) {
			t.Errorf("amlParseAmount(%q): error kind %v", c.in, err)
		}
	}
	// The fast path agrees with strconv on every 2-decimal amount it takes.
	for _, s := range []string{"0.01", "0.07", "9999.99", "123456789.12", "999999999999.99", "0.1", "0.3"} {
		got, _ := amlParseAmount([]byte(s))
		want, _ := strconv.ParseFloat(s, 64)
		if got != want || math.IsNaN(got) {
			t.Errorf("%s: fast %v strconv %v", s, got, want)
		}
	}
}

func TestAMLTime(t *testing.T) {
	for _, s := range []string{"1970/01/01 00:00", "2022/09/01 00:20", "2000/02/29 23:59", "1900/03/01 12:00", "9999/12/31 23:59", "1000/01/01 00:00"} {
		v, err := ParseTime([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got := string(AppendTime(nil, v)); got != s {
			t.Errorf("%s -> %d -> %s", s, v, got)
		}
	}
	for _, s := range []string{"2022/9/01 00:20", "2022-09-01 00:20", "2022/09/01 24:00", "2022/09/31 00:00", "1900/02/29 00:00", "0999/01/01 00:00", "2022/09/01 00:20:00"} {
		if _, err := ParseTime([]byte(s)); !errors.Is(err, ErrTimestamp) {
			t.Errorf("%s: err %v", s, err)
		}
	}
}
