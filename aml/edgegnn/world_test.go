package edgegnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"graphfed/aml/amlworld"
)

// A small synthetic AML world for the edge tests, written directly as an
// amlworld.Graph. Normal accounts pay each other with popularity-skewed partners, amounts, currencies, formats and
// hours spread alike over the days, 10% self-transfers. Laundering accounts
// (a pool that also transacts normally, rarely) run planted fan-out,
// fan-in and cycle attempts, each within a day or two; their rows are
// labelled 1. Amounts, formats and currencies of laundering rows follow
// the normal distributions, so only the structure gives them away.

type worldConfig struct {
	Accounts, Banks, Days int
	Normal                int     // normal rows
	Attempts              int     // laundering attempts
	LaundererShare        float64 // share of accounts in the launderer pool
	Seed                  uint64
}

func smallWorld(seed uint64) worldConfig {
	return worldConfig{Accounts: 1500, Banks: 4, Days: 10, Normal: 12000, Attempts: 90, LaundererShare: 0.1, Seed: seed}
}

type worldTx struct {
	t          int64
	src, dst   int
	amount     float64
	cur        amlworld.Currency
	form       amlworld.Format
	laundering bool
}

// genWorld builds the world; rows are in time order, as in AMLworld files.
func genWorld(c worldConfig) *amlworld.Graph {
	rng := rand.New(rand.NewPCG(c.Seed, 77))
	const start = 1661990400 // 2022-09-01 00:00 UTC
	span := int64(c.Days) * 86400
	pool := int(float64(c.Accounts) * c.LaundererShare)
	// Account a < pool is a launderer; activity weights are Zipf-like for
	// normal accounts and low for launderers.
	weight := make([]float64, c.Accounts)
	for a := range weight {
		weight[a] = 1 / math.Pow(float64(a-pool+1), 0.8)
		if a < pool {
			weight[a] = 0.005
		}
	}
	cum := make([]float64, len(weight))
	s := 0.0
	for a, w := range weight {
		s += w
		cum[a] = s
	}
	pickAccount := func() int {
		i, _ := slices.BinarySearch(cum, rng.Float64()*s)
		return min(i, c.Accounts-1)
	}
	homeCur := func(a int) amlworld.Currency { return amlworld.Currency(a % 4) }
	amount := func() float64 { return math.Round(math.Exp(rng.NormFloat64()*1.5+6)*100) / 100 }
	format := func() amlworld.Format { return amlworld.Format(rng.IntN(5)) }
	var txs []worldTx
	for range c.Normal {
		src := pickAccount()
		dst := pickAccount()
		if rng.Float64() < 0.1 {
			dst = src
		}
		txs = append(txs, worldTx{t: start + rng.Int64N(span), src: src, dst: dst, amount: amount(), cur: homeCur(src), form: format()})
	}
	mule := func() int { return rng.IntN(pool) }
	for range c.Attempts {
		t0 := start + rng.Int64N(span-86400)
		at := func() int64 { return t0 + rng.Int64N(86400) }
		k := 4 + rng.IntN(6)
		launder := func(src, dst int, t int64) {
			txs = append(txs, worldTx{t: t, src: src, dst: dst, amount: amount(), cur: homeCur(src), form: format(), laundering: true})
		}
		switch rng.IntN(3) {
		case 0: // fan-out
			hub := mule()
			for range k {
				launder(hub, mule(), at())
			}
		case 1: // fan-in
			hub := mule()
			for range k {
				launder(mule(), hub, at())
			}
		default: // cycle
			ring := make([]int, k)
			for i := range ring {
				ring[i] = mule()
			}
			t := t0
			for i := range ring {
				t += rng.Int64N(4 * 3600)
				launder(ring[i], ring[(i+1)%k], t)
			}
		}
	}
	slices.SortStableFunc(txs, func(a, b worldTx) int { return int(a.t - b.t) })
	g := amlworld.NewGraph(fmt.Sprintf("world-%d", c.Seed))
	for _, tx := range txs {
		g.AddRow(&amlworld.TxRow{
			Time:        tx.t / 60 * 60,
			FromBank:    fmt.Sprintf("%03d", tx.src%c.Banks),
			FromAccount: fmt.Sprintf("%09X", 0x100000+tx.src),
			ToBank:      fmt.Sprintf("%03d", tx.dst%c.Banks),
			ToAccount:   fmt.Sprintf("%09X", 0x100000+tx.dst),
			AmountPaid:  tx.amount, PayCurrency: tx.cur,
			AmountReceived: tx.amount, RecvCurrency: tx.cur,
			Format:     tx.form,
			Laundering: tx.laundering,
		})
	}
	return g
}
