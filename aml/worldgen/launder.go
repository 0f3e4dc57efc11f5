package worldgen

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"graphfed/aml/amlworld"
)

// attempt is one laundering attempt: its typology, the detail of its BEGIN
// line and its rows in time order.
type attempt struct {
	typ    amlworld.Typology
	detail string
	rows   []txn
}

// launder plans every laundering row of a world with total rows: the
// pattern attempts, whose row counts per typology follow cfg.Mix exactly
// except for the last attempt of each typology (which may overshoot by less
// than the typology's smallest attempt), and the unpatterned rows. Attempts
// are in order of their first row.
func (w *world) launder(total int64) ([]attempt, []txn) {
	cfg := &w.cfg
	l := &launderer{w: w, r: stream(cfg.Seed, 2)}
	all := int64(math.Round(float64(total) * cfg.IllicitRatio))
	unpat := int64(math.Round(float64(all) * cfg.UnpatternedShare))
	budget := largestRemainder(all-unpat, cfg.Mix[:])
	var out []attempt
	for t, b := range budget {
		for got := int64(0); got < b; {
			a := l.build(amlworld.Typology(t), int(b-got))
			got += int64(len(a.rows))
			out = append(out, a)
		}
	}
	for i := range out {
		l.place(&out[i])
	}
	slices.SortStableFunc(out, func(a, b attempt) int {
		return cmp.Compare(a.rows[0].t, b.rows[0].t)
	})
	var extra []txn
	if len(out) > 0 {
		for k := int64(0); k < unpat; k++ {
			extra = append(extra, l.integrate(&out[l.r.IntN(len(out))]))
		}
	}
	return out, extra
}

// launderer builds attempts from one random stream. Within an attempt the
// state says how hops are timed, sized and paid.
type launderer struct {
	w    *world
	r    *rand.Rand
	used []int32 // accounts of the current attempt

	gap        float64 // mean minutes between hops
	structured bool    // amounts just under the reporting threshold
	format     int     // the attempt's format, or -1 for one per hop
	base       float64 // US-dollar value entering the attempt
}

// start resets the per-attempt state.
func (l *launderer) start() {
	r := l.r
	l.used = l.used[:0]
	l.gap = []float64{10, 45, 180}[pick(r, []float64{0.4, 0.4, 0.2})]
	l.structured = r.Float64() < 0.3
	l.format = -1
	if r.Float64() < 0.6 {
		l.format = pick(r, fmtLaunder)
	}
	l.base = logNormal(r, 9000, 0.9)
}

// next draws an offset (seconds) after t: an exponential gap, in minutes.
func (l *launderer) next(t int64) int64 {
	return t + 60*int64(1+l.r.ExpFloat64()*l.gap)
}

// account draws an account for the attempt. The bank is ref's with
// probability 1-CrossBankHop and another bank otherwise (any bank when ref is
// -1); the account is mostly one of the bank's launderers, else any of its
// accounts (a mule). Accounts are not reused within an attempt.
func (l *launderer) account(ref int32) int32 {
	w, r := l.w, l.r
	var a int32
	// Most hops stay in the previous account's currency, as normal payments
	// do; the rest need an exchange.
	sameCur := ref >= 0 && r.Float64() < 0.9
	for tries := 0; tries < 64; tries++ {
		bank := w.bankTab.draw(r)
		if ref >= 0 {
			home := int(w.acctBank[ref])
			if r.Float64() < w.cfg.CrossBankHop {
				for bank == home {
					bank = w.bankTab.draw(r)
				}
			} else {
				bank = home
			}
		}
		fromPool := 0.7
		if ref >= 0 {
			fromPool = w.cfg.RecruitPool
		}
		if lb := w.launderersByBank[bank]; len(lb) > 0 && r.Float64() < fromPool {
			a = lb[r.IntN(len(lb))]
		} else {
			a = w.byBank[bank][r.IntN(len(w.byBank[bank]))] // never empty
		}
		if sameCur && w.acctCur[a] != w.acctCur[ref] && tries < 48 {
			continue
		}
		if !slices.Contains(l.used, a) {
			break
		}
	}
	l.used = append(l.used, a)
	return a
}

