package bank

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/aml/worldgen"
)

// sameView fails unless got and want hold the same rows, accounts, splits,
// flags, global ids and cut-offs.
func sameView(t *testing.T, got, want *View) {
	t.Helper()
	if got.Bank != want.Bank || got.ID != want.ID || got.Cut != want.Cut {
		t.Fatalf("bank %q (%s) cut %+v, want %q (%s) cut %+v", got.Bank, got.ID, got.Cut, want.Bank, want.ID, want.Cut)
	}
	g, w := got.Graph, want.Graph
	if g.Name != w.Name || !slices.Equal(g.BankIDs, w.BankIDs) || !slices.Equal(g.AccountIDs, w.AccountIDs) ||
		!slices.Equal(g.AccountBank, w.AccountBank) || g.NumEdges() != w.NumEdges() {
		t.Fatalf("%s: graph %q with %d banks, %d accounts, %d rows; want %q with %d, %d, %d", got.ID,
			g.Name, g.NumBanks(), g.NumAccounts(), g.NumEdges(), w.Name, w.NumBanks(), w.NumAccounts(), w.NumEdges())
	}
	for e := range w.Src {
		if g.Src[e] != w.Src[e] || g.Dst[e] != w.Dst[e] || g.Row(e) != w.Row(e) {
			t.Fatalf("%s: row %d is %+v, want %+v", got.ID, e, g.Row(e), w.Row(e))
		}
	}
	if !slices.Equal(got.Split, want.Split) || !slices.Equal(got.Home, want.Home) ||
		!slices.Equal(got.Owned, want.Owned) || !slices.Equal(got.Global, want.Global) {
		t.Fatalf("%s: splits, home flags, owned flags or global ids differ", got.ID)
	}
	if !slices.Equal(got.Accounts, want.Accounts) {
		t.Fatalf("%s: accounts %v, want %v", got.ID, got.Accounts, want.Accounts)
	}
}

