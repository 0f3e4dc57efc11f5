package aggregator

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"graphfed/bus"
	"graphfed/privacy"
)

type clientState struct {
	weight float64
	live   bool // counts towards the quorum
	left   bool // said bye
	missed int  // consecutive rounds missed
}

// Machine is the aggregator's round logic for every algorithm: what
// differs between algorithms is its Strategy (strategy.go). It is not safe
// for concurrent use; the adapter serializes events.
type Machine struct {
	cfg      Config
	strategy Strategy
	clients  map[string]*clientState

	schemaHash string
	numParams  int

	round    uint64 // the open round; 0 before the first
	open     bool
	openedAt time.Time
	deadline time.Time
	closed   uint64 // rounds closed so far

	// models are the latest models published, sorted by To: one global
	// model (To empty), or each client's latest personalized one.
	models     []PublishModel
	modelRound uint64 // the last round that published models

	pending map[string]Contribution // this round's updates by client
	stale   []Contribution          // late updates folded into this round
	staleBy map[string]bool         // "client/round" already folded in

	finished bool

	// dl sizes the rounds' deadlines when they adapt (deadline.go);
	// extensions counts the open round's extensions for being empty;
	// starved: a round closed empty at its cap and no update came since.
	dl         deadlinePolicy
	extensions int
	starved    bool

	// heads are the clients' latest reported ledger heads, which every
	// record repeats (records.go).
	heads map[string]privacy.Head

	// sec is the open round's secure aggregation (secure_round.go); it
	// is not snapshotted: a restored machine closes the round it was in
	// without a model.
	sec *secureRound
}

// NewMachine returns a machine waiting for cfg.MinClients joins.
func NewMachine(cfg Config) (*Machine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.SecAgg.ready(); err != nil {
		return nil, err
	}
	if cfg.MissedToDead == 0 {
		cfg.MissedToDead = 3
	}
	st, err := newStrategy(cfg)
	if err != nil {
		return nil, err
	}
	return &Machine{
		schemaHash: cfg.Contract.SchemaHash,
		numParams:  cfg.Contract.NumParams,
		cfg:        cfg,
		strategy:   st,
		clients:    map[string]*clientState{},
		pending:    map[string]Contribution{},
		staleBy:    map[string]bool{},
		dl:         newDeadlinePolicy(cfg),
		heads:      map[string]privacy.Head{},
	}, nil
}

// Round is the open round (0 before the first).
func (m *Machine) Round() uint64 { return m.round }

// Finished reports whether the job is over.
func (m *Machine) Finished() bool { return m.finished }

// Model returns the latest global model and the round that produced it
// (nil for strategies that personalize: see Models).
func (m *Machine) Model() ([]float32, uint64) {
	if g, ok := m.global(); ok {
		return g.Params, m.modelRound
	}
	return nil, m.modelRound
}

// Models returns the latest models published (global or personalized,
// sorted by recipient); the vectors are shared, not copied.
func (m *Machine) Models() []PublishModel { return slices.Clone(m.models) }

// global is the latest global model, if the strategy publishes one.
func (m *Machine) global() (PublishModel, bool) {
	if len(m.models) == 1 && m.models[0].To == "" {
		return m.models[0], true
	}
	return PublishModel{}, false
}

// openRound is the announcement of the open round (also resent).
func (m *Machine) openRound() OpenRound {
	o := OpenRound{Round: m.round, Deadline: m.deadline, ModelRound: m.modelRound, Payload: m.strategy.Payload(), SecureJob: m.secureOn()}
	if s := m.secure(); s != nil {
		o.SecAgg = s.announce
	}
	return o
}

// Deadline is the open round's deadline (zero when no round is open).
func (m *Machine) Deadline() time.Time {
	if !m.open {
		return time.Time{}
	}
	if s := m.secure(); s != nil && s.stage != stageKeys {
		return s.due // the inputs' or the reveals' wait
	}
	return m.deadline
}

