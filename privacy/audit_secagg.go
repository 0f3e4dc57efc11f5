package privacy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The audit's account of secure aggregation, from the banks' secagg
// records alone (secagg_record.go). A bank's model or grad release of
// round q went into a secure sum when the bank recorded secure aggregation
// of round q, or of a later round whose input folds q in (Stale): the
// masked vector carries the released parameters and estimator together,
// and a masked update carries neither in the clear (bus). A round of a
// channel is aggregated securely when every bank's release of it went
// into a secure sum whose records agree: banks whose records of one round
// name different configurations, cohorts or thresholds, or neighbours that
// do not name them back, were shown different rounds (a split view), and
// the round is not counted. Secure aggregation hides one bank's update in
// a sum; it adds no noise, so the ε of every channel is what its releases
// spent, as without it.

// SecAggBank is one bank's secure-aggregation records.
type SecAggBank struct {
	Job    string   `json:"job"`
	Client string   `json:"client"`
	Rounds []uint64 `json:"rounds"`           // rounds it recorded, ascending
	Folded []uint64 `json:"folded,omitempty"` // earlier rounds whose update a recorded input folds in
	// Threshold is the smallest t and Cohort the smallest cohort among
	// its records.
	Threshold int `json:"t"`
	Cohort    int `json:"cohort"`
}

// SecureChannel says in how many of a channel's rounds the aggregator saw
// the banks' releases only in a secure sum.
type SecureChannel struct {
	Channel Channel `json:"channel"`
	Rounds  int     `json:"rounds"`        // M: rounds (of a job) with a release on the channel
	Secure  int     `json:"secure_rounds"` // R: of those, aggregated securely
	// Clear are the other rounds, ascending (by job, then round, when
	// the audit spans several jobs).
	Clear []uint64 `json:"clear_rounds,omitempty"`
	// Threshold is the smallest t, and CohortMin and CohortMax the
	// smallest and largest cohort, of the secure rounds (0 without any).
	Threshold int `json:"t"`
	CohortMin int `json:"cohort_min"`
	CohortMax int `json:"cohort_max"`
}

// SecAggConflict is a round whose banks' records disagree.
type SecAggConflict struct {
	Job    string `json:"job"`
	Round  uint64 `json:"round"`
	Detail string `json:"detail"`
}

// SecureAggregation is the audit's account of secure aggregation; zero
// when the ledger holds no secagg record.
type SecureAggregation struct {
	Records   int              `json:"records"`
	Banks     []SecAggBank     `json:"banks,omitempty"`
	Channels  []SecureChannel  `json:"channels,omitempty"` // model, grad: those released
	Conflicts []SecAggConflict `json:"conflicts,omitempty"`
}

// Channel is ch's account (false when ch has no release or no record was
// made).
func (s SecureAggregation) Channel(ch Channel) (SecureChannel, bool) {
	for _, c := range s.Channels {
		if c.Channel == ch {
			return c, true
		}
	}
	return SecureChannel{}, false
}

// Words is the account in plain words, one line per channel.
func (s SecureAggregation) Words() []string {
	if s.Records == 0 {
		return nil
	}
	out := make([]string, 0, len(s.Channels))
	for _, c := range s.Channels {
		out = append(out, c.Words())
	}
	return out
}

// Words is the channel's account as a sentence a privacy officer can act
// on: "model channel: aggregated securely in 20 of 20 rounds (t = 3 of 5
// banks): …".
func (c SecureChannel) Words() string {
	ch := string(c.Channel)
	if c.Secure == 0 {
		return fmt.Sprintf("%s channel: aggregated securely in none of %d rounds: the aggregator saw each bank's update as released (ε of the %s channel as audited)",
			ch, c.Rounds, ch)
	}
	banks := fmt.Sprintf("t = %d of %d banks", c.Threshold, c.CohortMin)
	if c.CohortMax != c.CohortMin {
		banks = fmt.Sprintf("t ≥ %d, cohorts of %d–%d banks", c.Threshold, c.CohortMin, c.CohortMax)
	}
	s := fmt.Sprintf("%s channel: aggregated securely in %d of %d rounds (%s): the aggregator saw the sum of at least %d banks' updates, never one bank's, "+
		"unless %d banks collude with it; this adds no DP guarantee to the sum (ε of the %s channel unchanged)",
		ch, c.Secure, c.Rounds, banks, c.Threshold, c.Threshold, ch)
	switch n := c.Rounds - c.Secure; {
	case n == 1:
		s += fmt.Sprintf("; in the other round (%s) it saw each bank's update as released", FormatRounds(c.Clear))
	case n > 1:
		s += fmt.Sprintf("; in the other %d rounds (%s) it saw each bank's update as released", n, FormatRounds(c.Clear))
	}
	return s
}

