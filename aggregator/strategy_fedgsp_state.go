package aggregator

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// fedgspState is FedGSP's durable state (Snapshot.Strategy). The graphs
// and descriptors are stored as little-endian bytes (base64 in JSON):
// exact, and about a third of the size of decimal text. The descriptors
// are kept only while the graphs learn, so a frozen job's state is the
// K+1 graphs of M² weights alone.
type fedgspState struct {
	IDs       []string          `json:"ids,omitempty"`
	Orders    int               `json:"orders,omitempty"`
	Principal int               `json:"principal,omitempty"`
	Dim       int               `json:"dim,omitempty"`
	Graphs    [][]byte          `json:"graphs,omitempty"` // float64 LE, len(IDs)² each
	Frozen    bool              `json:"frozen,omitempty"`
	Desc      []fedgspDescState `json:"desc,omitempty"` // sorted by ID
}

type fedgspDescState struct {
	ID   string `json:"id"`
	Rows []byte `json:"rows"` // float32 LE
}

func (s *fedgspStrategy) State() (json.RawMessage, error) {
	st := fedgspState{IDs: slices.Clone(s.ids), Orders: s.orders, Principal: s.principal, Dim: s.dim, Frozen: s.frozen}
	for _, w := range s.graphs {
		b := make([]byte, 0, 8*len(w))
		for _, x := range w {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		st.Graphs = append(st.Graphs, b)
	}
	for _, id := range sortedKeys(s.desc) {
		rows := s.desc[id].Rows
		b := make([]byte, 0, 4*len(rows))
		for _, x := range rows {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		st.Desc = append(st.Desc, fedgspDescState{ID: id, Rows: b})
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("fedgsp state: %w", err)
	}
	return b, nil
}

// SetState restores what State wrote, after checking it whole: clients
// that joined, sorted and unique; a layout within bounds; graphs of the
// right count and size with finite non-negative weights; descriptors of
// the layout's shape with finite values, none once frozen.
func (s *fedgspStrategy) SetState(raw json.RawMessage, clients []string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil // a machine snapshotted before anything happened
	}
	var st fedgspState
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields() // another strategy's state is refused, not half read
	if err := dec.Decode(&st); err != nil {
		return fmt.Errorf("fedgsp state: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("fedgsp state: data after the state")
	}
	bad := func(format string, args ...any) error { return fmt.Errorf("fedgsp state: "+format, args...) }
	if s.cfg.Orders > 0 && (st.Orders != s.cfg.Orders || st.Dim != s.cfg.Dim) {
		return bad("layout %d×%d, the job is configured with %d×%d", st.Orders, st.Dim, s.cfg.Orders, s.cfg.Dim)
	}
	for i, id := range st.IDs {
		switch {
		case i > 0 && st.IDs[i-1] >= id:
			return bad("clients not sorted and unique at %q", id)
		case !slices.Contains(clients, id):
			return bad("client %q never joined", id)
		}
	}
	n := len(st.IDs)
	switch {
	case st.Orders < 0 || st.Orders > maxOrders || st.Principal < 0 || st.Dim < 0 || (st.Orders > 0) != (st.Dim > 0) ||
		st.Principal > 0 && st.Orders == 0 || st.Dim > math.MaxInt32 || st.Principal > math.MaxInt32:
		return bad("layout of %d orders, %d directions, dimension %d", st.Orders, st.Principal, st.Dim)
	case len(st.Graphs) != 0 && len(st.Graphs) != 1+st.Orders:
		return bad("%d graphs for %d orders", len(st.Graphs), st.Orders)
	case st.Frozen && len(st.Desc) > 0:
		return bad("descriptors kept after the graphs froze")
	case len(st.Desc) > 0 && st.Principal == 0:
		return bad("descriptors without their shape")
	}
	graphs := make([][]float64, 0, len(st.Graphs))
	for g, b := range st.Graphs {
		if len(b) != 8*n*n {
			return bad("graph %d of %d bytes for %d clients", g, len(b), n)
		}
		w := make([]float64, n*n)
		for i := range w {
			w[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			if !(w[i] >= 0) || math.IsInf(w[i], 1) {
				return bad("graph %d weight %d is %v", g, i, w[i])
			}
		}
		graphs = append(graphs, w)
	}
	desc := map[string]Descriptor{}
	for i, d := range st.Desc {
		switch {
		case i > 0 && st.Desc[i-1].ID >= d.ID:
			return bad("descriptors not sorted and unique at %q", d.ID)
		case !slices.Contains(st.IDs, d.ID):
			return bad("descriptors of %q, not in the graphs", d.ID)
		case len(d.Rows)%4 != 0:
			return bad("descriptors of %q: %d bytes", d.ID, len(d.Rows))
		}
		rows := make([]float32, len(d.Rows)/4)
		for j := range rows {
			rows[j] = math.Float32frombits(binary.LittleEndian.Uint32(d.Rows[4*j:]))
		}
		dd := Descriptor{Orders: st.Orders, Principal: st.Principal, Dim: st.Dim, Rows: rows}
		if err := dd.check(); err != nil {
			return bad("client %q: %v", d.ID, err)
		}
		desc[d.ID] = dd
	}
	if len(graphs) == 0 {
		graphs = nil
	}
	s.ids, s.orders, s.principal, s.dim = slices.Clone(st.IDs), st.Orders, st.Principal, st.Dim
	s.graphs, s.desc, s.frozen = graphs, desc, st.Frozen
	return nil
}
