package worldgen

import (
	"fmt"
	"math"

	"graphfed/aml/amlworld"
)

// Size names a preset world size.
type Size string

// The preset sizes. Rows and accounts are targets: accounts are exact, rows
// within a fraction of a percent.
const (
	// Demo is the world of `make demo`: 30k accounts and 300k rows over 10
	// days with 1 laundering row in 100 — denser than the published 1 in
	// ~1,000 so that a world this small holds ~600 laundering rows in its
	// test days. At 60k rows (~120) the F1 of one seed's world swung by
	// ±0.19 from seed to seed and hid every difference between methods.
	Demo   Size = "demo"
	Tiny   Size = "tiny"   // 10k accounts, 100k rows over 10 days
	Small  Size = "small"  // 500k accounts, 5M rows over 10 days (HI-Small is 515k/5.08M)
	Medium Size = "medium" // 2M accounts, 30M rows over 16 days (HI-Medium is 2.08M/31.9M)
)

// Ratio names a preset illicit ratio.
type Ratio string

// The preset ratios: AMLworld's higher- and lower-illicit variants.
const (
	HI Ratio = "hi" // 1 laundering row in 900
	LI Ratio = "li" // 1 laundering row in 1,900
)

// Config describes a world. Preset fills every field; tests and callers may
// then adjust any of them.
type Config struct {
	Prefix       string // file prefix: <Prefix>_Trans.csv ...
	Banks        int    // number of banks B
	Accounts     int    // number of accounts
	Transactions int64  // number of rows of the Trans file
	Days         int    // days the transactions span
	Start        int64  // Unix seconds of midnight UTC of the first day
	// IllicitRatio is the share of laundering rows among all rows.
	IllicitRatio float64
	// Mix is each typology's share of the rows inside pattern blocks.
	Mix [amlworld.NumTypologies]float64
	// UnpatternedShare is the share of laundering rows outside any pattern
	// block (the launderers' onward spending after an attempt, labelled but
	// not listed in the Patterns file, as in the published sets).
	UnpatternedShare float64
	// CrossBankHop is the probability that a laundering hop's next account
	// is chosen at another bank than the previous one.
	CrossBankHop float64
	// SelfTransferShare is the share of rows that are self-transfers.
	SelfTransferShare float64
	// BankSkew is the Zipf exponent of bank sizes: bank k of B (in a random
	// order) holds a share proportional to 1/k^BankSkew. 0 makes banks equal.
	BankSkew float64
	// LaundererShare is the share of accounts in the pool from which
	// laundering attempts mostly draw their accounts (others are one-off
	// mules drawn from all accounts).
	LaundererShare float64
	// RecruitPool is the probability that an account a laundering hop
	// recruits (every account of an attempt but its first) comes from the
	// launderer pool; the rest are mules drawn from all of the bank's
	// accounts. The attempt's first account comes from the pool with
	// probability 0.7.
	RecruitPool float64
	Seed        uint64
}

// DefaultMix is the typology mix of the presets (shares of pattern rows).
func DefaultMix() [amlworld.NumTypologies]float64 {
	var m [amlworld.NumTypologies]float64
	m[amlworld.FanOut] = 0.15
	m[amlworld.FanIn] = 0.15
	m[amlworld.GatherScatter] = 0.15
	m[amlworld.ScatterGather] = 0.15
	m[amlworld.Cycle] = 0.10
	m[amlworld.RandomWalk] = 0.10
	m[amlworld.Bipartite] = 0.10
	m[amlworld.Stack] = 0.10
	return m
}

// ParseSize checks a size name.
func ParseSize(s string) (Size, error) {
	switch Size(s) {
	case Demo, Tiny, Small, Medium:
		return Size(s), nil
	}
	return "", fmt.Errorf("aml: unknown size %q (want demo, tiny, small or medium)", s)
}

// ParseRatio checks a ratio name ("hi" or "li", any case).
func ParseRatio(s string) (Ratio, error) {
	switch s {
	case "hi", "HI":
		return HI, nil
	case "li", "LI":
		return LI, nil
	}
	return "", fmt.Errorf("aml: unknown ratio %q (want hi or li)", s)
}

