package aggregator

import (
	"fmt"
	"math"
	"sort"
	"time"
)

type lpsfedClient struct {
	weight              float64
	users, items, edges int
	live, left          bool
	missed              int
	hasRho              bool
	rho                 float64 // last released ρ_c
}

type lpsfedContribution struct {
	weight    float64
	params    []float32
	hasMargin bool
	margin    float64
}

// LPSFedMachine is the aggregator's round logic for LPSFed and for FedAvg
// on the LPSFed client model (Algorithms 1–3): a pure deterministic state
// machine like Machine. A round closes when every live client's update is
// in or at the deadline; then the contributors' MLPs are averaged
// (θ̄ = mean, Eq. 13; FedAvg: sample-weighted), their ρ_c min–max
// normalized (Eq. 12) and each contributor sent θ̄·ρ̄_c + θ^c·(1 − ρ̄_c)
// and its personalized margin (Eq. 14). FedAvg is the case ρ̄_c = 1.
type LPSFedMachine struct {
	cfg     LPSFedConfig
	clients map[string]*lpsfedClient

	schemaHash string
	numParams  int

	round    uint64
	open     bool
	openedAt time.Time
	deadline time.Time
	closed   uint64

	kernel        []float64
	kernelVersion uint64
	modelRound    uint64 // last round whose personalized models went out

	pending  map[string]lpsfedContribution
	finished bool
}

// NewLPSFedMachine returns a machine waiting for cfg.MinClients joins.
func NewLPSFedMachine(cfg LPSFedConfig) (*LPSFedMachine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MissedToDead == 0 {
		cfg.MissedToDead = 3
	}
	return &LPSFedMachine{cfg: cfg, clients: map[string]*lpsfedClient{}, pending: map[string]lpsfedContribution{}}, nil
}

// Round is the open round (0 before the first).
func (m *LPSFedMachine) Round() uint64 { return m.round }

// Finished reports whether the job is over.
func (m *LPSFedMachine) Finished() bool { return m.finished }

// NumParams is the federated vector length agreed at the first join.
func (m *LPSFedMachine) NumParams() int { return m.numParams }

// Kernel returns the current reference kernel and its version.
func (m *LPSFedMachine) Kernel() ([]float64, uint64) { return m.kernel, m.kernelVersion }

// LiveClients lists the clients counted towards the quorum, sorted.
func (m *LPSFedMachine) LiveClients() []string {
	var ids []string
	for id, c := range m.clients {
		if c.live {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Step applies one event and returns the actions to carry out, in order.
func (m *LPSFedMachine) Step(ev Event) []Action {
	var out []Action
	var now time.Time
	switch e := ev.(type) {
	case LPSFedJoin:
		now = e.Now
		out = m.join(e, out)
	case LPSFedUpdateIn:
		now = e.Now
		out = m.update(e, out)
	case Leave:
		now = e.Now
		if c, ok := m.clients[e.Client]; ok {
			c.live, c.left = false, true
		}
		out = m.maybeClose(now, out)
	case Tick:
		now = e.Now
	default:
		return nil
	}
	if m.open && !now.Before(m.deadline) {
		out = m.close("deadline", now, out)
	}
	return out
}

func (m *LPSFedMachine) join(e LPSFedJoin, out []Action) []Action {
	reject := func(reason string) []Action {
		return append(out, ReplyJoin{Client: e.Client, Accepted: false, Reason: reason, Round: m.round})
	}
	if m.finished {
		return reject("job finished")
	}
	if m.schemaHash != "" && (e.SchemaHash != m.schemaHash || e.NumParams != m.numParams) {
		return reject(fmt.Sprintf("model schema %s/%d differs from the job's %s/%d", e.SchemaHash, e.NumParams, m.schemaHash, m.numParams))
	}
	if e.Users < 0 || e.Items < 0 || e.Edges < 0 {
		return reject("negative subgraph counts")
	}
	if m.schemaHash == "" {
		m.schemaHash, m.numParams = e.SchemaHash, e.NumParams
	}
	c, ok := m.clients[e.Client]
	if !ok {
		c = &lpsfedClient{}
		m.clients[e.Client] = c
	}
	c.weight, c.users, c.items, c.edges = e.Weight, e.Users, e.Items, e.Edges
	c.live, c.left, c.missed = true, false, 0
	out = append(out, ReplyJoin{Client: e.Client, Accepted: true, Round: m.round})
	if m.round == 0 && len(m.clients) >= m.cfg.MinClients {
		out = m.openNext(e.Now, out)
	}
	return out
}

func (m *LPSFedMachine) update(e LPSFedUpdateIn, out []Action) []Action {
	c, ok := m.clients[e.Client]
	switch {
	case !ok:
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "unknown_client"})
	case m.finished:
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "finished"})
	case !e.Withheld && len(e.Params) != m.numParams:
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "shape"})
	case e.HasRho && (math.IsNaN(e.Rho) || math.IsInf(e.Rho, 0)) || e.HasMargin && (math.IsNaN(e.Margin) || math.IsInf(e.Margin, 0)):
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "non_finite"})
	}
	c.live, c.left = true, false
	if e.Round > m.round {
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "future"})
	}
	if e.Round < m.round || !m.open {
		// Personalization mixes a client's own update of this round; a
		// late one has nothing to be mixed into.
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "late"})
	}
	if _, dup := m.pending[e.Client]; dup {
		return append(out, Dropped{Client: e.Client, Round: e.Round, Reason: "duplicate"})
	}
	if e.HasRho {
		c.hasRho, c.rho = true, e.Rho
	}
	w := e.Weight
	if w <= 0 {
		w = c.weight
	}
	ct := lpsfedContribution{weight: w, params: e.Params, hasMargin: e.HasMargin, margin: e.Margin}
	if e.Withheld {
		ct = lpsfedContribution{}
	}
	m.pending[e.Client] = ct
	c.missed = 0
	return m.maybeClose(e.Now, out)
}