// FormatRounds writes ascending rounds as ranges: "1–5, 7, 9–12".
func FormatRounds(rounds []uint64) string {
	var b strings.Builder
	for i := 0; i < len(rounds); {
		j := i
		for j+1 < len(rounds) && rounds[j+1] == rounds[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j > i {
			fmt.Fprintf(&b, "%d–%d", rounds[i], rounds[j])
		} else {
			fmt.Fprintf(&b, "%d", rounds[i])
		}
		i = j + 1
	}
	return b.String()
}

// jobRound names one round of one job.
type jobRound struct {
	job   string
	round uint64
}

// secureAccount builds the account from entries that passed the job
// filter, in ledger order.
func secureAccount(entries []Entry) SecureAggregation {
	var out SecureAggregation
	// The bank's records by round, and the records of each round.
	type bankKey = ClientKey
	own := map[bankKey]map[uint64]*SecAggRecord{}
	folds := map[bankKey]map[uint64]*SecAggRecord{}
	byRound := map[jobRound][]Entry{}
	for _, e := range entries {
		if e.Channel != ChannelSecAgg {
			continue
		}
		out.Records++
		k := bankKey{e.Job, e.Client}
		if own[k] == nil {
			own[k], folds[k] = map[uint64]*SecAggRecord{}, map[uint64]*SecAggRecord{}
		}
		r := e.SecAgg
		if _, dup := own[k][e.Round]; dup {
			out.Conflicts = append(out.Conflicts, SecAggConflict{e.Job, e.Round,
				fmt.Sprintf("bank %s recorded secure aggregation of round %d twice (seq %d again)", e.Client, e.Round, e.Seq)})
			continue
		}
		own[k][e.Round] = r
		for _, q := range r.Stale {
			if _, ok := folds[k][q]; !ok {
				folds[k][q] = r
			}
		}
		byRound[jobRound{e.Job, e.Round}] = append(byRound[jobRound{e.Job, e.Round}], e)
	}
	if out.Records == 0 {
		return out
	}
	split := map[jobRound]bool{}
	for _, c := range out.Conflicts {
		split[jobRound{c.Job, c.Round}] = true
	}
	for jr, es := range byRound {
		if d := disagreement(es); d != "" {
			split[jr] = true
			out.Conflicts = append(out.Conflicts, SecAggConflict{jr.job, jr.round, d})
		}
	}
	slices.SortFunc(out.Conflicts, func(a, b SecAggConflict) int {
		return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Round, b.Round), cmp.Compare(a.Detail, b.Detail))
	})

	for k, rounds := range own {
		b := SecAggBank{Job: k.Job, Client: k.Client}
		for q, r := range rounds {
			b.Rounds = append(b.Rounds, q)
			if b.Threshold == 0 || r.Threshold < b.Threshold {
				b.Threshold = r.Threshold
			}
			if b.Cohort == 0 || len(r.Cohort) < b.Cohort {
				b.Cohort = len(r.Cohort)
			}
		}
		for q := range folds[k] {
			b.Folded = append(b.Folded, q)
		}
		slices.Sort(b.Rounds)
		slices.Sort(b.Folded)
		out.Banks = append(out.Banks, b)
	}
	slices.SortFunc(out.Banks, func(a, b SecAggBank) int {
		return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.Client, b.Client))
	})

	// The record a release of round q went in with, and the round of that
	// record (q, or the later round that folded q in).
	covering := func(e Entry) (*SecAggRecord, uint64) {
		k := bankKey{e.Job, e.Client}
		if r := own[k][e.Round]; r != nil {
			return r, e.Round
		}
		r := folds[k][e.Round]
		if r == nil {
			return nil, 0
		}
		for q, x := range own[k] {
			if x == r {
				return r, q
			}
		}
		return nil, 0
	}
	for _, ch := range []Channel{ChannelModel, ChannelGrad} {
		c := SecureChannel{Channel: ch}
		secure := map[jobRound]bool{}
		var order []jobRound
		for _, e := range entries {
			if e.Channel != ch {
				continue
			}
			jr := jobRound{e.Job, e.Round}
			ok, seen := secure[jr]
			if !seen {
				order = append(order, jr)
				ok = true
			}
			r, in := covering(e)
			secure[jr] = ok && r != nil && !split[jobRound{e.Job, in}]
		}
		if len(order) == 0 {
			continue
		}
		slices.SortFunc(order, func(a, b jobRound) int { return cmp.Or(cmp.Compare(a.job, b.job), cmp.Compare(a.round, b.round)) })
		c.Rounds = len(order)
		for _, jr := range order {
			if !secure[jr] {
				c.Clear = append(c.Clear, jr.round)
				continue
			}
			c.Secure++
		}
		// The figures of the secure rounds: over every record a release
		// of them went in with.
		for _, e := range entries {
			if e.Channel != ch || !secure[jobRound{e.Job, e.Round}] {
				continue
			}
			r, _ := covering(e)
			n := len(r.Cohort)
			if c.Threshold == 0 || r.Threshold < c.Threshold {
				c.Threshold = r.Threshold
			}
			if c.CohortMin == 0 || n < c.CohortMin {
				c.CohortMin = n
			}
			c.CohortMax = max(c.CohortMax, n)
		}
		out.Channels = append(out.Channels, c)
	}
	return out
}

// disagreement says how the records of one round (of distinct banks)
// disagree: "" when they name one configuration, cohort, threshold and
// encoding, and every neighbour that recorded the round names its
// neighbours back.
func disagreement(es []Entry) string {
	first := es[0].SecAgg
	for _, e := range es[1:] {
		r := e.SecAgg
		if r.Config != first.Config || r.Threshold != first.Threshold || r.Bits != first.Bits || r.Scale != first.Scale ||
			r.Degree != first.Degree || !slices.Equal(r.Cohort, first.Cohort) {
			return fmt.Sprintf("banks %s and %s recorded different secure aggregations of round %d (config %s and %s, t %d and %d, %d and %d parties): a split view",
				es[0].Client, e.Client, e.Round, short(first.Config), short(r.Config), first.Threshold, r.Threshold, len(first.Cohort), len(r.Cohort))
		}
	}
	nb := make(map[string][]string, len(es))
	for _, e := range es {
		nb[e.Client] = e.SecAgg.Neighbours
	}
	for _, e := range es {
		for _, p := range e.SecAgg.Neighbours {
			back, recorded := nb[p]
			if _, ok := slices.BinarySearch(back, e.Client); recorded && !ok {
				return fmt.Sprintf("bank %s names %s its neighbour in round %d, and %s does not name it back", e.Client, p, e.Round, p)
			}
		}
	}
	return ""
}
