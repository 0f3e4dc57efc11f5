package dsim

import (
	"fmt"
	"math"
	"slices"
	"time"

	"graphfed/aggregator"
	"graphfed/privacy"
)

// The invariants the simulator checks after every step, by name.
const (
	// InvCountedTwice: an update entered two aggregates, or one twice.
	InvCountedTwice = "update-counted-twice"
	// InvUpdateLost: an update the aggregator accepted is missing from the
	// aggregate of the round it was accepted into.
	InvUpdateLost = "update-lost"
	// InvNotAccepted: an aggregate counts an update the aggregator never
	// accepted (or accepted for a round that was not open).
	InvNotAccepted = "update-not-accepted"
	// InvReleaseLedger: published parameters whose release has no
	// matching, durable ledger entry of its own.
	InvReleaseLedger = "release-without-ledger"
	// InvLedgerIncomplete: the finished job's whole ledger shows loss to
	// an audit (a head a record names is not in its bank's chain, an
	// anchor names no record of the aggregator), or has no done record.
	InvLedgerIncomplete = "ledger-incomplete"
	// InvBudget: a client's (or node's) spending, recomputed from its
	// ledger alone, exceeds its budget.
	InvBudget = "budget-exceeded"
	// InvRoundOpen: a round stayed open although its quorum (or FedBuff
	// buffer) was in, or past its deadline while the aggregator was up.
	InvRoundOpen = "round-not-closed"
	// InvNoProgress: the job did not finish within the run's bounds.
	InvNoProgress = "no-progress"
	// InvNondeterministic: two runs of one seed differ.
	InvNondeterministic = "nondeterministic"
	// InvNotRejected: a message that must be refused (garbage, wrong
	// shape, wrong round, wrong sender) was accepted, or refused for
	// another reason than its own, or not counted.
	InvNotRejected = "hostile-not-rejected"
	// InvResultChanged: hostile traffic changed the job's result.
	InvResultChanged = "result-changed"
	// InvHonestRefused: a receiver's validator refused a message an
	// honest party sealed: sender and receiver disagree about the wire.
	InvHonestRefused = "honest-refused"
	// InvReleasedTwice: a client released on one channel for one round in
	// two lives (the budget charged twice for one round), or twice in one
	// life on a channel that releases once per round, or its FedGSP
	// descriptors twice in all.
	InvReleasedTwice = "released-twice"
	// InvNotNeighbour: boundary embeddings went to (or came from) a client
	// that is no neighbour.
	InvNotNeighbour = "embedding-not-to-neighbour"
	// InvMisrouted: a personalized model went to another client than its
	// own, or a personalizing job published a global model.
	InvMisrouted = "model-misrouted"
	// InvClosedEmpty: with adaptive deadlines, a round closed with nothing
	// in while clients were live, before its cap, and although an update
	// had come since the last round that closed empty (the aggregator must
	// extend such a round rather than waste it).
	InvClosedEmpty = "round-closed-empty"
	// InvRestoreDiffers: the aggregator restored from its checkpoint is
	// not the machine that wrote it: its own snapshot encodes otherwise
	// (a strategy's state, such as a server optimizer's moments, lost or
	// changed on the way).
	InvRestoreDiffers = "restore-differs"
)

// Violation is a broken invariant: its name, what broke it, and where.
type Violation struct {
	Invariant string
	Detail    string
	Seed      uint64
	Step      int
	At        time.Duration // simulated time since the start
	// TraceFile is the readable trace of the failing run, when written.
	TraceFile string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("dsim seed %d, step %d at +%v: %s: %s", v.Seed, v.Step, v.At, v.Invariant, v.Detail)
}

func violation(inv, format string, args ...any) *Violation {
	return &Violation{Invariant: inv, Detail: fmt.Sprintf(format, args...)}
}

type updKey struct {
	client string
	round  uint64
}

type accepted struct {
	key    updKey
	weight float64 // the weight the aggregate must give it
}

