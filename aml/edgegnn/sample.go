package edgegnn

import (
	"fmt"
	"math/rand/v2"

	"graphfed/gnn"
)

// Batch is the computation graph of an L-layer edge model for a set
// of seed edges: nested node and edge sets, one message block per layer,
// and the inputs. Rows are batch-local; Nodes and Edges map them to the
// graph's ids.
//
// Nodes are ordered so that every layer's targets are a prefix: layer l
// (1..L) computes embeddings for Nodes[:NumNodes[l]] from the layer-(l−1)
// embeddings of Nodes[:NumNodes[l−1]], and NumNodes[L] nodes are the seed
// endpoints. Edges are ordered likewise: Edges[:NumEdges[L]] are the seeds,
// layer l updates the embeddings of Edges[:NumEdges[l]], and the input
// edge features cover all of Edges (NumEdges[0]). Both endpoints of an
// edge whose embedding layer l updates are among layer l's nodes.
type Batch struct {
	Nodes    []int32 // graph node id of each local node row
	NumNodes []int   // len L+1, non-increasing
	Degree   []int32 // visible degree (Index.Degree) of each node
	Edges    []int32 // graph edge id of each local edge row
	NumEdges []int   // len L+1, non-increasing
	// EdgeSrc and EdgeDst are the local node rows of each edge's source
	// and destination.
	EdgeSrc, EdgeDst []int32
	// Blocks[l−1] holds the messages of layer l.
	Blocks []Block
	// Inputs: NumNodes[0]×NodeFeatureDim node features and
	// NumEdges[0]×EdgeFeatureDim edge features, the latter either dense
	// (EdgeX) or in slots (EdgeSlots, which SetInputs fills, leaving
	// EdgeX nil; rows past NumEdges[1] only once SlotRows.Complete runs,
	// which the model calls when it reads them); a model reads EdgeSlots
	// when it is set.
	NodeX, EdgeX *gnn.Tensor
	EdgeSlots    *SlotRows
	// EdgeOrd is NumEdges[0]×EdgeOrdDim order features (ports, time
	// deltas) when the featurizer has them (Featurizer.EnableOrder),
	// else nil.
	EdgeOrd *gnn.Tensor
}

// Block is one layer's messages, by direction. In sends each
// target v a message from u over every sampled edge u→v; Out sends each
// target u a message from w over every sampled edge u→w. An edge between
// two targets carries a message each way, a self-transfer one in each
// list.
type Block struct {
	In, Out Messages
}

// Messages lists messages by target row: target t receives, for k in
// [Ptr[t], Ptr[t+1]), the embedding of node row Src[k] and of edge row
// Edge[k]. Src rows are below the layer's source count NumNodes[l−1] and
// Edge rows below its input edge count NumEdges[l−1].
type Messages struct {
	Ptr       []int // len targets+1
	Src, Edge []int32
}

// Layers is the number of message-passing layers L the batch was sampled
// for.
func (b *Batch) Layers() int { return len(b.Blocks) }

// NumSeeds is the number of seed edges, Edges[:NumSeeds()].
func (b *Batch) NumSeeds() int { return b.NumEdges[len(b.NumEdges)-1] }

// Rows returns, ascending, the local rows r < NumNodes[l] whose graph node
// Nodes[r] satisfies keep: for instance the cross-client neighbours whose
// layer-l embeddings an EmbeddingOverride should supply.
func (b *Batch) Rows(l int, keep func(node int32) bool) []int32 {
	var rows []int32
	for r, v := range b.Nodes[:b.NumNodes[l]] {
		if keep(v) {
			rows = append(rows, int32(r))
		}
	}
	return rows
}

