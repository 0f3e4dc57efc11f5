package aggregator

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"graphfed/privacy"
)

// SnapshotVersion is the layout of Snapshot this build writes and reads.
//
// Version 2 holds every strategy: the latest models as a list (one global
// model, or one per client) and the strategy's own state. The adaptive
// deadline's state (DeadlinePolicy) was added to it compatibly: a
// snapshot without it restores a machine with nothing measured.
const SnapshotVersion = 2

// Snapshot is the whole durable state of a Machine: what an adapter persists
// after every Step, before it carries the actions out, so that a restarted
// aggregator resumes exactly where it stopped (etcd raft persists its
// HardState and entries before sending messages, for the same reason: an
// update whose acceptance was acted on must not be forgotten by a crash).
//
// Every slice is a copy owned by the snapshot, and collections are sorted,
// so that equal machines have equal snapshots and equal encodings.
type Snapshot struct {
	Version    int              `json:"version"`
	Config     Config           `json:"config"`
	Clients    []ClientSnapshot `json:"clients"` // sorted by ID
	SchemaHash string           `json:"schema_hash"`
	NumParams  int              `json:"num_params"`
	Round      uint64           `json:"round"`
	Open       bool             `json:"open"`
	OpenedAt   time.Time        `json:"opened_at"`
	Deadline   time.Time        `json:"deadline"`
	Closed     uint64           `json:"closed"`
	// Models are the latest models published, sorted by To: one global
	// model (To empty) or each client's latest personalized one.
	Models     []ModelSnapshot `json:"models,omitempty"`
	ModelRound uint64          `json:"model_round"`
	// Strategy is the strategy's own state (Strategy.State): LPSFed's
	// reference kernel and its version, each client's counts and last ρ_c.
	Strategy json.RawMessage `json:"strategy,omitempty"`
	// Pending are the open round's updates, sorted by client; Stale the
	// late updates folded into it, in arrival order; StaleBy the
	// "client/round" keys of every late update ever folded in, sorted.
	Pending  []Contribution `json:"pending,omitempty"`
	Stale    []Contribution `json:"stale,omitempty"`
	StaleBy  []string       `json:"stale_by,omitempty"`
	Finished bool           `json:"finished"`
	// DeadlinePolicy is the adaptive deadline's state (deadline.go), nil
	// when the deadline does not adapt.
	DeadlinePolicy *DeadlineSnapshot `json:"deadline_policy,omitempty"`
	// Heads are the clients' latest reported ledger heads, sorted by
	// client (records.go); added compatibly: a snapshot without them
	// restores a machine that has heard none.
	Heads []privacy.Head `json:"heads,omitempty"`
}

// ClientSnapshot is one client's standing with the aggregator.
type ClientSnapshot struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
	Live   bool    `json:"live"`
	Left   bool    `json:"left"`
	Missed int     `json:"missed"`
}

// ModelSnapshot is one of the latest models (a PublishModel).
type ModelSnapshot struct {
	To        string    `json:"to,omitempty"` // empty: every client's
	Round     uint64    `json:"round"`
	Params    []float32 `json:"params,omitempty"`
	Grad      []float32 `json:"grad,omitempty"`
	Margin    float64   `json:"margin,omitempty"`
	HasMargin bool      `json:"has_margin,omitempty"`
	Final     bool      `json:"final,omitempty"`
}

// Contribution is one update waiting to be aggregated: its vectors and the
// scalars it released (UpdateIn).
type Contribution struct {
	Client     string    `json:"client"`
	Weight     float64   `json:"weight"` // sample weight times staleness factor
	Params     []float32 `json:"params,omitempty"`
	Grad       []float32 `json:"grad,omitempty"`
	Rho        float64   `json:"rho,omitempty"`
	HasRho     bool      `json:"has_rho,omitempty"`
	RhoVersion uint64    `json:"rho_version,omitempty"`
	Margin     float64   `json:"margin,omitempty"`
	HasMargin  bool      `json:"has_margin,omitempty"`
}