// hop is a laundering row from src to dst at offset t worth usd.
func (l *launderer) hop(t int64, src, dst int32, usd float64) txn {
	mix := fmtLaunder
	var one [amlworld.NumFormats]float64
	if l.format >= 0 {
		one[l.format] = 1
		mix = one[:]
	}
	x := l.w.pay(l.r, t, src, dst, usd, mix)
	x.label = 1
	return x
}

// amount is the US-dollar value of one hop carrying share of the attempt's
// money: just under the threshold when the attempt is structured.
func (l *launderer) amount(share float64) float64 {
	if l.structured {
		return reportThreshold * (0.80 + 0.199*l.r.Float64())
	}
	return l.base * share * (0.85 + 0.3*l.r.Float64())
}

// build makes one attempt of typology t with at most max(limit, minimum)
// rows. Times are offsets from 0 until place shifts them.
func (l *launderer) build(t amlworld.Typology, limit int) attempt {
	l.start()
	r := l.r
	a := attempt{typ: t}
	var x []txn
	switch t {
	case amlworld.FanOut, amlworld.FanIn:
		k := clamp(2+r.IntN(15), 2, limit)
		hub := l.account(-1)
		at := int64(0)
		for i := 0; i < k; i++ {
			other := l.account(hub)
			if t == amlworld.FanOut {
				x = append(x, l.hop(at, hub, other, l.amount(1/float64(k))))
			} else {
				x = append(x, l.hop(at, other, hub, l.amount(1/float64(k))))
			}
			at = l.next(at)
		}
		if t == amlworld.FanOut {
			a.detail = "Max " + strconv.Itoa(k) + "-degree Fan-Out"
		} else {
			a.detail = "Max " + strconv.Itoa(k) + "-degree Fan-In"
		}
	case amlworld.GatherScatter:
		kin, kout := 2+r.IntN(7), 2+r.IntN(7)
		if kin+kout > limit {
			kin = max(2, limit/2)
			kout = max(2, limit-kin)
		}
		hub := l.account(-1)
		at := int64(0)
		for i := 0; i < kin; i++ {
			x = append(x, l.hop(at, l.account(hub), hub, l.amount(1/float64(kin))))
			at = l.next(at)
		}
		for i := 0; i < kout; i++ {
			x = append(x, l.hop(at, hub, l.account(hub), l.amount(0.97/float64(kout))))
			at = l.next(at)
		}
	case amlworld.ScatterGather:
		k := 2 + r.IntN(7)
		if 2*k > limit {
			k = max(2, limit/2)
		}
		src := l.account(-1)
		sink := l.account(src)
		at := int64(0)
		for i := 0; i < k; i++ {
			mid := l.account(src)
			x = append(x, l.hop(at, src, mid, l.amount(1/float64(k))))
			x = append(x, l.hop(l.next(at), mid, sink, l.amount(0.97/float64(k))))
			at = l.next(at)
		}
	case amlworld.Cycle:
		n := clamp(3+r.IntN(8), 3, limit)
		ring := []int32{l.account(-1)}
		for len(ring) < n {
			ring = append(ring, l.account(ring[len(ring)-1]))
		}
		at := int64(0)
		for i := 0; i < n; i++ {
			x = append(x, l.hop(at, ring[i], ring[(i+1)%n], l.amount(math.Pow(0.98, float64(i)))))
			at = l.next(at)
		}
		a.detail = "Max " + strconv.Itoa(n) + " hops"
	case amlworld.RandomWalk:
		n := clamp(3+r.IntN(8), 3, limit)
		set := []int32{l.account(-1)}
		for len(set) < max(3, n/2+1) {
			set = append(set, l.account(set[len(set)-1]))
		}
		cur, at := set[0], int64(0)
		for i := 0; i < n-1; i++ {
			nxt := cur
			for nxt == cur || i == n-2 && nxt == set[0] {
				nxt = set[r.IntN(len(set))]
			}
			x = append(x, l.hop(at, cur, nxt, l.amount(math.Pow(0.98, float64(i)))))
			cur, at = nxt, l.next(at)
		}
		x = append(x, l.hop(at, cur, set[0], l.amount(math.Pow(0.98, float64(n-1)))))
		a.detail = "Max " + strconv.Itoa(n) + " hops"
	case amlworld.Bipartite:
		s, d := min(2+r.IntN(4), max(2, limit)), min(2+r.IntN(4), max(2, limit))
		src := l.layer(-1, s)
		dst := l.layer(src[0], d)
		x = l.connect(0, src, dst, limit, 1)
	default: // amlworld.Stack
		na, nb, nc := 2+r.IntN(3), 2+r.IntN(3), 2+r.IntN(3)
		if max(na, nb)+max(nb, nc) > limit {
			na, nb, nc = 2, 2, 2
		}
		la := l.layer(-1, na)
		lb := l.layer(la[0], nb)
		lc := l.layer(lb[0], nc)
		first := l.connect(0, la, lb, max(2, limit/2), 1)
		last := first[0].t
		for _, y := range first {
			last = max(last, y.t)
		}
		x = append(first, l.connect(l.next(last), lb, lc, max(2, limit-len(first)), 0.97)...)
	}
	slices.SortStableFunc(x, func(p, q txn) int { return cmp.Compare(p.t, q.t) })
	a.rows = x
	return a
}

