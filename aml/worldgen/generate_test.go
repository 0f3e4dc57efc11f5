package worldgen

import (
	"bytes"
	"crypto/sha256"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"graphfed/aml/amlworld"
)

// world files generated once per configuration and shared by the tests.
type generated struct {
	cfg      Config
	sum      Summary
	g        *amlworld.Graph
	attempts []amlworld.Attempt
	accounts []amlworld.Account
}

func generate(t *testing.T, cfg Config) *generated {
	t.Helper()
	dir := t.TempDir()
	s, err := Generate(cfg, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	g, iss, err := amlworld.LoadTrans(s.TransPath, amlworld.Options{})
	if err != nil || iss.Count != 0 {
		t.Fatalf("load trans: %v %+v", err, iss)
	}
	at, iss, err := amlworld.LoadPatterns(s.PatternsPath, amlworld.Options{})
	if err != nil || iss.Count != 0 {
		t.Fatalf("load patterns: %v %+v", err, iss)
	}
	acc, iss, err := amlworld.LoadAccounts(s.AccountsPath, amlworld.Options{})
	if err != nil || iss.Count != 0 {
		t.Fatalf("load accounts: %v %+v", err, iss)
	}
	return &generated{cfg: cfg, sum: s, g: g, attempts: at, accounts: acc}
}

func tinyConfig(t *testing.T, ratio Ratio, seed uint64) Config {
	t.Helper()
	cfg, err := Preset(Tiny, ratio, seed)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestRoundTrip parses everything the generator writes and checks it
// against the summary and the format's promises.
func TestRoundTrip(t *testing.T) {
	cfg := tinyConfig(t, HI, 7)
	w := generate(t, cfg)
	g, s := w.g, w.sum
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	st := g.Stats()
	if st.Rows != cfg.Transactions || s.Rows != st.Rows {
		t.Fatalf("rows: loaded %d, summary %d, configured %d", st.Rows, s.Rows, cfg.Transactions)
	}
	if st.LaunderingRows != s.LaunderingRows || st.SelfTransfers != s.SelfTransfers || st.CrossBankRows != s.CrossBankRows {
		t.Fatalf("loaded stats %+v disagree with summary %+v", st, s)
	}
	if len(w.accounts) != cfg.Accounts || st.Accounts > cfg.Accounts || st.Banks != cfg.Banks {
		t.Fatalf("%d accounts listed, %d transacting, %d banks", len(w.accounts), st.Accounts, st.Banks)
	}
	// Per-bank edge counts agree, bank by bank id.
	for b, id := range s.BankIDs {
		i, ok := g.Bank(id)
		if !ok || st.BankEdges[i] != s.BankEdges[b] {
			t.Fatalf("bank %q: loaded %v, summary %d", id, ok, s.BankEdges[b])
		}
	}
	if st.BankEdgeRatio <= 1 {
		t.Fatalf("bank edge ratio %v, want > 1", st.BankEdgeRatio)
	}
	// Leading zeros: "0dd" and "dd" are both banks.
	if id := s.BankIDs[0]; id[0] != '0' || s.BankIDs[2] != id[1:] {
		t.Fatalf("bank ids %q lack the leading-zero pair", s.BankIDs)
	}
	// Accounts: 9 upper-case hex characters, unique within a bank, and every
	// transacting account is listed.
	seen := map[string]bool{}
	for _, a := range w.accounts {
		if len(a.Account) != 9 || strings.Trim(a.Account, "0123456789ABCDEF") != "" {
			t.Fatalf("account %q", a.Account)
		}
		seen[a.BankID+","+a.Account] = true
	}
	for i, id := range g.AccountIDs {
		if !seen[g.BankIDs[g.AccountBank[i]]+","+id] {
			t.Fatalf("account %s at %s not in the accounts file", id, g.BankIDs[g.AccountBank[i]])
		}
	}
	// Self-transfers about 12%.
	if share := float64(st.SelfTransfers) / float64(st.Rows); math.Abs(share-cfg.SelfTransferShare) > 0.01 {
		t.Fatalf("self-transfer share %.4f", share)
	}
	// Every currency and format occurs; amounts span cents to millions; some
	// rows exchange currencies.
	for c, n := range st.Currencies {
		if n == 0 {
			t.Errorf("currency %s unused", amlworld.Currency(c))
		}
	}
	for f, n := range st.Formats {
		if n == 0 {
			t.Errorf("format %s unused", amlworld.Format(f))
		}
	}
	lo, hi := math.Inf(1), 0.0
	for e := range g.AmountPaid {
		if g.PayCurrency[e] != amlworld.Bitcoin {
			lo, hi = min(lo, g.AmountPaid[e]), max(hi, g.AmountPaid[e])
		}
	}
	if lo > 0.05 || hi < 1e6 || st.MixedCurrencyRows == 0 {
		t.Fatalf("amounts %v..%v, %d mixed-currency rows", lo, hi, st.MixedCurrencyRows)
	}
	// Pattern rows are laundering rows of the Trans file, byte for byte.
	trans := map[string]int{}
	for e := range g.Src {
		if g.Label[e] == 1 {
			r := g.Row(e)
			trans[string(amlworld.AppendTxRow(nil, &r))]++
		}
	}
	var patternRows int64
	for _, a := range w.attempts {
		for i := range a.Rows {
			k := string(amlworld.AppendTxRow(nil, &a.Rows[i]))
			if trans[k] == 0 {
				t.Fatalf("pattern row %s not a laundering row of the Trans file", k)
			}
			trans[k]--
			patternRows++
		}
	}
	if patternRows != s.PatternRows || len(w.attempts) != s.Attempts {
		t.Fatalf("%d pattern rows in %d attempts, summary %d in %d", patternRows, len(w.attempts), s.PatternRows, s.Attempts)
	}
	unpat := int64(0)
	for _, n := range trans {
		unpat += int64(n)
	}
	want := int64(math.Round(float64(s.LaunderingRows) * cfg.UnpatternedShare))
	if unpat == 0 || math.Abs(float64(unpat-want)) > 2 {
		t.Fatalf("%d laundering rows outside patterns, want about %d", unpat, want)
	}
	// Rows are in time order, Bitcoin amounts have 6 decimals.
	for e := 1; e < g.NumEdges(); e++ {
		if g.Time[e] < g.Time[e-1] {
			t.Fatalf("row %d out of time order", e+2)
		}
	}
	raw, err := os.ReadFile(s.TransPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte(amlworld.TransHeader+"\n")) || !bytes.Contains(raw, []byte(",Bitcoin,Bitcoin,")) {
		t.Fatal("header or Bitcoin rows missing")
	}
	for _, line := range bytes.Split(raw, []byte("\n"))[1:] {
		if f := bytes.Split(line, []byte(",")); len(f) == 11 && string(f[8]) == "Bitcoin" {
			if d := bytes.IndexByte(f[7], '.'); d < 0 || len(f[7])-d-1 != 6 {
				t.Fatalf("Bitcoin amount %s", f[7])
			}
			break
		}
	}
	// Nothing else is left in the directory.
	ents, _ := os.ReadDir(filepath.Dir(s.TransPath))
	if len(ents) != 3 {
		t.Fatalf("%d files written", len(ents))
	}
}

// TestTypologyMix: rows per typology in the Patterns file match the
// configured mix within 5% (relative), and at least half of the laundering
// hops cross banks.
func TestTypologyMix(t *testing.T) {
	skewed := DefaultMix()
	skewed[amlworld.FanOut], skewed[amlworld.Cycle], skewed[amlworld.Stack] = 0.30, 0.05, 0.0
	cases := []struct {
		name  string
		ratio float64
		mix   [amlworld.NumTypologies]float64
		tol   float64 // relative
	}{
		{"default mix", 1.0 / 50, DefaultMix(), 0.05},
		{"skewed mix", 1.0 / 50, skewed, 0.05},
		// HI on a tiny world has ~100 pattern rows: the last attempt of a
		// typology may overshoot by a few rows, so check the share within
		// 5 percentage points instead.
		{"tiny HI", 1.0 / 900, DefaultMix(), -0.05},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := tinyConfig(t, HI, 3)
			cfg.IllicitRatio, cfg.Mix = c.ratio, c.mix
			w := generate(t, cfg)
			counts := amlworld.RowsPerTypology(w.attempts)
			var total int64
			for _, n := range counts {
				total += n
			}
			for ty, n := range counts {
				share, want := float64(n)/float64(total), c.mix[ty]
				if c.tol > 0 && math.Abs(share-want) > c.tol*want || c.tol < 0 && math.Abs(share-want) > -c.tol {
					t.Errorf("%s: %d of %d rows (%.4f), want %.4f", amlworld.Typology(ty), n, total, share, want)
				}
				if want == 0 && n != 0 {
					t.Errorf("%s: %d rows, want none", amlworld.Typology(ty), n)
				}
			}
			if counts != w.sum.RowsPerTypology {
				t.Fatalf("parsed %v, summary %v", counts, w.sum.RowsPerTypology)
			}
			var hops, cross int
			for _, a := range w.attempts {
				for _, r := range a.Rows {
					hops++
					if r.FromBank != r.ToBank {
						cross++
					}
				}
			}
			if share := float64(cross) / float64(hops); share < 0.5 {
				t.Fatalf("%d of %d hops cross banks", cross, hops)
			}
			rate := float64(w.sum.LaunderingRows) / float64(w.sum.Rows)
			if math.Abs(rate-c.ratio) > 0.05*c.ratio+3/float64(w.sum.Rows) {
				t.Fatalf("laundering rate %v, want %v", rate, c.ratio)
			}
		})
	}
}