// Snapshot returns a deep copy of the machine's state. It panics if the
// strategy cannot export its state, which only a broken strategy does (its
// state is validated finite on the way in).
func (m *Machine) Snapshot() Snapshot {
	st, err := m.strategy.State()
	if err != nil {
		panic(fmt.Sprintf("aggregator: snapshot: %v", err))
	}
	s := Snapshot{
		Version: SnapshotVersion, Config: m.cfg,
		SchemaHash: m.schemaHash, NumParams: m.numParams,
		Round: m.round, Open: m.open, OpenedAt: m.openedAt, Deadline: m.deadline, Closed: m.closed,
		ModelRound: m.modelRound, Strategy: st, Finished: m.finished,
	}
	s.Config.LPSFed.Reference = nil // code, not state: Restore's caller supplies it
	for _, p := range m.models {
		s.Models = append(s.Models, ModelSnapshot{To: p.To, Round: p.Round, Params: slices.Clone(p.Params), Grad: slices.Clone(p.Grad),
			Margin: p.Margin, HasMargin: p.HasMargin, Final: p.Final})
	}
	for id, c := range m.clients {
		s.Clients = append(s.Clients, ClientSnapshot{ID: id, Weight: c.weight, Live: c.live, Left: c.left, Missed: c.missed})
	}
	sort.Slice(s.Clients, func(a, b int) bool { return s.Clients[a].ID < s.Clients[b].ID })
	for _, c := range m.pending {
		s.Pending = append(s.Pending, exportContribution(c))
	}
	sort.Slice(s.Pending, func(a, b int) bool { return s.Pending[a].Client < s.Pending[b].Client })
	for _, c := range m.stale {
		s.Stale = append(s.Stale, exportContribution(c))
	}
	for k := range m.staleBy {
		s.StaleBy = append(s.StaleBy, k)
	}
	sort.Strings(s.StaleBy)
	if len(m.heads) > 0 {
		s.Heads = m.Heads()
	}
	if m.dl.on() {
		s.DeadlinePolicy = &DeadlineSnapshot{Samples: slices.Clone(m.dl.samples), Extensions: m.extensions, Starved: m.starved}
	}
	return s
}

// exportContribution and importContribution copy a contribution's vectors.
func exportContribution(c Contribution) Contribution {
	c.Params, c.Grad = slices.Clone(c.Params), slices.Clone(c.Grad)
	return c
}

func importContribution(c Contribution) Contribution { return exportContribution(c) }

