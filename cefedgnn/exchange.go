package cefedgnn

import (
	"fmt"
	"math"
	"slices"

	"graphfed/gnn"
	"graphfed/graph"
)

// cefedHalo is a client's view of its cross-client neighbourhood: which
// remote nodes its nodes are adjacent to, who hosts them, the embeddings
// received for them, and the layer-2 mean operator over local and received
// neighbours. Remote nodes get slots 0..M-1 in ascending global id.
type cefedHalo struct {
	hidden int
	peers  []string         // client index -> client id
	global []int32          // local id -> global id
	adj    *graph.CSR       // N×N local adjacency
	slot   map[int32]int32  // remote global id -> slot
	remote []int32          // slot -> remote global id
	owner  []int32          // slot -> client index hosting it
	nbr    [][]int32        // local id -> its remote slots, ascending
	cache  *gnn.Tensor      // M×H received embeddings (zero until received)
	have   []bool           // M: slot has a received embedding
	bound  map[int][]int32  // client index -> our local nodes adjacent to it, by ascending global id
	names  []string         // Neighbours(), sorted
	index  map[string]int32 // client id -> client index
	prop   *gnn.Sparse      // N×(N+M) layer-2 mean; nil when stale
}

// newCEFedHalo indexes cg's cross edges. peers[i] names client index i;
// every remote owner must have a name, and names must be unique.
func newCEFedHalo(cg *graph.ClientGraph, peers []string, hidden int) (*cefedHalo, error) {
	const op = "agent: cefedgnn: cross edges"
	h := &cefedHalo{
		hidden: hidden,
		peers:  peers,
		global: cg.Global,
		adj:    cg.Data.Adj,
		slot:   map[int32]int32{},
		nbr:    make([][]int32, cg.Data.N()),
		bound:  map[int][]int32{},
		index:  make(map[string]int32, len(peers)),
	}
	for i, p := range peers {
		if _, dup := h.index[p]; dup {
			return nil, fmt.Errorf("%s: peer id %q names clients %d and %d", op, p, h.index[p], i)
		}
		h.index[p] = int32(i)
	}
	if len(cg.Global) != cg.Data.N() {
		return nil, fmt.Errorf("%s: %d global ids for %d nodes", op, len(cg.Global), cg.Data.N())
	}
	remotes := map[int32]int32{} // global id -> owner
	for _, e := range cg.Cross {
		switch {
		case e.Local < 0 || int(e.Local) >= cg.Data.N():
			return nil, fmt.Errorf("%s: local node %d outside [0,%d)", op, e.Local, cg.Data.N())
		case e.RemoteOwner < 0 || int(e.RemoteOwner) >= len(peers):
			return nil, fmt.Errorf("%s: remote owner %d has no peer id (%d peers)", op, e.RemoteOwner, len(peers))
		case int(e.RemoteOwner) == cg.Client:
			return nil, fmt.Errorf("%s: edge %d-%d crosses to this client (%d)", op, e.Local, e.Remote, cg.Client)
		}
		if o, ok := remotes[e.Remote]; ok && o != e.RemoteOwner {
			return nil, fmt.Errorf("%s: remote node %d owned by clients %d and %d", op, e.Remote, o, e.RemoteOwner)
		}
		remotes[e.Remote] = e.RemoteOwner
	}
	ids := make([]int32, 0, len(remotes))
	for g := range remotes {
		ids = append(ids, g)
	}
	slices.Sort(ids)
	h.remote = ids
	h.owner = make([]int32, len(ids))
	for s, g := range ids {
		h.slot[g] = int32(s)
		h.owner[s] = remotes[g]
	}
	h.cache = gnn.New(len(ids), hidden)
	h.have = make([]bool, len(ids))

	for _, e := range cg.Cross {
		h.nbr[e.Local] = append(h.nbr[e.Local], h.slot[e.Remote])
		h.bound[int(e.RemoteOwner)] = append(h.bound[int(e.RemoteOwner)], e.Local)
	}
	for v, s := range h.nbr {
		slices.Sort(s)
		h.nbr[v] = slices.Compact(s)
	}
	byGlobal := func(a, b int32) int { return int(cg.Global[a]) - int(cg.Global[b]) }
	for c, locals := range h.bound {
		slices.SortFunc(locals, byGlobal)
		h.bound[c] = slices.Compact(locals)
		h.names = append(h.names, peers[c])
	}
	slices.Sort(h.names)
	return h, nil
}