// checker holds the ground truth the invariants are checked against. It
// learns only from what parties did (events in, actions out, ledger
// entries), not from their internals, except the aggregator's persisted
// snapshot, which it cross-checks.
type checker struct {
	cfg      Config
	counters *Counters

	round    uint64 // the aggregator's round and whether it is open
	open     bool
	deadline time.Time
	// starved: with adaptive deadlines, a round closed empty and no valid
	// update has reached the aggregator since.
	starved bool
	cur     map[string]accepted // accepted for the open round, by client
	stale   []accepted          // accepted late, to be folded into the open round
	counted map[updKey]int      // times each update entered an aggregate

	acct       *privacy.Accountant    // every agent's ledger, replayed
	seen       map[string]int         // ledger entries replayed, per agent
	released   map[relKey]bool        // releases already published (emb: per recipient)
	lives      map[chanKey]uint64     // the life that released on each (client, channel, round)
	desc       map[string]descRelease // FedGSP: each client's descriptor release
	neighbours map[string]map[string]int
	// ledgerIDs maps an agent's wire node ids to the keyed ids its gate
	// writes in the ledger (privacy.Gate.LedgerNodeIDs); absent: the
	// same ids.
	ledgerIDs map[string]func([]int64) []int64
	// sec is the ground truth of secure rounds (check_secure.go), nil
	// when the job aggregates in the clear.
	sec *secChecker
}

type relKey struct {
	client, to string
	seq        uint64
}

type descRelease struct{ round, life uint64 }

type chanKey struct {
	client  string
	channel privacy.Channel
	round   uint64
}

func newChecker(cfg Config, counters *Counters, neighbours map[string]map[string]int) *checker {
	// The agents' gates refuse a bad delta first; should the checker's own
	// accountant fail anyway, budget() reports it as a violation rather
	// than skipping the check.
	acct, _ := privacy.NewAccountant(privacy.RDP, cfg.Delta, privacy.Budget{})
	c := &checker{cfg: cfg, counters: counters, cur: map[string]accepted{}, counted: map[updKey]int{},
		acct: acct, seen: map[string]int{}, released: map[relKey]bool{}, lives: map[chanKey]uint64{}, desc: map[string]descRelease{},
		neighbours: neighbours}
	if cfg.SecAgg {
		c.sec = newSecChecker()
	}
	return c
}

// aggStep checks one aggregator step: the event, its actions and the
// snapshot persisted after it.
func (c *checker) aggStep(ev aggregator.Event, acts []aggregator.Action, post aggregator.Snapshot, now time.Time) *Violation {
	if u, ok := ev.(aggregator.UpdateIn); ok {
		if v := c.accept(u, acts); v != nil {
			return v
		}
		c.starved = c.starved && !validUpdate(u, acts)
	}
	for _, a := range acts {
		if j, ok := a.(aggregator.ReplyJoin); ok && j.Accepted {
			c.starved = false
		}
	}
	var closed *aggregator.RoundClosed
	for _, a := range acts {
		switch x := a.(type) {
		case aggregator.RoundClosed:
			if v := c.closeRound(x, acts); v != nil {
				return v
			}
			closed = &x
		case aggregator.PublishModel:
			if v := c.personal(ev, x, closed); v != nil {
				return v
			}
		case aggregator.OpenRound:
			if c.sec != nil {
				if v := c.secOpen(x); v != nil {
					return v
				}
			}
		}
	}
	if c.sec != nil {
		c.secAggStep(ev, acts, now)
	}
	c.round, c.open, c.deadline = post.Round, post.Open, post.Deadline
	if !c.open {
		return nil
	}
	if v := c.crossCheck(post); v != nil {
		return v
	}
	return c.quorum(post, now)
}

// accept records an update the aggregator did not drop.
func (c *checker) accept(u aggregator.UpdateIn, acts []aggregator.Action) *Violation {
	for _, a := range acts {
		if d, ok := a.(aggregator.Dropped); ok && d.Client == u.Client && d.Round == u.Round {
			return nil
		}
		if r, ok := a.(aggregator.Rejected); ok && r.Client == u.Client && r.Round == u.Round {
			return nil // against the contract (or in the clear in a secure job)
		}
	}
	w := u.Weight
	if u.Withheld {
		w = 0
	}
	k := updKey{u.Client, u.Round}
	switch {
	case c.open && u.Round == c.round:
		if _, dup := c.cur[u.Client]; dup {
			return violation(InvCountedTwice, "accepted a second update of %s for open round %d", u.Client, u.Round)
		}
		c.cur[u.Client] = accepted{k, w}
		c.counters.Accepted++
	case u.Round < c.round && c.open:
		c.stale = append(c.stale, accepted{k, w * c.cfg.Staleness.Weight(c.round-u.Round)})
		c.counters.StaleFolded++
	default:
		return violation(InvNotAccepted, "accepted %s's update for round %d while round %d was open=%v", u.Client, u.Round, c.round, c.open)
	}
	return nil
}

