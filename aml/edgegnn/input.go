package edgegnn

import (
	"math"

	"graphfed/gnn"
)

// SlotRows is a sparse matrix stored as a fixed number K of (column,
// value) slots per row, columns ascending within a row; every column not
// in a row's slots is zero, and a slot may hold a zero. Edge inputs are
// this shape: of the EdgeFeatureDim columns, the one-hot blocks put a
// single 1 each, so a row has at most edgeInputSlots non-zeros. The edge
// encoder then multiplies by a weight matrix as a sum of K weight rows
// (an embedding lookup for the one-hot columns) and its weight gradient
// adds into those K rows only, instead of scanning a mostly zero dense
// row each time; the featurizer writes K slots instead of clearing and
// filling EdgeFeatureDim columns.
type SlotRows struct {
	Rows, Cols, K int
	Idx           []int32   // Rows×K columns
	Val           []float32 // Rows×K values

	ptr  []int // rowStarts, i·K
	sink uint8 // keeps FillSlots' touching pass from being optimised away
	// filled marks slots FillSlots wrote, whose columns are in range by
	// construction: CheckBatch then skips scanning them (the kernels
	// still check every column they read).
	filled bool
	// fixed[j] is slot j's column when every row has it there, −1 when
	// rows differ (one-hot slots); empty when unknown. FillSlots sets it
	// from the featurizer's layout, so that the first layer's raw sums
	// add the fixed slots as dense rows (foldSlotSums).
	fixed []int32
	// feat and edges are FillSlots' featurizer and edges (aliasing the
	// caller's slice), nil for slots built otherwise: a folding GIN layer
	// reads its messages' edge inputs from feat's records through them
	// (fold_records.go). The last tail rows are not written yet
	// (fillSlotsPrefix); Complete writes them.
	feat  *Featurizer
	edges []int32
	tail  int
}

// edgeInputSlots is the number of slots of an edge input row: the two log
// amounts, three one-hot blocks, four time phases, three flags and the
// time position.
const edgeInputSlots = 13

// reshape sets the shape to rows×cols with k slots per row, keeping the
// storage when it suffices; contents are unspecified.
func (s *SlotRows) reshape(rows, cols, k int) {
	s.Rows, s.Cols, s.K = rows, cols, k
	if n := rows * k; cap(s.Idx) < n || cap(s.Val) < n {
		s.Idx, s.Val = make([]int32, n, n+n/8), make([]float32, n, n+n/8) // spare as in edgeReuse
	}
	s.Idx, s.Val = s.Idx[:rows*k], s.Val[:rows*k]
	s.filled, s.fixed = false, s.fixed[:0]
	s.feat, s.edges, s.tail = nil, nil, 0
}

// Complete writes the rows a lazy fill left for later (Batch.SetInputs
// leaves those past NumEdges[1]); Dense and the model's products call it,
// and so must anyone reading Idx or Val directly.
func (s *SlotRows) Complete() {
	if s.tail == 0 {
		return
	}
	const K = edgeInputSlots
	for i := s.Rows - s.tail; i < s.Rows; i++ {
		s.feat.slots((*[K]int32)(s.Idx[i*K:]), (*[K]float32)(s.Val[i*K:]), s.edges[i])
	}
	s.tail = 0
}

// written is the number of leading rows whose slots hold their values.
func (s *SlotRows) written() int { return s.Rows - s.tail }

// Dense returns s as a Rows×Cols tensor.
func (s *SlotRows) Dense() *gnn.Tensor {
	s.Complete()
	t := gnn.New(s.Rows, s.Cols)
	for i := range s.Rows {
		r := t.Row(i)
		for k := i * s.K; k < (i+1)*s.K; k++ {
			r[s.Idx[k]] += s.Val[k]
		}
	}
	return t
}

// mul sets dst = s·w + bias (s Rows×Cols, w Cols×n, bias 1×n or nil for
// none). Slots are visited in column order, as MatMul visits a dense row's
// non-zeros, and zero slots add exact zeros, so the result equals MatMul on
// s.Dense() (then AddBias) bit for bit.
func (s *SlotRows) mul(dst, w, bias *gnn.Tensor) {
	s.Complete()
	n := w.Cols
	if w.Rows != s.Cols || dst.Rows != s.Rows || dst.Cols != n {
		gnn.ShapePanic("slot rows mul", "%dx%d (%d slots) · %v into %v", s.Rows, s.Cols, s.K, w, dst)
	}
	var b []float32
	if bias != nil {
		b = bias.Data
	}
	ptr := s.rowStarts()
	body := func(lo, hi int) {
		if !gatherRows(dst.Data, n, 0, ptr, s.Idx, s.Val, w.Data, n, lo, hi, b) {
			gnn.GatherSlotsBias(dst.Data[lo*n:hi*n], s.Idx[lo*s.K:hi*s.K], s.Val[lo*s.K:hi*s.K], s.K, w.Data, n, b)
		}
	}
	if p := gnn.ParallelWorkers(s.Rows, s.Rows*s.K*n); p > 1 {
		gnn.ParallelSplit(s.Rows, p, body)
		return
	}
	body(0, s.Rows)
}