// Restore rebuilds a machine from a snapshot. The snapshot is validated
// (version, configuration, internal consistency) and copied: the machine
// shares no memory with it.
func Restore(s Snapshot) (*Machine, error) {
	const op = "aggregator: restore snapshot"
	if s.Version != SnapshotVersion {
		return nil, fmt.Errorf("%s: version %d, want %d", op, s.Version, SnapshotVersion)
	}
	m, err := NewMachine(s.Config)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := checkSnapshotValues(s); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if s.Open && s.Round == 0 {
		return nil, fmt.Errorf("%s: round 0 cannot be open", op)
	}
	if s.Closed > s.Round {
		return nil, fmt.Errorf("%s: %d rounds closed but round %d is the latest", op, s.Closed, s.Round)
	}
	for _, c := range s.Clients {
		if _, dup := m.clients[c.ID]; dup {
			return nil, fmt.Errorf("%s: client %q listed twice", op, c.ID)
		}
		m.clients[c.ID] = &clientState{weight: c.Weight, live: c.Live, left: c.Left, missed: c.Missed}
	}
	for _, c := range s.Pending {
		if _, known := m.clients[c.Client]; !known {
			return nil, fmt.Errorf("%s: pending update of unknown client %q", op, c.Client)
		}
		if _, dup := m.pending[c.Client]; dup {
			return nil, fmt.Errorf("%s: two pending updates of client %q", op, c.Client)
		}
		m.pending[c.Client] = importContribution(c)
	}
	for _, c := range s.Stale {
		m.stale = append(m.stale, importContribution(c))
	}
	for _, k := range s.StaleBy {
		m.staleBy[k] = true
	}
	if err := m.restoreModels(s); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	ids := make([]string, 0, len(s.Clients))
	for _, c := range s.Clients {
		ids = append(ids, c.ID)
	}
	sort.Strings(ids)
	if err := m.strategy.SetState(s.Strategy, ids); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if c, ok := m.strategy.(interface{ checkNumParams(int) error }); ok {
		if err := c.checkNumParams(s.NumParams); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	}
	if err := m.restoreHeads(s.Heads); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if k := m.cfg.Contract; k.Fixed() && (s.SchemaHash != k.SchemaHash || s.NumParams != k.NumParams) {
		return nil, fmt.Errorf("%s: checkpoint of schema %s/%d, the job's contract is %s/%d", op, s.SchemaHash, s.NumParams, k.SchemaHash, k.NumParams)
	}
	m.schemaHash, m.numParams = s.SchemaHash, s.NumParams
	m.round, m.open, m.openedAt, m.deadline, m.closed = s.Round, s.Open, s.OpenedAt, s.Deadline, s.Closed
	m.modelRound = s.ModelRound
	m.finished = s.Finished
	if d := s.DeadlinePolicy; d != nil {
		if err := m.dl.restore(*d); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		m.extensions, m.starved = d.Extensions, d.Starved
	}
	return m, nil
}

// restoreModels takes the snapshot's latest models back: a global model
// alone or personalized ones for known clients, once each, in order, of
// rounds no later than ModelRound.
func (m *Machine) restoreModels(s Snapshot) error {
	if s.ModelRound > s.Round {
		return fmt.Errorf("models of round %d in round %d", s.ModelRound, s.Round)
	}
	for i, p := range s.Models {
		switch {
		case p.To == "" && len(s.Models) > 1:
			return fmt.Errorf("a global model beside %d others", len(s.Models)-1)
		case p.To != "" && m.clients[p.To] == nil:
			return fmt.Errorf("a model for unknown client %q", p.To)
		case i > 0 && s.Models[i-1].To >= p.To:
			return fmt.Errorf("models not sorted and unique at %q", p.To)
		case p.Round > s.ModelRound || p.Round == 0:
			return fmt.Errorf("a model of round %d, the latest is %d", p.Round, s.ModelRound)
		case p.HasMargin && !finite(p.Margin) || !p.HasMargin && p.Margin != 0:
			return fmt.Errorf("model margin %v (has %v)", p.Margin, p.HasMargin)
		}
		m.models = append(m.models, PublishModel{To: p.To, Round: p.Round, Params: slices.Clone(p.Params), Grad: slices.Clone(p.Grad),
			Margin: p.Margin, HasMargin: p.HasMargin, Final: p.Final})
	}
	return nil
}

// Encode serializes the snapshot (JSON: float32 values round-trip exactly
// through their shortest decimal form, and a checkpoint stays readable).
func (s Snapshot) Encode() ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("aggregator: encode snapshot: %w", err)
	}
	return b, nil
}

// DecodeSnapshot parses what Encode wrote; Restore validates it.
func DecodeSnapshot(b []byte) (Snapshot, error) {
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return Snapshot{}, fmt.Errorf("aggregator: decode snapshot: %w", err)
	}
	return s, nil
}

// LiveClients lists the clients counted towards the quorum, sorted.
func (s Snapshot) LiveClients() []string {
	var ids []string
	for _, c := range s.Clients {
		if c.Live {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// GlobalModel is the latest global model's parameters, nil when there is
// none (no round aggregated yet, or a personalizing strategy).
func (s Snapshot) GlobalModel() []float32 {
	if len(s.Models) == 1 && s.Models[0].To == "" {
		return s.Models[0].Params
	}
	return nil
}