func clamp(v, lo, hi int) int { return max(lo, min(v, max(lo, hi))) }

// layer draws n accounts, the first near ref, each next near the previous.
func (l *launderer) layer(ref int32, n int) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = l.account(ref)
		ref = out[i]
	}
	return out
}

// connect links every account of from to some of to and back (each account
// of either side on at least one edge), then adds random further edges, up
// to limit edges in all (never fewer than the covering ones), starting at
// offset t0.
func (l *launderer) connect(t0 int64, from, to []int32, limit int, share float64) []txn {
	r := l.r
	cover := max(len(from), len(to))
	want := clamp(cover+r.IntN(len(from)*len(to)-cover+1), cover, limit)
	type pair struct{ i, j int }
	var edges []pair
	has := func(p pair) bool { return slices.Contains(edges, p) }
	for k := 0; k < cover; k++ {
		edges = append(edges, pair{k % len(from), k % len(to)})
	}
	for len(edges) < want {
		if p := (pair{r.IntN(len(from)), r.IntN(len(to))}); !has(p) {
			edges = append(edges, p)
		}
	}
	out := make([]txn, 0, len(edges))
	at := t0
	for _, p := range edges {
		out = append(out, l.hop(at, from[p.i], to[p.j], l.amount(share/float64(len(edges)))))
		at = l.next(at)
	}
	return out
}

// place shifts an attempt's offsets to a start time drawn so that the whole
// attempt lies inside the world's days (compressing it if it is longer).
func (l *launderer) place(a *attempt) {
	cfg := &l.w.cfg
	horizon := int64(cfg.Days)*86400 - 60
	span := int64(0)
	for _, x := range a.rows {
		span = max(span, x.t)
	}
	if span > horizon/2 {
		f := float64(horizon/2) / float64(span)
		for i := range a.rows {
			a.rows[i].t = int64(float64(a.rows[i].t)*f) / 60 * 60
		}
		span = horizon / 2
	}
	start := cfg.Start + 60*l.r.Int64N((horizon-span)/60+1)
	// Bias starts towards the launderers' hours.
	day := (start - cfg.Start) / 86400
	if cand := cfg.Start + day*86400 + int64(pick(l.r, hoursLaunder))*3600 + int64(l.r.IntN(60))*60; cand+span <= cfg.Start+horizon {
		start = cand
	}
	for i := range a.rows {
		a.rows[i].t += start
	}
}

// integrate is one unpatterned laundering row: the receiver of the
// attempt's last row moves part of the money on to a merchant (or, a third
// of the time, to any account at another bank) some hours later.
func (l *launderer) integrate(a *attempt) txn {
	w, r := l.w, l.r
	last := a.rows[len(a.rows)-1]
	from := last.dst
	var to int32
	if r.Float64() < 0.33 {
		l.used = l.used[:0]
		l.used = append(l.used, from)
		to = l.account(from)
	} else {
		to = w.merchant(r, w.acctCur[from])
	}
	for to == from {
		to = w.anyone.draw(r)
	}
	end := w.cfg.Start + int64(w.cfg.Days)*86400 - 60
	t := min(last.t+60*int64(1+r.ExpFloat64()*360), end)
	usd := last.paid * usdPerUnit[last.pc] * (0.2 + 0.4*r.Float64())
	l.format = -1
	return l.hop(t, from, to, usd)
}