// Step applies one event and returns the actions to carry out, in order.
func (m *Machine) Step(ev Event) []Action {
	var out []Action
	switch e := ev.(type) {
	case Join:
		out = m.join(e, out)
	case UpdateIn:
		out = m.update(e, out)
	case SecAggIn:
		out = m.secureIn(e, out)
	case Leave:
		if c, ok := m.clients[e.Client]; ok {
			c.live, c.left = false, true
		}
		out = m.maybeCloseOnQuorum(e.Now, out)
	case Tick:
	}
	return m.checkDeadline(eventTime(ev), out)
}

func eventTime(ev Event) time.Time {
	switch e := ev.(type) {
	case Join:
		return e.Now
	case UpdateIn:
		return e.Now
	case Leave:
		return e.Now
	case SecAggIn:
		return e.Now
	case Tick:
		return e.Now
	}
	return time.Time{}
}

func (m *Machine) join(e Join, out []Action) []Action {
	reject := func(reason string) []Action {
		return append(out, ReplyJoin{Client: e.Client, Accepted: false, Reason: reason, Round: m.round})
	}
	if m.finished {
		return reject("job finished")
	}
	if m.schemaHash != "" && (e.SchemaHash != m.schemaHash || e.NumParams != m.numParams) {
		why := fmt.Sprintf("model schema %s/%d differs from the job's %s/%d", e.SchemaHash, e.NumParams, m.schemaHash, m.numParams)
		out = append(out, Rejected{Client: e.Client, Round: m.round, Reason: bus.ReasonSchema, Detail: why})
		return reject(why)
	}
	if limit := m.cfg.Contract.maxTrainSize(); !(e.Weight >= 0 && e.Weight <= limit) {
		why := fmt.Sprintf("training size %g outside the job's 0 to %g", e.Weight, limit)
		out = append(out, Rejected{Client: e.Client, Round: m.round, Reason: bus.ReasonSchema, Detail: why})
		return reject(why)
	}
	if reason := m.strategy.Join(e); reason != "" {
		return reject(reason)
	}
	if m.schemaHash == "" {
		m.schemaHash, m.numParams = e.SchemaHash, e.NumParams
	}
	c, ok := m.clients[e.Client]
	if !ok {
		c = &clientState{}
		m.clients[e.Client] = c
	}
	c.weight, c.live, c.left, c.missed = e.Weight, true, false, 0
	m.starved = false // a client (back) at work: empty rounds may wait for it
	out = append(out, ReplyJoin{Client: e.Client, Accepted: true, Round: m.round})
	// A late joiner or a restarted client resynchronizes from the latest
	// model it is due: the global one, or its own personalized one.
	for _, p := range m.models {
		if p.To == "" || p.To == e.Client {
			p.To, p.Final = e.Client, false
			out = append(out, p)
		}
	}
	if m.round == 0 && len(m.clients) >= m.cfg.MinClients {
		out = m.openNext(e.Now, out)
	}
	return out
}