// mulTAdd adds sᵀ·g into gw (Cols×n): every row of g is added, scaled,
// into the K weight-gradient rows its slots name. Row i is "target" i of
// one ScatterSparseRows pass with K messages each: the same kernel and
// order as a ScatterSparse call per row, without a call and a column
// check per row (one check covers the block).
func (s *SlotRows) mulTAdd(gw, g *gnn.Tensor) {
	s.Complete()
	n := g.Cols
	if gw.Rows != s.Cols || gw.Cols != n || g.Rows != s.Rows {
		gnn.ShapePanic("slot rows mul tn", "(%dx%d, %d slots)ᵀ · %v into %v", s.Rows, s.Cols, s.K, g, gw)
	}
	ptr := s.rowStarts()
	gnn.ScatterSparseRows(gw.Data, s.Idx, s.Val, ptr, g.Data, n, 0, n, 0, s.Rows)
}

// rowStarts returns the rows' first slots, i·K for i ≤ Rows: row i is
// "target" i of the row kernels, with K terms.
func (s *SlotRows) rowStarts() []int {
	if len(s.ptr) != s.Rows+1 || (s.Rows > 0 && s.ptr[1] != s.K) {
		ptr := s.ptr[:0]
		for i := range s.Rows + 1 {
			ptr = append(ptr, i*s.K)
		}
		s.ptr = ptr
	}
	return s.ptr
}

// edgePhases holds the time-of-day and day-of-week phases of the
// featurizer: sin and cos of 2π·minute/1440 and 2π·second/86400 for the
// 60 seconds of a minute (combined by the angle-addition formulas, in
// float64, which matches math.Sincos of the whole angle to well within a
// float32 rounding), and of 2π·day/7. 24 KiB, independent of the graph.
type edgePhases struct {
	minSin, minCos [1440]float64
	secSin, secCos [60]float64
	daySin, dayCos [7]float32
}

func newEdgePhases() *edgePhases {
	p := new(edgePhases)
	for m := range 1440 {
		p.minSin[m], p.minCos[m] = math.Sincos(2 * math.Pi * float64(m*60) / 86400)
	}
	for s := range 60 {
		p.secSin[s], p.secCos[s] = math.Sincos(2 * math.Pi * float64(s) / 86400)
	}
	for d := range 7 {
		s, c := math.Sincos(2 * math.Pi * float64(d) / 7)
		p.daySin[d], p.dayCos[d] = float32(s), float32(c)
	}
	return p
}

// hour returns sin and cos of 2π·sec/86400 for sec in [0, 86400).
func (p *edgePhases) hour(sec int64) (float32, float32) {
	m, s := sec/60, sec%60
	ms, mc, ss, sc := p.minSin[m], p.minCos[m], p.secSin[s], p.secCos[s]
	return float32(ms*sc + mc*ss), float32(mc*sc - ms*ss)
}

// FillSlots sets dst to the features of edges (row i for edges[i]), the
// values Fill writes, in edgeInputSlots slots per row. It panics on an
// edge outside the graph.
func (f *Featurizer) FillSlots(dst *SlotRows, edges []int32) {
	f.fillSlotsPrefix(dst, edges, len(edges))
}

// fillSlotsPrefix is FillSlots writing only the first n rows now and the
// others when dst.Complete is called: a folding GIN layer reads most of a
// batch's edges (those past NumEdges[1], three quarters of the
// evaluation batch's) from the records directly and never needs their
// slots. f must not change (SetTimeRange) until then.
func (f *Featurizer) fillSlotsPrefix(dst *SlotRows, edges []int32, n int) {
	const K = edgeInputSlots
	dst.reshape(len(edges), EdgeFeatureDim, K)
	// Touch every record first: a batch's edges are scattered over the
	// table, and this short loop keeps many cache misses in flight where
	// the filling loop keeps a few (as Sampler.hop does).
	sink := dst.sink
	for _, e := range edges[:n] {
		sink += f.recs[e].touch()
	}
	dst.sink = sink
	for i, e := range edges[:n] {
		f.slots((*[K]int32)(dst.Idx[i*K:]), (*[K]float32)(dst.Val[i*K:]), e)
	}
	for _, e := range edges[n:] {
		_ = f.recs[e] // the panic on an edge outside the graph comes now, not at Complete
	}
	dst.filled = true
	dst.fixed = append(dst.fixed[:0], edgeSlotColumns()...)
	dst.feat, dst.edges, dst.tail = f, edges, len(edges)-n
}

// edgeSlotColumns is FillSlots' fixed layout: edgeSlotBase with the
// one-hot slots, whose column varies by row, as −1.
func edgeSlotColumns() []int32 {
	c := edgeSlotBase()
	c[edgeSlotPay], c[edgeSlotRecv], c[edgeSlotForm] = -1, -1, -1
	return c[:]
}

// edgeLogAmount is log1p(max(a, 0))/10, the amount columns. The builtin
// max has math.Max's semantics here (NaN stays NaN, −0 becomes +0) and
// compiles to a few instructions rather than a call.
func edgeLogAmount(a float64) float32 {
	return float32(math.Log1p(max(a, 0)) / 10)
}