// closeRound checks a close decision (of a step whose actions are acts)
// against what was accepted.
func (c *checker) closeRound(rc aggregator.RoundClosed, acts []aggregator.Action) *Violation {
	if !c.open || rc.Round != c.round {
		return violation(InvNotAccepted, "closed round %d while round %d was open=%v", rc.Round, c.round, c.open)
	}
	if c.sec != nil {
		// Who counts is the sum's survivors, whether or not their update
		// reached the aggregator, and what they weigh is in the sum.
		if v := c.secureClose(rc, acts); v != nil {
			return v
		}
		for _, id := range rc.In {
			k := updKey{id, rc.Round}
			if c.counted[k]++; c.counted[k] > 1 {
				return violation(InvCountedTwice, "%s's input entered round %d's sum twice", id, rc.Round)
			}
		}
		// The keys stage is extended while no advertisement is in (the
		// machine's "empty"); a round that had some but closed without a
		// sum counts as empty for the next, as in the clear.
		if c.sec.ads == 0 {
			if v := c.emptyClose(rc); v != nil {
				return v
			}
		} else if c.cfg.DeadlineFactor > 0 && len(rc.In) == 0 && rc.Live+len(rc.Dead) > 0 {
			c.starved = true
		}
		clear(c.cur)
		c.stale = c.stale[:0]
		c.open = false
		return nil
	}
	want := make([]accepted, 0, len(c.cur)+len(c.stale))
	for _, id := range sortedKeys(c.cur) {
		want = append(want, c.cur[id])
	}
	if v := c.compare(rc.Round, "in", rc.In, want); v != nil {
		return v
	}
	if v := c.compare(rc.Round, "stale", rc.Stale, c.stale); v != nil {
		return v
	}
	want = append(want, c.stale...)
	var total float64
	for _, a := range want {
		c.counted[a.key]++
		if c.counted[a.key] > 1 {
			return violation(InvCountedTwice, "%s's update for round %d entered a second aggregate (round %d)", a.key.client, a.key.round, rc.Round)
		}
		total += a.weight
	}
	switch {
	case rc.Aggregate && math.Abs(rc.Weight-total) > 1e-9*math.Max(1, total) && rc.Weight > total:
		return violation(InvCountedTwice, "round %d aggregated weight %v, accepted updates weigh %v", rc.Round, rc.Weight, total)
	case rc.Aggregate && math.Abs(rc.Weight-total) > 1e-9*math.Max(1, total):
		return violation(InvUpdateLost, "round %d aggregated weight %v, accepted updates weigh %v", rc.Round, rc.Weight, total)
	case !rc.Aggregate && total > 0 && !rc.Frozen:
		return violation(InvUpdateLost, "round %d closed without an aggregate although updates of weight %v were accepted", rc.Round, total)
	}
	if v := c.emptyClose(rc); v != nil {
		return v
	}
	clear(c.cur)
	c.stale = c.stale[:0]
	c.open = false
	return nil
}

// emptyClose checks, with adaptive deadlines, that a round closed with
// nothing in had nobody to wait for, reached its cap, or followed an empty
// round with no valid update since.
func (c *checker) emptyClose(rc aggregator.RoundClosed) *Violation {
	if c.cfg.DeadlineFactor <= 0 || len(rc.In)+len(rc.Stale) > 0 {
		return nil
	}
	live := rc.Live + len(rc.Dead) // live before the close declared some dead
	if live > 0 && !c.starved && rc.Duration < c.cfg.deadlineCap() {
		return violation(InvClosedEmpty, "round %d closed empty after %v (cap %v) with %d live clients", rc.Round, rc.Duration, c.cfg.deadlineCap(), live)
	}
	if live > 0 {
		c.starved = true
	}
	return nil
}

// validUpdate reports whether the aggregator took u as a valid update:
// counted, or dropped only for its timing (late, a duplicate, a future
// round), not for what it carries or who sent it.
func validUpdate(u aggregator.UpdateIn, acts []aggregator.Action) bool {
	for _, a := range acts {
		if d, ok := a.(aggregator.Dropped); ok && d.Client == u.Client && d.Round == u.Round {
			return d.Reason == "late" || d.Reason == "duplicate" || d.Reason == "future"
		}
	}
	return true
}