func (m *Machine) update(e UpdateIn, out []Action) []Action {
	c, ok := m.clients[e.Client]
	if !ok {
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "unknown_client"})
	}
	if m.finished {
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "finished"})
	}
	// Only an accepted update revives a dead client: garbage, a wrong
	// shape or a stale copy from a crashed party must not make every
	// later round wait for it until the deadline.
	revive := func() { c.live, c.left = true, false }
	if reason := m.strategy.Check(e, m.numParams); reason != "" {
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: reason})
	}
	if m.secureOn() && !e.Masked && !e.Withheld && len(e.Params)+len(e.Grad) > 0 {
		return append(out, Rejected{Client: e.Client, Round: e.Round, Reason: bus.ReasonShape,
			Detail: "an update in the clear in a job that aggregates securely: its vectors belong in the round's secure sum"})
	}
	if !m.secureOn() && e.Masked {
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "masked"})
	}
	// Within the contract: a weight no larger than the sender declared, and
	// norms the job's clip and noise can give. Checked before anything of
	// the update counts, so that a copy sent with the sender's key cannot
	// take the place of its honest update.
	if reason, why := m.checkContract(e, c); reason != "" {
		return append(out, Rejected{Client: e.Client, Round: e.Round, Reason: reason, Detail: why})
	}
	if e.HasRho && !finite(e.Rho) || e.HasMargin && !finite(e.Margin) {
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "non_finite"})
	}
	// A signed update of a known client states its ledger head, whether
	// or not it still counts for a round.
	m.noteHead(e.Client, e.Head)
	if e.Descriptors != nil && e.Round <= m.round {
		// Descriptors never change: a strategy that keeps them takes
		// them whether or not the update still counts for its round.
		if dt, ok := m.strategy.(descriptorTaker); ok {
			dt.takeDescriptors(e.Client, *e.Descriptors)
		}
	}
	w := e.Weight
	if w <= 0 {
		w = c.weight
	}
	ct := Contribution{Client: e.Client, Weight: w, Params: e.Params, Grad: e.Grad,
		Rho: e.Rho, HasRho: e.HasRho, RhoVersion: e.RhoVersion, Margin: e.Margin, HasMargin: e.HasMargin}
	if !ct.HasRho {
		ct.Rho, ct.RhoVersion = 0, 0
	}
	if !ct.HasMargin {
		ct.Margin = 0
	}
	// A valid update, on time or not, shows a client at work: empty rounds
	// may be extended again (deadline.go).
	m.starved = false
	if e.Withheld {
		// Present, but nothing to average; a ρ_c released beside it
		// still counts.
		ct.Weight, ct.Params, ct.Grad, ct.Margin, ct.HasMargin = 0, nil, nil, 0, false
	}
	if m.secureOn() && e.Round < m.round {
		// Its vectors were never here: the agent folds them into its
		// next secure input (bus.SecAggRound.Stale).
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "late"})
	}
	switch {
	case e.Round == m.round && m.open:
		if _, dup := m.pending[e.Client]; dup {
			return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "duplicate"})
		}
		m.pending[e.Client] = ct
		c.missed = 0
		revive()
		out = m.measured(max(e.Now.Sub(m.openedAt), e.Took), out)
		return m.maybeCloseOnQuorum(e.Now, out)
	case e.Round < m.round:
		key := fmt.Sprintf("%s/%d", e.Client, e.Round)
		if !m.staleBy[key] {
			// Too late for its round, but it says how long a round's
			// work takes: the next deadlines should fit it.
			out = m.measured(e.Took, out)
		}
		f := m.cfg.Staleness.Weight(m.round - e.Round)
		if f == 0 || m.round-e.Round > m.maxStaleness() || m.staleBy[key] || !m.strategy.FoldsLate() {
			return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "late"})
		}
		m.staleBy[key] = true
		revive()
		ct.Weight *= f
		m.stale = append(m.stale, ct)
		return m.maybeCloseOnBuffer(e.Now, out)
	default:
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "future"})
	}
}

// liveClients lists the clients counted towards the quorum, sorted.
// liveCount is len(liveClients()) without building and sorting the list:
// it is asked once per update, and with 10,000 clients the list was most of
// the aggregator's allocation.
func (m *Machine) liveCount() int {
	n := 0
	for _, c := range m.clients {
		if c.live {
			n++
		}
	}
	return n
}