// SetInputs fills NodeX from the rows of nodeX (N×NodeFeatureDim, by graph
// node id, e.g. NodeFeatures) and EdgeSlots (and EdgeOrd, when f has order
// features) from f, and sets EdgeX to nil. EdgeSlots' rows past
// NumEdges[1] are written when first needed (SlotRows.Complete), so f
// must not change until the batch has been through the model.
func (b *Batch) SetInputs(nodeX *gnn.Tensor, f *Featurizer) {
	b.NodeX = edgeReuse(b.NodeX, len(b.Nodes), nodeX.Cols)
	if c := nodeX.Cols; c == NodeFeatureDim {
		// Rows of five, element by element: a copy call per row cost more
		// than the copy, and so does assigning the row as a [5]float32,
		// which compiles to a 20-byte memmove call. (The constants stop the
		// build should NodeFeatureDim change.)
		const _, _ = uint(NodeFeatureDim - 5), uint(5 - NodeFeatureDim)
		for r, v := range b.Nodes {
			d, s := (*[NodeFeatureDim]float32)(b.NodeX.Data[r*c:]), (*[NodeFeatureDim]float32)(nodeX.Data[int(v)*c:])
			d[0], d[1], d[2], d[3], d[4] = s[0], s[1], s[2], s[3], s[4]
		}
	} else {
		for r, v := range b.Nodes {
			copy(b.NodeX.Row(r), nodeX.Row(int(v)))
		}
	}
	b.EdgeX = nil
	if b.EdgeSlots == nil {
		b.EdgeSlots = new(SlotRows)
	}
	// Only the edges a layer reads directly (its edge updates) need slots
	// now: a folding GIN layer reads the rest from f's records.
	n := len(b.Edges)
	if len(b.NumEdges) > 1 && b.NumEdges[0] == n {
		n = min(b.NumEdges[1], n)
	}
	f.fillSlotsPrefix(b.EdgeSlots, b.Edges, n)
	if !f.HasOrder() {
		b.EdgeOrd = nil
		return
	}
	b.EdgeOrd = edgeReuse(b.EdgeOrd, len(b.Edges), EdgeOrdDim)
	f.FillOrder(b.EdgeOrd, b.Edges)
}

// Sampler draws Batches from an Index: seed edges, their
// endpoints, then per layer, from the seeds outward, up to FanOut[h] of
// the incoming and up to FanOut[h] of the outgoing edges of every node
// reached so far (uniformly without replacement; all of them when the
// fan-out is negative). The batch has len(FanOut) layers; FanOut[0] is the
// hop nearest the seeds (the last layer's messages). With every fan-out
// negative a batch is the full L-hop neighbourhood, and no rng is needed.
//
// A sampler keeps scratch space sized to the graph; it is not safe for
// concurrent use.
type Sampler struct {
	idx    *Index
	fanOut []int

	own *SampleScratch // Sample's, allocated on first use
	scr *SampleScratch // the one of the Sample in progress
}

// SampleScratch is a sampler's working space, sized to the largest graph
// it served: per node and per edge of the graph, the batch row and the
// stamp of the batch that row belongs to, side by side (one cache miss per
// lookup instead of two on graphs far larger than the cache). It may serve
// any number of samplers, one Sample at a time (Worker carries one, so
// that a process's banks hold GOMAXPROCS of them rather than one per
// stage): the stamp is the scratch's, so one sampler's rows are stale to
// the next.
type SampleScratch struct {
	stamp   uint32
	nodeRow []sampleRow
	edgeRow []sampleRow
	chosen  []int
	cand    []int32    // a hop's picked adjacency positions, by target, in then out
	picks   []adjEntry // the entries at cand
	sink    uint32     // keeps the touching passes of hop from being optimised away
}

// fit grows the scratch to n nodes and m edges; new rows are stale.
func (c *SampleScratch) fit(n, m int) {
	if len(c.nodeRow) < n {
		c.nodeRow = make([]sampleRow, n)
	}
	if len(c.edgeRow) < m {
		c.edgeRow = make([]sampleRow, m)
	}
}

// sampleRow is a node's or edge's row in the batch stamped stamp.
type sampleRow struct {
	stamp uint32
	row   int32
}

// NewSampler returns a sampler over idx with the given fan-outs, one
// per layer (DefaultFanOut is [10, 10]).
func NewSampler(idx *Index, fanOut []int) (*Sampler, error) {
	if len(fanOut) == 0 {
		return nil, fmt.Errorf("gnn: new edge sampler: no layers")
	}
	return &Sampler{idx: idx, fanOut: append([]int(nil), fanOut...)}, nil
}

// DefaultFanOut is the default per-layer fan-out of the neighbour sampler.
func DefaultFanOut() []int { return []int{10, 10} }

// Index returns the index the sampler walks.
func (s *Sampler) Index() *Index { return s.idx }

// Sample fills b (reusing its slices) with the computation graph of seeds.
// It returns an error, leaving b unusable, for a seed outside the graph or
// a repeated seed. The result is a deterministic function of the seeds and
// the state of rng.
func (s *Sampler) Sample(b *Batch, seeds []int32, rng *rand.Rand) error {
	if s.own == nil {
		s.own = new(SampleScratch)
	}
	return s.SampleOn(s.own, b, seeds, rng)
}

