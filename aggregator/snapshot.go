package aggregator

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"
)

// SnapshotVersion is the layout of Snapshot this build writes and reads.
const SnapshotVersion = 1

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
	Model      []float32        `json:"model,omitempty"`
	Grad       []float32        `json:"grad,omitempty"`
	ModelRound uint64           `json:"model_round"`
	// Pending are the open round's updates, sorted by client; Stale the
	// late updates folded into it, in arrival order; StaleBy the
	// "client/round" keys of every late update ever folded in, sorted.
	Pending  []Contribution `json:"pending,omitempty"`
	Stale    []Contribution `json:"stale,omitempty"`
	StaleBy  []string       `json:"stale_by,omitempty"`
	Finished bool           `json:"finished"`
}

// ClientSnapshot is one client's standing with the aggregator.
type ClientSnapshot struct {
	ID     string  `json:"id"`
	Weight float64 `json:"weight"`
	Live   bool    `json:"live"`
	Left   bool    `json:"left"`
	Missed int     `json:"missed"`
}

// Contribution is one update waiting to be aggregated.
type Contribution struct {
	Client string    `json:"client"`
	Weight float64   `json:"weight"` // sample weight times staleness factor
	Params []float32 `json:"params,omitempty"`
	Grad   []float32 `json:"grad,omitempty"`
}

// Snapshot returns a deep copy of the machine's state.
func (m *Machine) Snapshot() Snapshot {
	s := Snapshot{
		Version: SnapshotVersion, Config: m.cfg,
		SchemaHash: m.schemaHash, NumParams: m.numParams,
		Round: m.round, Open: m.open, OpenedAt: m.openedAt, Deadline: m.deadline, Closed: m.closed,
		Model: slices.Clone(m.model), Grad: slices.Clone(m.grad), ModelRound: m.modelRound,
		Finished: m.finished,
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
	return s
}

func exportContribution(c contribution) Contribution {
	return Contribution{Client: c.client, Weight: c.weight, Params: slices.Clone(c.params), Grad: slices.Clone(c.grad)}
}

func importContribution(c Contribution) contribution {
	return contribution{client: c.Client, weight: c.Weight, params: slices.Clone(c.Params), grad: slices.Clone(c.Grad)}
}

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
	m.schemaHash, m.numParams = s.SchemaHash, s.NumParams
	m.round, m.open, m.openedAt, m.deadline, m.closed = s.Round, s.Open, s.OpenedAt, s.Deadline, s.Closed
	m.model, m.grad, m.modelRound = slices.Clone(s.Model), slices.Clone(s.Grad), s.ModelRound
	m.finished = s.Finished
	return m, nil
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