// Every bank directory written from a generated world loads back into the
// view SplitWorld makes of the world in memory.
func TestLoadBankMatchesSplitBanks(t *testing.T) {
	w, sum := genWorld(t, worldgen.Tiny, 11, 4, 20_000)
	accounts, _, err := amlworld.LoadAccounts(sum.AccountsPath, amlworld.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The Trans file alone: no sibling accounts or patterns file.
	alone := filepath.Join(t.TempDir(), "Alone_Trans.csv")
	data, err := os.ReadFile(sum.TransPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		opt      SplitOptions
		accounts []amlworld.Account
		files    []string // besides the Trans file and split.json
	}{
		{"siblings found", SplitOptions{Trans: sum.TransPath}, accounts, []string{"_accounts.csv", "_Patterns.txt"}},
		{"files named", SplitOptions{Trans: alone, Accounts: sum.AccountsPath, Patterns: sum.PatternsPath}, accounts, []string{"_accounts.csv", "_Patterns.txt"}},
		{"trans only", SplitOptions{Trans: alone}, nil, nil},
		{"trans only over an earlier split", SplitOptions{Trans: alone, Accounts: sum.AccountsPath, Patterns: sum.PatternsPath}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opt.Out = t.TempDir()
			if tc.accounts == nil && tc.opt.Accounts != "" {
				// Split with the accounts first, then again without.
				if _, err := Write(tc.opt); err != nil {
					t.Fatal(err)
				}
				tc.opt.Accounts, tc.opt.Patterns = "", ""
			}
			ws, err := Write(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			world, _, err := amlworld.LoadTrans(tc.opt.Trans, amlworld.Options{})
			if err != nil {
				t.Fatal(err)
			}
			views, err := SplitWorld(world, tc.accounts)
			if err != nil {
				t.Fatal(err)
			}
			if ws.Rows != w.NumEdges() || len(ws.Banks) != len(views) || ws.Cut != amlworld.CutoffsOf(w) {
				t.Fatalf("summary: %d rows, %d banks, cut %+v", ws.Rows, len(ws.Banks), ws.Cut)
			}
			total, accts := 0, 0
			for b, v := range views {
				bf := ws.Banks[b]
				if bf.Bank != v.Bank || bf.Rows != v.Graph.NumEdges() || bf.Accounts != len(v.Accounts) {
					t.Fatalf("%s: summary %+v, view has %d rows, %d accounts", v.ID, bf, v.Graph.NumEdges(), len(v.Accounts))
				}
				total += bf.Home
				accts += bf.Accounts
				entries, err := os.ReadDir(bf.Dir)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				want := []string{world.Name + "_Trans.csv", SplitFile}
				for _, f := range tc.files {
					want = append(want, world.Name+f)
				}
				slices.Sort(want)
				if !slices.Equal(names, want) {
					t.Fatalf("%s holds %v, want %v", bf.Dir, names, want)
				}
				got, err := Load(bf.Dir)
				if err != nil {
					t.Fatal(err)
				}
				sameView(t, got, v)
			}
			if total != w.NumEdges() {
				t.Fatalf("home rows sum to %d of %d", total, w.NumEdges())
			}
			if tc.accounts != nil && accts != len(tc.accounts)-ws.AccountsWithoutRows {
				t.Fatalf("%d accounts written of %d (%d without rows)", accts, len(tc.accounts), ws.AccountsWithoutRows)
			}
		})
	}
}

// The AMLworld quirks: the doubled "Account" header, bank ids with leading
// zeros ("010" and "10" are different banks), Bitcoin amounts with six
// decimals, rows out of time order, quoted names in the accounts file.
func TestWriteBanksFixture(t *testing.T) {
	fixture := filepath.Join("..", "amlworld", "testdata", "Edges_Trans.csv")
	out := t.TempDir()
	ws, err := Write(SplitOptions{Trans: fixture, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	var banks []string
	for _, bf := range ws.Banks {
		banks = append(banks, bf.Bank)
	}
	slices.Sort(banks)
	if want := []string{"00952", "010", "0111632", "0112", "10", "70"}; !slices.Equal(banks, want) {
		t.Fatalf("banks %v, want %v", banks, want)
	}
	lines := func(path string) []string {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out []string
		for s := bufio.NewScanner(f); s.Scan(); {
			out = append(out, s.Text())
		}
		return out
	}
	src := lines(fixture)
	for _, bf := range ws.Banks {
		got := lines(filepath.Join(bf.Dir, "Edges_Trans.csv"))
		if got[0] != amlworld.TransHeader {
			t.Fatalf("%s: header %q", bf.Dir, got[0])
		}
		// The rows are the fixture's lines touching the bank, verbatim and
		// in file order.
		var want []string
		for _, l := range src[1:] {
			f := strings.Split(l, ",")
			if f[1] == bf.Bank || f[3] == bf.Bank {
				want = append(want, l)
			}
		}
		if !slices.Equal(got[1:], want) {
			t.Fatalf("%s rows:\n%s\nwant:\n%s", bf.Bank, strings.Join(got[1:], "\n"), strings.Join(want, "\n"))
		}
		for _, a := range lines(filepath.Join(bf.Dir, "Edges_accounts.csv"))[1:] {
			if !strings.Contains(a, ","+bf.Bank+",") {
				t.Fatalf("bank %s holds account line %q", bf.Bank, a)
			}
		}
	}
	dir := filepath.Join(out, "bank-0112")
	trans := strings.Join(lines(filepath.Join(dir, "Edges_Trans.csv")), "\n")
	for _, s := range []string{"0.123456,Bitcoin", "0.000015,Bitcoin"} {
		if !strings.Contains(trans, s) {
			t.Fatalf("bank 0112 lost the amount %q:\n%s", s, trans)
		}
	}
	acc := lines(filepath.Join(dir, "Edges_accounts.csv"))
	if len(acc) != 2 || acc[1] != `"Bank of Lyon, Rhone",0112,80AB52E10,8003F1D70,"Corporation ""Blue"" #33520"` {
		t.Fatalf("bank 0112 accounts %q", acc)
	}
	if p := lines(filepath.Join(out, "bank-0111632", "Edges_Patterns.txt")); len(p) != 4 || !strings.HasPrefix(p[0], "BEGIN") || len(p[3]) != 0 {
		t.Fatalf("bank 0111632 patterns %q (want its one row of the fan-out)", p)
	}
	w, _, err := amlworld.LoadTrans(fixture, amlworld.Options{})
	if err != nil {
		t.Fatal(err)
	}
	accounts, _, err := amlworld.LoadAccounts(filepath.Join(filepath.Dir(fixture), "Edges_accounts.csv"), amlworld.Options{})
	if err != nil {
		t.Fatal(err)
	}
	views, err := SplitWorld(w, accounts)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		got, err := Load(filepath.Join(out, "bank-"+v.Bank))
		if err != nil {
			t.Fatal(err)
		}
		sameView(t, got, v)
	}
	// "10" and "010" are different banks: "10"'s one account is foreign to
	// bank 010, though its number is that of an 010 account.
	v010 := views[0]
	if v010.Bank != "010" {
		t.Fatalf("first bank %q", v010.Bank)
	}
	a, ok := v010.Graph.Account("10", "8000EBD30")
	b, ok2 := v010.Graph.Account("010", "8000EBD30")
	if !ok || !ok2 || a == b || v010.Owned[a] || !v010.Owned[b] || v010.Global[a] == v010.Global[b] {
		t.Fatalf("bank 010 confuses 10/8000EBD30 with its own 010/8000EBD30")
	}
}

func TestLoadBankRefuses(t *testing.T) {
	fixture := filepath.Join("..", "amlworld", "testdata", "Edges_Trans.csv")
	for _, tc := range []struct {
		name  string
		spoil func(dir string) error
	}{
		{"no split.json", func(dir string) error { return os.Remove(filepath.Join(dir, SplitFile)) }},
		{"bad json", func(dir string) error { return os.WriteFile(filepath.Join(dir, SplitFile), []byte("{"), 0o644) }},
		{"wrong bank", func(dir string) error { return rewrite(filepath.Join(dir, SplitFile), `"bank": "010"`, `"bank": "70"`) }},
		{"row lost", func(dir string) error {
			p := filepath.Join(dir, "Edges_Trans.csv")
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := strings.TrimSuffix(string(data), "\n")
			return os.WriteFile(p, []byte(s[:strings.LastIndex(s, "\n")+1]), 0o644)
		}},
		{"foreign account", func(dir string) error {
			return rewrite(filepath.Join(dir, "Edges_accounts.csv"), "Arcadia Bank #8,010,8000F4580", "Arcadia Bank #8,70,8000F4580")
		}},
		{"cut-offs off days", func(dir string) error {
			return rewrite(filepath.Join(dir, SplitFile), `"train_end": `, `"train_end": 1`)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			if _, err := Write(SplitOptions{Trans: fixture, Out: out}); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(out, "bank-010")
			if _, err := Load(dir); err != nil {
				t.Fatalf("intact directory: %v", err)
			}
			if err := tc.spoil(dir); err != nil {
				t.Fatal(err)
			}
			if _, err := Load(dir); err == nil {
				t.Fatal("loaded a broken directory")
			}
		})
	}
}

func rewrite(path, old, new string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !strings.Contains(string(data), old) {
		return os.ErrNotExist
	}
	return os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644)
}