// SampleOn is Sample working in scr instead of the sampler's own scratch
// (which it then never allocates).
func (s *Sampler) SampleOn(scr *SampleScratch, b *Batch, seeds []int32, rng *rand.Rand) error {
	scr.fit(s.idx.NumNodes(), s.idx.NumGraphEdges())
	s.scr = scr
	defer func() { s.scr = nil }()
	L := len(s.fanOut)
	s.nextStamp()
	b.Nodes, b.Degree, b.Edges = b.Nodes[:0], b.Degree[:0], b.Edges[:0]
	b.EdgeSrc, b.EdgeDst = b.EdgeSrc[:0], b.EdgeDst[:0]
	b.NumNodes = sampleResize(b.NumNodes, L+1)
	b.NumEdges = sampleResize(b.NumEdges, L+1)
	if cap(b.Blocks) < L {
		b.Blocks = make([]Block, L)
	}
	b.Blocks = b.Blocks[:L]
	for _, e := range seeds {
		if e < 0 || int(e) >= s.idx.NumGraphEdges() {
			return fmt.Errorf("gnn: sample edges: seed %d outside [0,%d)", e, s.idx.NumGraphEdges())
		}
		if s.scr.edgeRow[e].stamp == s.scr.stamp {
			return fmt.Errorf("gnn: sample edges: seed %d repeated", e)
		}
		s.addEdge(b, e)
	}
	b.NumNodes[L], b.NumEdges[L] = len(b.Nodes), len(b.Edges)
	for l := L; l >= 1; l-- {
		f := s.fanOut[L-l]
		blk := &b.Blocks[l-1]
		nt := b.NumNodes[l]
		s.hop(b, blk, nt, f, rng)
		b.NumNodes[l-1], b.NumEdges[l-1] = len(b.Nodes), len(b.Edges)
	}
	return nil
}

func (s *Sampler) reset(m *Messages, targets int) {
	m.Ptr = sampleResize(m.Ptr, targets+1)
	m.Ptr[0] = 0
	m.Src, m.Edge = m.Src[:0], m.Edge[:0]
}

// nextStamp starts a new batch: rows stamped with an older value are
// stale. On wrap-around the stamps are cleared.
func (s *Sampler) nextStamp() {
	s.scr.stamp++
	if s.scr.stamp == 0 {
		clear(s.scr.nodeRow)
		clear(s.scr.edgeRow)
		s.scr.stamp = 1
	}
}

// addNode returns v's local row, appending v if new.
func (s *Sampler) addNode(b *Batch, v int32) int32 {
	if p := &s.scr.nodeRow[v]; p.stamp == s.scr.stamp {
		return p.row
	}
	r := int32(len(b.Nodes))
	s.scr.nodeRow[v] = sampleRow{s.scr.stamp, r}
	b.Nodes = append(b.Nodes, v)
	b.Degree = append(b.Degree, s.idx.deg[v])
	return r
}

// addEdge returns e's local row, appending e (and its endpoints) if new.
func (s *Sampler) addEdge(b *Batch, e int32) int32 {
	if p := &s.scr.edgeRow[e]; p.stamp == s.scr.stamp {
		return p.row
	}
	r := int32(len(b.Edges))
	s.scr.edgeRow[e] = sampleRow{s.scr.stamp, r}
	src, dst := s.idx.Endpoints(e)
	b.Edges = append(b.Edges, e)
	b.EdgeSrc = append(b.EdgeSrc, s.addNode(b, src))
	b.EdgeDst = append(b.EdgeDst, s.addNode(b, dst))
	return r
}

// pickAt appends the positions in an adjacency array of up to f of the d
// entries starting at lo (all of them when f < 0 or d ≤ f), drawn uniformly
// without replacement by Floyd's algorithm, and returns dst. The draws
// depend on d and f only, so positions can be drawn for a whole hop before
// any entry is read.
func (s *Sampler) pickAt(dst []int32, lo, d, f int, rng *rand.Rand) []int32 {
	if f < 0 || d <= f {
		for p := lo; p < lo+d; p++ {
			dst = append(dst, int32(p))
		}
		return dst
	}
	chosen := s.scr.chosen[:0]
	for j := d - f; j < d; j++ {
		t := rng.IntN(j + 1)
		for _, c := range chosen {
			if c == t {
				t = j
				break
			}
		}
		chosen = append(chosen, t)
	}
	s.scr.chosen = chosen
	for _, c := range chosen {
		dst = append(dst, int32(lo+c))
	}
	return dst
}

// sampleResize returns x with length n, reallocating when short; contents
// are unspecified.
func sampleResize(x []int, n int) []int {
	if cap(x) < n {
		return make([]int, n)
	}
	return x[:n]
}
