package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/aml/bank"
	"graphfed/aml/worldgen"
)

// writeAMLWorld generates a small 2-bank AMLworld set in dir and returns
// its Trans path and bank ids.
func writeAMLWorld(t *testing.T, dir string) (string, []string) {
	t.Helper()
	cfg, err := worldgen.Preset(worldgen.Tiny, worldgen.HI, 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Banks, cfg.Accounts, cfg.Transactions, cfg.IllicitRatio = 2, 400, 4000, 0.02
	sum, err := worldgen.Generate(cfg, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, _, err := amlworld.LoadTrans(sum.TransPath, amlworld.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sum.TransPath, w.BankIDs
}

// quirkAMLWorld gives a generated world AMLworld's quirks where the
// generator might not: bank old gets a leading zero ("0"+old, a different
// bank id than old, so old must not appear elsewhere), and Bitcoin rows
// with 6-decimal amounts join the file between the two banks. The doubled
// Account header is the format's own and is checked as is.
func quirkAMLWorld(t *testing.T, trans, old, other string) string {
	t.Helper()
	raw, err := os.ReadFile(trans)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("Timestamp,From Bank,Account,To Bank,Account,")) {
		t.Fatalf("generated header %q: want the doubled Account column", raw[:60])
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	id := "0" + old
	var acctOld, acctOther string
	for i, l := range lines[1:] {
		f := strings.Split(l, ",")
		for _, c := range []int{1, 3} {
			if f[c] == old {
				f[c] = id
				acctOld = f[c+1]
			} else if f[c] == other {
				acctOther = f[c+1]
			}
		}
		lines[i+1] = strings.Join(f, ",")
	}
	if acctOld == "" || acctOther == "" {
		t.Fatalf("no accounts of banks %q and %q in %s", old, other, trans)
	}
	ts := strings.Split(lines[1], ",")[0] // the first day: training rows
	lines = append(lines,
		ts+","+id+","+acctOld+","+other+","+acctOther+",0.123456,Bitcoin,0.123456,Bitcoin,Bitcoin,0",
		ts+","+other+","+acctOther+","+id+","+acctOld+",0.000015,Bitcoin,0.30,US Dollar,Bitcoin,0")
	if err := os.WriteFile(trans, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	accts, err := amlworld.SiblingPath(trans, "accounts")
	if err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(accts)
	if err != nil {
		t.Fatal(err)
	}
	al := strings.Split(string(raw), "\n")
	for i := 1; i < len(al); i++ {
		if f := strings.Split(al[i], ","); len(f) > 1 && f[1] == old {
			f[1] = id
			al[i] = strings.Join(f, ",")
		}
	}
	if err := os.WriteFile(accts, []byte(strings.Join(al, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return id
}

// runAMLTrans runs `sim --scenario aml --trans FILE --rounds 2` in this
// process and returns its report and the rows of its rounds.csv.
func runAMLTrans(t *testing.T, extra ...string) (Report, [][]string, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	root := newRootCmd()
	root.SetArgs(append([]string{"sim", "--scenario", "aml", "--rounds", "2", "--local-epochs", "2", "--batch", "128",
		"--seed", "1", "--out", out, "--json", "--log-level", "error"}, extra...))
	rep, err := executeForReport(t, root)
	if err != nil {
		return rep, nil, err
	}
	f, err := os.Open(filepath.Join(out, "rounds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rep, rows, nil
}

// checkAllBanksIn fails unless both rounds closed with exactly the banks.
func checkAllBanksIn(t *testing.T, rep Report, rows [][]string, trans string, banks []string) {
	t.Helper()
	if rep.Dataset != trans || rep.Clients != len(banks) || rep.Rounds != 2 {
		t.Fatalf("report dataset %q, %d clients, %d rounds: want %q, %d, 2", rep.Dataset, rep.Clients, rep.Rounds, trans, len(banks))
	}
	if len(rows) != 3 || rows[0][2] != "in" {
		t.Fatalf("rounds.csv %v: want a header and 2 rounds", rows)
	}
	var want []string
	for _, b := range banks {
		want = append(want, bank.ClientID(b))
	}
	slices.Sort(want)
	for _, r := range rows[1:] {
		in := strings.Fields(r[2])
		slices.Sort(in)
		if !slices.Equal(in, want) {
			t.Errorf("round %s closed (%s) with %v in, want %v", r[0], r[1], in, want)
		}
	}
}

func TestAMLSimTrans(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model")
	}
	trans, banks := writeAMLWorld(t, t.TempDir())
	rep, rows, err := runAMLTrans(t, "--trans", trans)
	if err != nil {
		t.Fatal(err)
	}
	checkAllBanksIn(t, rep, rows, trans, banks)
	if r, ok := rep.Metrics["rows"].(float64); !ok || r != 4000 {
		t.Errorf("rows %v, want the file's 4000", rep.Metrics["rows"])
	}
}

func TestAMLSimTransQuirks(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model")
	}
	trans, banks := writeAMLWorld(t, t.TempDir())
	id := quirkAMLWorld(t, trans, banks[1], banks[0])
	rep, rows, err := runAMLTrans(t, "--trans", trans)
	if err != nil {
		t.Fatal(err)
	}
	checkAllBanksIn(t, rep, rows, trans, []string{banks[0], id})
	if r, ok := rep.Metrics["rows"].(float64); !ok || r != 4002 {
		t.Errorf("rows %v, want the world's 4000 and the 2 Bitcoin rows", rep.Metrics["rows"])
	}
}

func TestAMLSimTransErrors(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "X_Trans.csv")
	if err := os.WriteFile(broken, []byte(amlworld.TransHeader+"\n"+
		"2022/09/01 00:20,010,8000EBD30,010,8000EBD30,3697.34,US Dollar,3697.34,US Dollar,Reinvestment,0\n"+
		"2022/09/01 00:21,010,8000EBD30,010,8000F4580,oops,US Dollar,0.01,US Dollar,Cheque,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	twoBanks := filepath.Join(dir, "Z_Trans.csv")
	if err := os.WriteFile(twoBanks, []byte(amlworld.TransHeader+"\n"+
		"2022/09/01 00:20,010,8000EBD30,70,800BC6F20,3697.34,US Dollar,3697.34,US Dollar,Reinvestment,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	brokenAccts := filepath.Join(dir, "Z_accounts.csv")
	if err := os.WriteFile(brokenAccts, []byte(amlworld.AccountsHeader+"\nArcadia Bank #8,010\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oneBank := filepath.Join(dir, "Y_Trans.csv")
	if err := os.WriteFile(oneBank, []byte(amlworld.TransHeader+"\n"+
		"2022/09/01 00:20,010,8000EBD30,010,8000EBD30,3697.34,US Dollar,3697.34,US Dollar,Reinvestment,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--trans", filepath.Join(dir, "missing_Trans.csv")}, []string{"--trans", "missing_Trans.csv", "no such file"}},
		{[]string{"--trans", broken}, []string{"--trans", "X_Trans.csv:3:", `bad amount "oops"`}},
		{[]string{"--trans", oneBank}, []string{"1 bank", "at least 2"}},
		{[]string{"--trans", oneBank, "--banks", "4"}, []string{"--banks shapes a generated world"}},
		{[]string{"--trans", twoBanks, "--accounts", filepath.Join(dir, "none.csv")}, []string{"--accounts", "none.csv", "no such file"}},
		{[]string{"--trans", twoBanks}, []string{"--accounts", "Z_accounts.csv:2:"}}, // the sibling, found by default
		{[]string{"--accounts", filepath.Join(dir, "none.csv")}, []string{"--accounts needs --trans"}},
	} {
		_, _, err := runAMLTrans(t, tc.args...)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %v, want one containing %q", tc.args, err, w)
			}
		}
	}
}