// compare matches a close decision's list of clients against the accepted
// updates, as multisets.
func (c *checker) compare(round uint64, list string, got []string, want []accepted) *Violation {
	n := map[string]int{}
	for _, id := range got {
		n[id]++
	}
	for _, a := range want {
		n[a.key.client]--
	}
	for _, id := range sortedKeys(n) {
		switch d := n[id]; {
		case d > 0 && c.everCounted(id):
			return violation(InvCountedTwice, "round %d lists %s %d more time(s) in %q than it has accepted updates", round, id, d, list)
		case d > 0:
			return violation(InvNotAccepted, "round %d lists %s in %q without an accepted update", round, id, list)
		case d < 0:
			return violation(InvUpdateLost, "round %d leaves %d accepted update(s) of %s out of %q", round, -d, id, list)
		}
	}
	return nil
}

func (c *checker) everCounted(client string) bool {
	for k := range c.counted {
		if k.client == client {
			return true
		}
	}
	for _, a := range c.cur {
		if a.key.client == client {
			return true
		}
	}
	return false
}

// crossCheck compares the persisted snapshot's pending updates with what
// was accepted: a restart from it must lose nothing and invent nothing.
func (c *checker) crossCheck(post aggregator.Snapshot) *Violation {
	var got []string
	for _, p := range post.Pending {
		got = append(got, p.Client)
	}
	want := make([]accepted, 0, len(c.cur))
	for _, a := range c.cur {
		want = append(want, a)
	}
	if v := c.compare(post.Round, "snapshot pending", got, want); v != nil {
		return v
	}
	got = got[:0]
	for _, p := range post.Stale {
		got = append(got, p.Client)
	}
	return c.compare(post.Round, "snapshot stale", got, c.stale)
}

// quorum checks that an open round is not one that had to close.
func (c *checker) quorum(post aggregator.Snapshot, now time.Time) *Violation {
	if d := c.deadlineNow(); !now.Before(d) {
		return violation(InvRoundOpen, "round %d still open at its deadline %v", post.Round, d.Sub(epoch()))
	}
	if c.sec != nil {
		return c.secureQuorum(post)
	}
	if c.cfg.Buffer > 0 {
		if n := len(c.cur) + len(c.stale); n >= c.cfg.Buffer {
			return violation(InvRoundOpen, "round %d open with %d updates in a buffer of %d", post.Round, n, c.cfg.Buffer)
		}
		return nil
	}
	live := post.LiveClients()
	need := c.cfg.Quorum
	if need == 0 {
		need = len(live)
	}
	got := 0
	for _, id := range live {
		if _, ok := c.cur[id]; ok {
			got++
		}
	}
	if need > 0 && got >= need {
		return violation(InvRoundOpen, "round %d open with %d of the %d updates its quorum needs (live %v)", post.Round, got, need, live)
	}
	return nil
}

// afterStep checks what must hold whatever party moved: an aggregator that
// is up never leaves a round open past its deadline.
func (c *checker) afterStep(aggUp bool, now time.Time) *Violation {
	if d := c.deadlineNow(); aggUp && c.open && now.After(d) {
		return violation(InvRoundOpen, "round %d open at +%v, past its deadline +%v", c.round, now.Sub(epoch()), d.Sub(epoch()))
	}
	return nil
}

// budget replays new ledger entries into the checker's own accountant and
// compares the spending with the budget.
func (c *checker) budget(id string, fresh []privacy.Entry) *Violation {
	if c.acct == nil {
		return violation(InvBudget, "no accountant at delta %v", c.cfg.Delta)
	}
	for _, e := range fresh {
		if err := c.acct.Apply(e); err != nil {
			return violation(InvBudget, "%s's ledger holds an invalid entry: %v", id, err)
		}
	}
	b := c.cfg.Budget
	if b.Epsilon > 0 {
		if eps := c.acct.Epsilon(c.acct.Client(privacy.ClientKey{Job: jobID, Client: id}), 1); eps > b.Epsilon*(1+1e-9) {
			return violation(InvBudget, "%s spent ε=%v of a budget of %v (δ=%v)", id, eps, b.Epsilon, c.cfg.Delta)
		}
	}
	if k, st, ok := c.acct.WorstNode(); ok && b.NodeEpsilon > 0 {
		if eps := c.acct.Epsilon(st, b.NodeRho); eps > b.NodeEpsilon*(1+1e-9) {
			return violation(InvBudget, "node %d of %s spent ε=%v of a node budget of %v", k.ID, k.Client, eps, b.NodeEpsilon)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