// TestDeterministic: one seed, one world; another seed, another world.
func TestDeterministic(t *testing.T) {
	hash := func(seed uint64) [3][32]byte {
		cfg := tinyConfig(t, LI, seed)
		var bufs [3]bytes.Buffer
		if _, err := Write(cfg, &bufs[0], &bufs[1], &bufs[2], nil); err != nil {
			t.Fatal(err)
		}
		var h [3][32]byte
		for i := range bufs {
			h[i] = sha256.Sum256(bufs[i].Bytes())
		}
		return h
	}
	a, b, c := hash(11), hash(11), hash(12)
	if a != b {
		t.Fatal("same seed, different files")
	}
	for i := range a {
		if a[i] == c[i] {
			t.Fatalf("file %d identical for different seeds", i)
		}
	}
}

func TestConfig(t *testing.T) {
	for _, size := range []Size{Tiny, Small, Medium} {
		for _, ratio := range []Ratio{HI, LI} {
			cfg, err := Preset(size, ratio, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("%s %s: %v", size, ratio, err)
			}
		}
	}
	cfg, _ := Preset(Small, LI, 1)
	if cfg.Prefix != "LI-Small" || cfg.Banks != 8 {
		t.Fatalf("preset %+v", cfg)
	}
	bad := []struct {
		name string
		edit func(*Config)
	}{
		{"one bank", func(c *Config) { c.Banks = 1 }},
		{"prefix with slash", func(c *Config) { c.Prefix = "a/b" }},
		{"mix not summing to 1", func(c *Config) { c.Mix[0] += 0.1 }},
		{"negative mix", func(c *Config) { c.Mix[0], c.Mix[1] = -0.1, c.Mix[1]+0.1 }},
		{"zero ratio", func(c *Config) { c.IllicitRatio = 0 }},
		{"NaN hop", func(c *Config) { c.CrossBankHop = math.NaN() }},
		{"start not midnight", func(c *Config) { c.Start += 60 }},
		{"too few accounts", func(c *Config) { c.Accounts = 10 }},
		{"no days", func(c *Config) { c.Days = 0 }},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			c, _ := Preset(Tiny, HI, 1)
			b.edit(&c)
			if err := c.Validate(); err == nil {
				t.Fatal("accepted")
			}
			if _, err := Generate(c, t.TempDir(), nil); err == nil {
				t.Fatal("generated")
			}
		})
	}
	if _, err := ParseSize("huge"); err == nil {
		t.Fatal("size huge accepted")
	}
	if r, err := ParseRatio("HI"); err != nil || r != HI {
		t.Fatal("ratio HI rejected")
	}
}