func (m *LPSFedMachine) maybeClose(now time.Time, out []Action) []Action {
	if !m.open {
		return out
	}
	live := m.LiveClients()
	got := 0
	for _, id := range live {
		if _, ok := m.pending[id]; ok {
			got++
		}
	}
	if len(live) > 0 && got == len(live) {
		return m.close("quorum", now, out)
	}
	return out
}

func (m *LPSFedMachine) close(reason string, now time.Time, out []Action) []Action {
	rc := RoundClosed{Round: m.round, Reason: reason, ClosedAt: now, Duration: now.Sub(m.openedAt)}
	for _, id := range m.LiveClients() {
		if _, ok := m.pending[id]; ok {
			continue
		}
		c := m.clients[id]
		rc.Late = append(rc.Late, id)
		if c.missed++; c.missed >= m.cfg.MissedToDead {
			c.live = false
			rc.Dead = append(rc.Dead, id)
		}
	}
	for id, ct := range m.pending {
		rc.In = append(rc.In, id)
		rc.Weight += ct.weight
	}
	sort.Strings(rc.In)
	rc.Live = len(m.LiveClients())
	final := m.closed+1 >= uint64(m.cfg.Rounds)
	mix := m.mix(rc.In)
	frozen := m.round <= uint64(m.cfg.FreezeRounds)
	mix.Frozen = frozen
	var sends []Action
	if mix.avg != nil && !frozen {
		sends = m.personalize(rc.In, mix, final)
		rc.Aggregate = true
		m.modelRound = m.round
	}
	m.open = false
	m.closed++
	m.pending = map[string]lpsfedContribution{}
	out = append(out, rc, mix.Mixed)
	out = append(out, sends...)
	if final {
		m.finished = true
		return append(out, Finished{Rounds: m.closed})
	}
	return m.openNext(now, out)
}

// mixing is a round's averages and normalized similarities.
type mixing struct {
	Mixed
	avg []float32
}

