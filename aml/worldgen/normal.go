package worldgen

import (
	"math/rand/v2"
	"time"

	"graphfed/aml/amlworld"
)

// txn is one generated row; src and dst index the world's accounts.
type txn struct {
	t          int64 // Unix seconds
	src, dst   int32
	paid, recv float64
	pc, rc     amlworld.Currency
	format     amlworld.Format
	label      uint8
}

// Shares of the sampled (unscheduled, non-self) normal rows.
var normalMix = []float64{
	0.56, // purchase: individual -> merchant
	0.14, // person to person
	0.22, // business to business
	0.08, // between an entity's own accounts
}

// pay builds a row paying usd (US-dollar value) from src to dst: paid in
// src's currency, received in dst's, format from mix unless a side holds
// Bitcoin (then the format is Bitcoin).
func (w *world) pay(r *rand.Rand, t int64, src, dst int32, usd float64, mix []float64) txn {
	pc, rc := w.acctCur[src], w.acctCur[dst]
	paid := convert(usd, pc)
	x := txn{t: t, src: src, dst: dst, paid: paid, recv: exchange(paid, pc, rc), pc: pc, rc: rc}
	if pc == amlworld.Bitcoin || rc == amlworld.Bitcoin {
		x.format = amlworld.FormatBitcoin
	} else {
		x.format = amlworld.Format(pick(r, mix))
	}
	return x
}

// at draws a time on the day starting at day0 from an hour profile.
func at(r *rand.Rand, day0 int64, hours []float64) int64 {
	return day0 + int64(pick(r, hours))*3600 + int64(r.IntN(60))*60
}

// normalDay appends day d's n normal rows to out, self self-transfers
// among them: first the scheduled salaries and bills, then self-transfers,
// then sampled purchases, person-to-person, business and own-account
// transfers. It uses its own random stream, so days are independent.
func (w *world) normalDay(d int, n, self int64, out []txn) []txn {
	r := stream(w.cfg.Seed, 1000+uint64(d))
	day0 := w.cfg.Start + int64(d)*86400
	date := time.Unix(day0, 0).UTC()
	dom := uint8(date.Day())
	friday := date.Weekday() == time.Friday
	week := uint8((day0 / 86400 / 7) % 2)
	start := len(out)
	// Scheduled payments take at most 80% of the day's budget; a world with
	// few rows per account thins them evenly rather than overshoot.
	keep := 1.0
	if sched, room := w.scheduled(dom, friday, week), 0.8*float64(n-self); float64(sched) > room {
		keep = room / float64(sched)
	}
	for e := range w.employer {
		if boss := w.employer[e]; boss >= 0 && w.payday(w.acctEnt[boss], dom, friday, week) && (keep == 1 || r.Float64() < keep) {
			usd := float64(w.salary[e]) * w.payShare(w.acctEnt[boss])
			out = append(out, w.pay(r, at(r, day0, hoursBatch), boss, w.entStart[e], usd*(0.97+0.06*r.Float64()), fmtSalary))
		}
		for _, b := range w.bills[e] {
			if b.dom == dom && (keep == 1 || r.Float64() < keep) {
				out = append(out, w.pay(r, at(r, day0, hoursDay), w.entStart[e], b.payee, float64(b.usd), fmtBill))
			}
		}
	}
	for k := int64(0); k < self; k++ {
		a := w.anyone.draw(r)
		out = append(out, w.pay(r, at(r, day0, hoursDay), a, a, logNormal(r, 400, 2.0), fmtSelf))
	}
	for int64(len(out)-start) < n {
		t := at(r, day0, hoursDay)
		switch pick(r, normalMix) {
		case 0:
			a := w.people.draw(r)
			usd := logNormal(r, 35, 1.5)
			if r.Float64() < 0.02 { // micro-payments: fees, app stores, tips
				usd = logNormal(r, 0.8, 1.2)
			}
			out = append(out, w.pay(r, t, a, w.merchant(r, w.crossCurrency(r, a)), usd, fmtPurchase))
		case 1:
			a := w.people.draw(r)
			b := w.neighbor(r, w.crossCurrency(r, a))
			if b == a {
				continue
			}
			out = append(out, w.pay(r, t, a, b, logNormal(r, 150, 1.2), fmtP2P))
		case 2:
			a := w.firms.draw(r)
			b := w.merchant(r, w.crossCurrency(r, a))
			if b == a {
				continue
			}
			out = append(out, w.pay(r, at(r, day0, hoursOffice), a, b, logNormal(r, 5000, 1.8), fmtB2B))
		default:
			if len(w.multi) == 0 {
				continue
			}
			e := w.multi[r.IntN(len(w.multi))]
			lo, hi := w.entStart[e], w.entStart[e+1]
			a := lo + int32(r.IntN(int(hi-lo)))
			b := lo + int32(r.IntN(int(hi-lo-1)))
			if b >= a {
				b++
			}
			out = append(out, w.pay(r, t, a, b, logNormal(r, 1200, 1.3), fmtOwn))
		}
	}
	return out[:min(len(out), start+int(n))]
}

// scheduled counts the salaries and bills due on a day.
func (w *world) scheduled(dom uint8, friday bool, week uint8) int {
	c := 0
	for e, boss := range w.employer {
		if boss >= 0 && w.payday(w.acctEnt[boss], dom, friday, week) {
			c++
		}
		for _, b := range w.bills[e] {
			if b.dom == dom {
				c++
			}
		}
	}
	return c
}

// crossCurrency is the currency of the counterparty of a payment from a: a's
// own, except for 2% of international payments in any currency.
func (w *world) crossCurrency(r *rand.Rand, a int32) amlworld.Currency {
	if r.Float64() < 0.02 {
		return amlworld.Currency(pick(r, currencyShare[:]))
	}
	return w.acctCur[a]
}

// payday reports whether company entity e pays salaries on a day with day
// of month dom.
func (w *world) payday(e int32, dom uint8, friday bool, week uint8) bool {
	switch w.cadence[e] {
	case payWeekly:
		return friday
	case payBiweekly:
		return friday && week == w.phase[e]%2
	case paySemimonthly:
		return dom == 1 || dom == 15
	}
	return dom == w.phase[e]
}

// payShare is the share of a monthly salary paid on each payday.
func (w *world) payShare(e int32) float64 {
	switch w.cadence[e] {
	case payWeekly:
		return 12.0 / 52
	case payBiweekly:
		return 12.0 / 26
	case paySemimonthly:
		return 0.5
	}
	return 1
}