func TestProgress(t *testing.T) {
	cfg := tinyConfig(t, HI, 5)
	var last, calls int64
	_, err := Write(cfg, &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}, func(done, total int64) {
		if done < last || done > total {
			t.Fatalf("progress %d/%d after %d", done, total, last)
		}
		last = done
		calls++
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls < 2 || last != cfg.Transactions {
		t.Fatalf("%d calls, last %d", calls, last)
	}
}

// TestEdgeConfigs generates unusual but valid worlds and checks the
// invariants that must hold for any of them.
func TestEdgeConfigs(t *testing.T) {
	cases := []struct {
		name      string
		edit      func(*Config)
		hopsCross func(share float64) bool
	}{
		{"sparse traffic", func(c *Config) { c.Accounts, c.Transactions = 20_000, 2_000 }, nil},
		{"fifty skewed banks", func(c *Config) { c.Banks, c.Accounts, c.BankSkew = 50, 2_500, 4 }, nil},
		{"one day", func(c *Config) { c.Days = 1 }, nil},
		{"two banks", func(c *Config) { c.Banks = 2 }, nil},
		{"no unpatterned rows", func(c *Config) { c.UnpatternedShare = 0 }, nil},
		{"every hop crosses", func(c *Config) { c.CrossBankHop = 1 }, func(s float64) bool { return s > 0.9 }},
		{"no hop crosses", func(c *Config) { c.CrossBankHop = 0 }, func(s float64) bool { return s == 0 }},
		{"high illicit ratio", func(c *Config) { c.IllicitRatio = 0.2 }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := tinyConfig(t, HI, 4)
			c.edit(&cfg)
			w := generate(t, cfg)
			st := w.g.Stats()
			if st.Rows != cfg.Transactions || len(w.accounts) != cfg.Accounts {
				t.Fatalf("%d rows, %d accounts", st.Rows, len(w.accounts))
			}
			banks := map[string]bool{}
			for _, a := range w.accounts {
				banks[a.BankID] = true
			}
			if len(banks) != cfg.Banks {
				t.Fatalf("%d of %d banks hold accounts", len(banks), cfg.Banks)
			}
			if c.hopsCross != nil {
				share := float64(w.sum.PatternCrossBankRows) / float64(w.sum.PatternRows)
				if !c.hopsCross(share) {
					t.Fatalf("cross-bank hop share %v", share)
				}
			}
			last := cfg.Start + int64(cfg.Days)*86400
			if st.FirstTime < cfg.Start || st.LastTime >= last {
				t.Fatalf("rows span %d..%d, outside the %d days", st.FirstTime, st.LastTime, cfg.Days)
			}
		})
	}
}
