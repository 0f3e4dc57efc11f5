package job

import (
	"time"

	"graphfed/privacy"
)

// LedgerRate is how fast the ledger took the banks' appends, from the
// times the storage gave each entry (a JetStream message's timestamp).
// The agents append in bursts, one per round when they release, so the
// rate is measured over each round's burst, from its first stored entry
// to its last, not over the job's wall time, most of which is training.
type LedgerRate struct {
	Appends int     `json:"appends"` // bank entries in the measured bursts
	Seconds float64 `json:"seconds"` // the bursts' durations, summed
	// PerSecond is Appends / Seconds; SlowestRound the lowest rate of one
	// round's burst.
	PerSecond    float64 `json:"per_second"`
	SlowestRound float64 `json:"slowest_round_per_second"`
}

// ledgerRate measures rd's bank entries; zero when the storage gave no
// times (a file or in-memory ledger) or no round had two entries.
func ledgerRate(rd privacy.Reading) LedgerRate {
	type burst struct {
		n           int
		first, last time.Time
	}
	rounds := map[uint64]*burst{}
	for i, e := range rd.Entries {
		if e.Channel.IsRecord() || i >= len(rd.Stored) || rd.Stored[i].IsZero() {
			continue
		}
		at := rd.Stored[i]
		b := rounds[e.Round]
		if b == nil {
			b = &burst{first: at, last: at}
			rounds[e.Round] = b
		}
		b.n++
		if at.Before(b.first) {
			b.first = at
		}
		if at.After(b.last) {
			b.last = at
		}
	}
	var r LedgerRate
	for _, b := range rounds {
		d := b.last.Sub(b.first).Seconds()
		if b.n < 2 || d <= 0 {
			continue
		}
		r.Appends += b.n
		r.Seconds += d
		if rate := float64(b.n) / d; r.SlowestRound == 0 || rate < r.SlowestRound {
			r.SlowestRound = rate
		}
	}
	if r.Seconds > 0 {
		r.PerSecond = float64(r.Appends) / r.Seconds
	}
	return r
}