func (m *Machine) liveClients() []string {
	var ids []string
	for id, c := range m.clients {
		if c.live {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// maybeCloseOnBuffer closes a FedBuff round once Buffer updates are in.
func (m *Machine) maybeCloseOnBuffer(now time.Time, out []Action) []Action {
	if m.secureOn() {
		return m.maybeCloseKeys(now, out)
	}
	if m.open && m.cfg.Buffer > 0 && len(m.pending)+len(m.stale) >= m.cfg.Buffer {
		return m.close("buffer", now, out)
	}
	return out
}

func (m *Machine) maybeCloseOnQuorum(now time.Time, out []Action) []Action {
	if !m.open {
		return out
	}
	if m.secureOn() {
		// The advertisements pace a secure round (secure_round.go).
		return m.maybeCloseKeys(now, out)
	}
	if m.cfg.Buffer > 0 {
		return m.maybeCloseOnBuffer(now, out)
	}
	// Asked once per update: at 10,000 clients, building and sorting the
	// live list here took a fifth of the whole job's CPU. Only the pending
	// updates can count, so there is nothing to look at until enough are
	// in, and then it is the pending ones that are checked for liveness.
	need := m.cfg.Quorum
	if need == 0 {
		need = m.liveCount()
	}
	if need <= 0 || len(m.pending) < need {
		return out
	}
	got := 0
	for id := range m.pending {
		if c, ok := m.clients[id]; ok && c.live {
			got++
		}
	}
	if got >= need {
		return m.close("quorum", now, out)
	}
	return out
}

func (m *Machine) checkDeadline(now time.Time, out []Action) []Action {
	if s := m.secure(); s != nil {
		return m.checkSecureDeadline(s, now, out)
	}
	if !m.open || now.Before(m.deadline) {
		return out
	}
	next, ok := m.dl.extension(roundView{openedAt: m.openedAt, deadline: m.deadline, now: now,
		in: len(m.pending) + len(m.stale), live: m.liveCount(), starved: m.starved})
	if !ok {
		return m.close("deadline", now, out)
	}
	m.deadline = next
	m.extensions++
	return append(out, m.adapted(AdaptEmpty))
}

// measured feeds one update's time to the adaptive deadline, and lets the
// open round stay open longer if the new budget says so (a round's
// deadline only ever moves later: clients were told it).
func (m *Machine) measured(took time.Duration, out []Action) []Action {
	if !m.dl.on() || took <= 0 {
		return out
	}
	m.dl.observe(took)
	if want := m.openedAt.Add(m.dl.budget()); m.open && want.After(m.deadline) {
		m.deadline = want
		out = append(out, m.adapted(AdaptMeasured))
	}
	return out
}

// adapted records a change of the open round's deadline.
func (m *Machine) adapted(reason string) DeadlineAdapted {
	return DeadlineAdapted{Round: m.round, Deadline: m.deadline, Budget: m.deadline.Sub(m.openedAt), Reason: reason,
		Median: m.dl.median(), Samples: len(m.dl.samples)}
}

func (m *Machine) close(reason string, now time.Time, out []Action) []Action {
	rc := RoundClosed{Round: m.round, Reason: reason, ClosedAt: now, Duration: now.Sub(m.openedAt)}
	in := CloseInput{Round: m.round, NumParams: m.numParams, Frozen: m.round <= uint64(m.cfg.FreezeRounds)}
	counted := func(id string) bool { _, ok := m.pending[id]; return ok }
	if m.secureOn() {
		// The survivors are the round's: a party whose update came but
		// whose masked input did not is late, its vectors go into its
		// next input.
		var surv []string
		rc.SecAgg, surv = m.secureClose()
		in.Secure = true
		if s := m.sec; s != nil && s.round == m.round {
			in.Sum = s.sum
		}
		inSum := map[string]bool{}
		for _, id := range surv {
			inSum[id] = true
			if _, ok := m.pending[id]; !ok {
				m.pending[id] = Contribution{Client: id, Weight: m.clients[id].weight}
			}
		}
		for id := range m.pending {
			if !inSum[id] {
				delete(m.pending, id)
			}
		}
		for _, id := range surv {
			c := m.clients[id]
			c.missed, c.live, c.left = 0, true, false
		}
		counted = func(id string) bool { return inSum[id] }
		m.sec = nil
	}
	protocolFailed := rc.SecAgg != nil && rc.SecAgg.Failure != ""
	for _, id := range m.liveClients() {
		c := m.clients[id]
		if counted(id) {
			continue
		}
		rc.Late = append(rc.Late, id)
		if protocolFailed {
			// A round the protocol failed (below t, a lost keys message)
			// says nothing of one client: it is no missed round.
			continue
		}
		c.missed++
		if c.missed >= m.cfg.MissedToDead {
			c.live = false
			rc.Dead = append(rc.Dead, id)
		}
	}
	for id := range m.pending {
		rc.In = append(rc.In, id)
		// A copy of this update arriving late (redelivered, duplicated) must
		// not be folded into a later round as well.
		m.staleBy[fmt.Sprintf("%s/%d", id, m.round)] = true
	}
	sort.Strings(rc.In)
	for _, id := range rc.In {
		in.In = append(in.In, m.pending[id])
	}
	for _, c := range m.stale {
		rc.Stale = append(rc.Stale, c.Client)
		in.Stale = append(in.Stale, c)
	}
	rc.Live = m.liveCount()
	if m.dl.on() {
		rc.Budget, rc.Extensions = m.deadline.Sub(m.openedAt), m.extensions
		if len(rc.In)+len(rc.Stale) == 0 && rc.Live+len(rc.Dead) > 0 {
			// Closing empty with clients to wait for: the cap was reached
			// (or already was). No more extensions until an update comes.
			m.starved = true
		}
	}
	final := m.closed+1 >= uint64(m.cfg.Rounds)
	if g, ok := m.global(); ok {
		in.Global = g.Params
	}
	res := m.strategy.Close(in)
	rc.Weight, rc.Mix, rc.Frozen, rc.SetAside = res.Weight, res.Mix, in.Frozen, res.SetAside
	var sends []Action
	if len(res.Models) > 0 && !in.Frozen {
		for _, p := range res.Models {
			p.Round, p.Final = m.round, final
			sends = append(sends, p)
		}
		m.keepModels(res.Models)
		rc.Aggregate = true
	}
	m.forgetOldRounds()
	m.open = false
	m.closed++
	m.pending = map[string]Contribution{}
	m.stale = nil
	out = append(out, rc)
	// The record of this close is durable before the round's models go
	// out, and the next round's opening names it.
	out = append(out, m.record(m.round))
	out = append(out, sends...)
	if final {
		m.finished = true
		return append(out, Finished{Rounds: m.closed})
	}
	return m.openNext(now, out)
}

// keepModels records a close's models as the latest: a global model
// replaces everything, personalized ones replace their recipients'
// earlier ones (a client that sat a round out keeps its last).
func (m *Machine) keepModels(ps []PublishModel) {
	m.modelRound = m.round
	final := m.closed+1 >= uint64(m.cfg.Rounds)
	byTo := map[string]PublishModel{}
	for _, p := range m.models {
		if p.To != "" {
			byTo[p.To] = p
		}
	}
	for _, p := range ps {
		p.Round, p.Final = m.round, final
		if p.To == "" {
			m.models = []PublishModel{p}
			return
		}
		byTo[p.To] = p
	}
	m.models = m.models[:0:0]
	for _, to := range sortedKeys(byTo) {
		m.models = append(m.models, byTo[to])
	}
}

func (m *Machine) openNext(now time.Time, out []Action) []Action {
	if m.round == 0 {
		// The start record: the job's first round is about to open, and
		// every bank entry from now on names a record of the aggregator.
		out = append(out, m.record(0))
	}
	m.round++
	if note := m.strategy.Open(m.round); note != "" {
		out = append(out, Dropped{Round: m.round, Reason: note})
	}
	m.open = true
	m.openedAt = now
	m.extensions = 0
	m.sec = nil
	if m.secureOn() {
		s, err := m.openSecure(m.round)
		if err != nil {
			out = append(out, Dropped{Round: m.round, Reason: "secagg: " + err.Error()})
		}
		m.sec = s
	}
	budget := m.dl.budget()
	m.deadline = now.Add(budget)
	if budget != m.cfg.RoundTimeout {
		out = append(out, m.adapted(AdaptMeasured))
	}
	return append(out, m.openRound())
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func (m *Machine) maxStaleness() uint64 {
	if m.cfg.MaxStaleness > 0 {
		return uint64(m.cfg.MaxStaleness)
	}
	return 256
}

// forgetOldRounds drops the "already folded in" marks of rounds too old
// for any update of theirs to be accepted again, so that the mark set stays
// bounded by clients × MaxStaleness however long the job runs.
func (m *Machine) forgetOldRounds() {
	if m.round <= m.maxStaleness() {
		return
	}
	oldest := m.round - m.maxStaleness()
	for k := range m.staleBy {
		i := strings.LastIndexByte(k, '/')
		if r, err := strconv.ParseUint(k[i+1:], 10, 64); err != nil || r < oldest {
			delete(m.staleBy, k)
		}
	}
}
