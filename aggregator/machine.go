package aggregator

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

type clientState struct {
	weight float64
	live   bool // counts towards the quorum
	left   bool // said bye
	missed int  // consecutive rounds missed
}

// Machine is the aggregator's round logic. It is not safe for concurrent
// use; the adapter serializes events.
type Machine struct {
	cfg     Config
	clients map[string]*clientState

	schemaHash string
	numParams  int

	round    uint64 // the open round; 0 before the first
	open     bool
	openedAt time.Time
	deadline time.Time
	closed   uint64 // rounds closed so far

	model      []float32
	grad       []float32 // averaged gradient estimator (CE-FedGNN)
	modelRound uint64

	pending map[string]contribution // this round's updates by client
	stale   []contribution          // late updates folded into this round
	staleBy map[string]bool         // "client/round" already folded in

	finished bool
}

// NewMachine returns a machine waiting for cfg.MinClients joins.
func NewMachine(cfg Config) (*Machine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MissedToDead == 0 {
		cfg.MissedToDead = 3
	}
	return &Machine{
		cfg:     cfg,
		clients: map[string]*clientState{},
		pending: map[string]contribution{},
		staleBy: map[string]bool{},
	}, nil
}

// Round is the open round (0 before the first).
func (m *Machine) Round() uint64 { return m.round }

// Finished reports whether the job is over.
func (m *Machine) Finished() bool { return m.finished }

// Model returns the latest global model and the round that produced it.
func (m *Machine) Model() ([]float32, uint64) { return m.model, m.modelRound }

// Deadline is the open round's deadline (zero when no round is open).
func (m *Machine) Deadline() time.Time {
	if !m.open {
		return time.Time{}
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
		return reject(fmt.Sprintf("model schema %s/%d differs from the job's %s/%d", e.SchemaHash, e.NumParams, m.schemaHash, m.numParams))
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
	out = append(out, ReplyJoin{Client: e.Client, Accepted: true, Round: m.round})
	if m.model != nil {
		// A late joiner or a restarted client resynchronizes from the latest model.
		out = append(out, PublishModel{Round: m.modelRound, Params: m.model, Grad: m.grad, To: e.Client})
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
	if m.cfg.Averages() && !e.Withheld && (len(e.Params) != m.numParams || len(e.Grad) != 0 && len(e.Grad) != m.numParams) {
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "shape"})
	}
	w := e.Weight
	if w <= 0 {
		w = c.weight
	}
	if e.Withheld {
		w = 0 // present, but nothing to average
	}
	switch {
	case e.Round == m.round && m.open:
		if _, dup := m.pending[e.Client]; dup {
			return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "duplicate"})
		}
		m.pending[e.Client] = contribution{client: e.Client, weight: w, params: e.Params, grad: e.Grad}
		c.missed = 0
		revive()
		return m.maybeCloseOnQuorum(e.Now, out)
	case e.Round < m.round:
		key := fmt.Sprintf("%s/%d", e.Client, e.Round)
		f := m.cfg.Staleness.Weight(m.round - e.Round)
		if f == 0 || m.round-e.Round > m.maxStaleness() || m.staleBy[key] || !m.cfg.Averages() {
			return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "late"})
		}
		m.staleBy[key] = true
		revive()
		m.stale = append(m.stale, contribution{client: e.Client, weight: w * f, params: e.Params, grad: e.Grad})
		return m.maybeCloseOnBuffer(e.Now, out)
	default:
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "future"})
	}
}

// liveClients lists the clients counted towards the quorum, sorted.
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
	if m.open && m.cfg.Buffer > 0 && len(m.pending)+len(m.stale) >= m.cfg.Buffer {
		return m.close("buffer", now, out)
	}
	return out
}

func (m *Machine) maybeCloseOnQuorum(now time.Time, out []Action) []Action {
	if !m.open {
		return out
	}
	if m.cfg.Buffer > 0 {
		return m.maybeCloseOnBuffer(now, out)
	}
	live := m.liveClients()
	need := m.cfg.Quorum
	if need == 0 {
		need = len(live)
	}
	got := 0
	for _, id := range live {
		if _, ok := m.pending[id]; ok {
			got++
		}
	}
	if need > 0 && got >= need {
		return m.close("quorum", now, out)
	}
	return out
}

func (m *Machine) checkDeadline(now time.Time, out []Action) []Action {
	if m.open && !now.Before(m.deadline) {
		return m.close("deadline", now, out)
	}
	return out
}

func (m *Machine) close(reason string, now time.Time, out []Action) []Action {
	rc := RoundClosed{Round: m.round, Reason: reason, ClosedAt: now, Duration: now.Sub(m.openedAt)}
	for _, id := range m.liveClients() {
		c := m.clients[id]
		if _, ok := m.pending[id]; ok {
			continue
		}
		rc.Late = append(rc.Late, id)
		c.missed++
		if c.missed >= m.cfg.MissedToDead {
			c.live = false
			rc.Dead = append(rc.Dead, id)
		}
	}
	var cs []contribution
	for id, c := range m.pending {
		rc.In = append(rc.In, id)
		cs = append(cs, c)
		// A copy of this update arriving late (redelivered, duplicated) must
		// not be folded into a later round as well.
		m.staleBy[fmt.Sprintf("%s/%d", id, m.round)] = true
	}
	sort.Strings(rc.In)
	for _, c := range m.stale {
		rc.Stale = append(rc.Stale, c.client)
		cs = append(cs, c)
	}
	rc.Live = len(m.liveClients())
	if m.cfg.Averages() {
		if avg, total := weightedAverage(cs, m.numParams); avg != nil {
			m.model, m.modelRound = avg, m.round
			m.grad = weightedGradAverage(cs, m.numParams)
			rc.Weight, rc.Aggregate = total, true
		}
	}
	m.forgetOldRounds()
	m.open = false
	m.closed++
	m.pending = map[string]contribution{}
	m.stale = nil
	out = append(out, rc)
	if rc.Aggregate {
		out = append(out, PublishModel{Round: m.round, Params: m.model, Grad: m.grad, Final: m.closed >= uint64(m.cfg.Rounds)})
	}
	if m.closed >= uint64(m.cfg.Rounds) {
		m.finished = true
		return append(out, Finished{Rounds: m.closed})
	}
	return m.openNext(now, out)
}

func (m *Machine) openNext(now time.Time, out []Action) []Action {
	m.round++
	m.open = true
	m.openedAt = now
	m.deadline = now.Add(m.cfg.RoundTimeout)
	return append(out, OpenRound{Round: m.round, Deadline: m.deadline, ModelRound: m.modelRound})
}

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