// Preset returns the configuration of a named size and ratio with 8 banks,
// starting 2022/09/01 like the published sets. Its Prefix is e.g. "HI-Small".
func Preset(size Size, ratio Ratio, seed uint64) (Config, error) {
	c := Config{
		Banks:             8,
		Start:             1661990400, // 2022-09-01 00:00 UTC
		Mix:               DefaultMix(),
		UnpatternedShare:  0.05,
		CrossBankHop:      0.75,
		SelfTransferShare: 0.12,
		BankSkew:          0.8,
		LaundererShare:    0.005,
		RecruitPool:       0.7,
		Seed:              seed,
	}
	var sizeName string
	switch size {
	case Demo:
		c.Accounts, c.Transactions, c.Days, sizeName = 30_000, 300_000, 10, "Demo"
	case Tiny:
		c.Accounts, c.Transactions, c.Days, sizeName = 10_000, 100_000, 10, "Tiny"
	case Small:
		c.Accounts, c.Transactions, c.Days, sizeName = 500_000, 5_000_000, 10, "Small"
	case Medium:
		c.Accounts, c.Transactions, c.Days, sizeName = 2_000_000, 30_000_000, 16, "Medium"
	default:
		return Config{}, fmt.Errorf("aml: preset: unknown size %q", size)
	}
	switch ratio {
	case HI:
		c.IllicitRatio = 1.0 / 900
		c.Prefix = "HI-" + sizeName
	case LI:
		c.IllicitRatio = 1.0 / 1900
		c.Prefix = "LI-" + sizeName
	default:
		return Config{}, fmt.Errorf("aml: preset: unknown ratio %q", ratio)
	}
	if size == Demo {
		c.IllicitRatio *= 9 // HI: 1 in 100, LI: 1 in ~211
	}
	return c, nil
}

// Validate checks that c describes a world the generator can build.
func (c *Config) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("aml: config: "+format, a...)
	}
	switch {
	case c.Prefix == "" || !prefixOK(c.Prefix):
		return bad("prefix %q must be non-empty letters, digits, '-', '_' or '.'", c.Prefix)
	case c.Banks < 2 || c.Banks > 1000:
		return bad("%d banks, want 2..1000", c.Banks)
	case c.Accounts < 50*c.Banks:
		return bad("%d accounts for %d banks, want at least 50 per bank", c.Accounts, c.Banks)
	case c.Accounts > 1<<30:
		return bad("%d accounts is too many", c.Accounts)
	case c.Transactions < int64(c.Accounts)/10 || c.Transactions > 1<<34:
		return bad("%d transactions for %d accounts", c.Transactions, c.Accounts)
	case c.Days < 1 || c.Days > 3660:
		return bad("%d days, want 1..3660", c.Days)
	case c.Start%86400 != 0 || c.Start < -30610224000 || c.Start > 253402300799-int64(c.Days)*86400:
		return bad("start %d must be a UTC midnight in years 1000..9999", c.Start)
	case !(c.IllicitRatio > 0 && c.IllicitRatio <= 0.5):
		return bad("illicit ratio %v, want (0, 0.5]", c.IllicitRatio)
	case !(c.UnpatternedShare >= 0 && c.UnpatternedShare < 1):
		return bad("unpatterned share %v, want [0,1)", c.UnpatternedShare)
	case !(c.CrossBankHop >= 0 && c.CrossBankHop <= 1):
		return bad("cross-bank hop probability %v, want [0,1]", c.CrossBankHop)
	case !(c.SelfTransferShare >= 0 && c.SelfTransferShare <= 0.5):
		return bad("self-transfer share %v, want [0,0.5]", c.SelfTransferShare)
	case !(c.BankSkew >= 0 && c.BankSkew <= 4):
		return bad("bank skew %v, want [0,4]", c.BankSkew)
	case !(c.LaundererShare > 0 && c.LaundererShare <= 0.5):
		return bad("launderer share %v, want (0,0.5]", c.LaundererShare)
	case !(c.RecruitPool >= 0 && c.RecruitPool <= 1):
		return bad("recruit pool probability %v, want [0,1]", c.RecruitPool)
	}
	sum := 0.0
	for t, m := range c.Mix {
		if !(m >= 0) || math.IsInf(m, 0) {
			return bad("mix share of %s is %v", amlworld.Typology(t), m)
		}
		sum += m
	}
	if math.Abs(sum-1) > 1e-6 {
		return bad("mix shares sum to %v, want 1", sum)
	}
	return nil
}

func prefixOK(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