// mix averages the contributions of ids (sorted) in float64, in id order:
// the result does not depend on arrival order.
func (m *LPSFedMachine) mix(ids []string) mixing {
	mx := mixing{Mixed: Mixed{Round: m.round, Rho: map[string]float64{}, RhoBar: map[string]float64{}}}
	acc := make([]float64, m.numParams)
	var total, msum float64
	var mn int
	for _, id := range ids {
		ct := m.pending[id]
		if ct.params == nil {
			continue
		}
		w := 1.0 // Eq. 13: the plain mean over clients
		if !m.cfg.personalizes() {
			w = ct.weight
		}
		if w <= 0 {
			continue
		}
		total += w
		for i, x := range ct.params {
			acc[i] += w * float64(x)
		}
		if ct.hasMargin {
			msum += ct.margin
			mn++
		}
	}
	if total > 0 {
		mx.avg = make([]float32, m.numParams)
		for i, x := range acc {
			mx.avg[i] = float32(x / total)
		}
	}
	if mn > 0 {
		mx.GlobalMargin, mx.HasMargin = msum/float64(mn), true
	}
	// ρ̄ over the contributors that ever released a ρ_c; the others (and
	// every FedAvg client) take the global model whole, ρ̄ = 1.
	var have []string
	var rhos []float64
	for _, id := range ids {
		c := m.clients[id]
		if m.cfg.personalizes() && c.hasRho {
			have = append(have, id)
			rhos = append(rhos, c.rho)
			mx.Rho[id] = c.rho
		} else {
			mx.Rho[id] = math.NaN()
		}
		mx.RhoBar[id] = 1
	}
	for i, v := range normalizeRho(rhos) {
		mx.RhoBar[have[i]] = v
	}
	return mx
}

// personalize returns each contributor's personalized model (Eq. 14).
func (m *LPSFedMachine) personalize(ids []string, mx mixing, final bool) []Action {
	var out []Action
	for _, id := range ids {
		ct := m.pending[id]
		r := mx.RhoBar[id]
		p := PublishPersonal{Round: m.round, To: id, RhoBar: r, Final: final, Params: make([]float32, m.numParams)}
		for i, g := range mx.avg {
			if ct.params == nil {
				p.Params[i] = g
				continue
			}
			p.Params[i] = float32(float64(g)*r + float64(ct.params[i])*(1-r))
		}
		if mx.HasMargin {
			p.HasMargin, p.Margin = true, mx.GlobalMargin
			if ct.hasMargin {
				p.Margin = mx.GlobalMargin*r + ct.margin*(1-r)
			}
		}
		out = append(out, p)
	}
	return out
}

func (m *LPSFedMachine) openNext(now time.Time, out []Action) []Action {
	m.round++
	if m.cfg.personalizes() && (m.kernel == nil || m.cfg.RefEvery > 0 && (m.round-1)%uint64(m.cfg.RefEvery) == 0) {
		k, err := m.cfg.Reference(m.referenceStats(), m.cfg.Phi, m.cfg.Seed+m.round)
		if err != nil || len(k) != m.cfg.Phi {
			// Without a reference every client falls back to ρ̄ = 1: log it
			// as a dropped reference and go on rather than stall the job.
			out = append(out, Dropped{Round: m.round, Reason: fmt.Sprintf("reference kernel: %v (len %d)", err, len(k))})
		} else {
			m.kernel, m.kernelVersion = k, m.round
		}
	}
	m.open = true
	m.openedAt = now
	m.deadline = now.Add(m.cfg.RoundTimeout)
	return append(out, LPSFedOpen{Round: m.round, Deadline: m.deadline, ModelRound: m.modelRound,
		Kernel: m.kernel, KernelVersion: m.kernelVersion})
}

// referenceStats are the counts of G_R: the mean over joined clients, or
// the fixed assumptions in strict mode.
func (m *LPSFedMachine) referenceStats() ReferenceStats {
	if m.cfg.Strict {
		return m.cfg.StrictStats
	}
	ids := make([]string, 0, len(m.clients))
	for id := range m.clients {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var u, i, e, n int
	for _, id := range ids {
		c := m.clients[id]
		if c.users > 0 && c.items > 0 && c.edges > 0 {
			u, i, e, n = u+c.users, i+c.items, e+c.edges, n+1
		}
	}
	if n == 0 {
		return m.cfg.StrictStats
	}
	return ReferenceStats{Users: (u + n/2) / n, Items: (i + n/2) / n, Edges: (e + n/2) / n}
}