// propagation returns P (N×(N+M)): row v is the mean over v's local
// neighbours (columns 0..N-1) and its remote neighbours with a received
// embedding (column N+slot). It is rebuilt after Receive changed which
// remote rows are present.
func (h *cefedHalo) propagation() *gnn.Sparse {
	if h.prop != nil {
		return h.prop
	}
	n := h.adj.Rows
	m := &graph.CSR{Rows: n, Cols: n + len(h.have), RowPtr: make([]int, 1, n+1)}
	for v := range n {
		start := len(m.ColIdx)
		cols, _ := h.adj.Row(v)
		m.ColIdx = append(m.ColIdx, cols...)
		for _, s := range h.nbr[v] {
			if h.have[s] {
				m.ColIdx = append(m.ColIdx, int32(n)+s)
			}
		}
		if deg := len(m.ColIdx) - start; deg > 0 {
			w := float32(1 / float64(deg))
			for range deg {
				m.Val = append(m.Val, w)
			}
		}
		m.RowPtr = append(m.RowPtr, len(m.ColIdx))
	}
	if m.Val == nil {
		m.Val = []float32{}
	}
	p, err := gnn.NewSparse(m)
	if err != nil {
		// Columns are sorted by construction (local ids, then slots in
		// ascending order), so this is a programming error.
		panic(fmt.Sprintf("agent: cefedgnn: layer-2 propagation: %v", err))
	}
	h.prop = p
	return p
}

// Neighbours implements Exchanger: the ids of the clients hosting a node
// adjacent to one of ours, sorted.
func (l *Learner) Neighbours() []string { return slices.Clone(l.halo.names) }

// Boundary implements Exchanger: the global ids (ascending) of our nodes
// adjacent to a node of client to, and their latest hidden embeddings H1
// (len(ids)×Hidden, row-major) from the moving-average state, which is
// what the neighbour's second layer aggregates. Before the first training
// step the embeddings come from a fresh forward pass. An unknown or
// non-adjacent client gets no rows.
func (l *Learner) Boundary(to string) ([]int64, []float32, int) {
	dim := l.cfg.Hidden
	c, ok := l.halo.index[to]
	if !ok {
		return nil, nil, dim
	}
	locals := l.halo.bound[int(c)]
	if len(locals) == 0 {
		return nil, nil, dim
	}
	h1 := l.currentH1()
	ids := make([]int64, len(locals))
	rows := make([]float32, 0, len(locals)*dim)
	for k, v := range locals {
		ids[k] = int64(l.halo.global[v])
		rows = append(rows, h1.Row(int(v))...)
	}
	return ids, rows, dim
}

// Receive implements Exchanger: it stores the rows (len(ids)×dim,
// row-major, already normalized and noised by the sender's gate) for the
// cross-client neighbours among ids that client from hosts, replacing any
// earlier value; other ids are ignored. A dim other than Hidden, a length
// other than len(ids)·dim or a non-finite value is an error and changes
// nothing.
func (l *Learner) Receive(from string, ids []int64, rows []float32, dim int) error {
	const op = "agent: cefedgnn: receive"
	h := l.halo
	if dim != h.hidden {
		return fmt.Errorf("%s from %q: embedding width %d, model has %d", op, from, dim, h.hidden)
	}
	if len(rows) != len(ids)*dim {
		return fmt.Errorf("%s from %q: %d values for %d ids of width %d", op, from, len(rows), len(ids), dim)
	}
	for i, v := range rows {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s from %q: value %d (id %d) is not finite", op, from, i, ids[i/dim])
		}
	}
	c, ok := h.index[from]
	if !ok {
		return nil
	}
	for k, g := range ids {
		if g < math.MinInt32 || g > math.MaxInt32 {
			continue
		}
		s, ok := h.slot[int32(g)]
		if !ok || h.owner[s] != c {
			continue
		}
		copy(h.cache.Row(int(s)), rows[k*dim:(k+1)*dim])
		if !h.have[s] {
			h.have[s] = true
			h.prop = nil
		}
	}
	return nil
}
