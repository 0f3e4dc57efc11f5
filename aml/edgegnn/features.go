package edgegnn

import (
	"math"
	"slices"

	"graphfed/aml/amlworld"
	"graphfed/gnn"
)

// Input features of the transaction classifier. Accounts have no features
// of their own, so node inputs describe structure only; transactions carry
// their CSV columns. Every column is a fixed function of the graph (no
// statistics fitted on data), so federated clients compute identical
// features for a transaction that both of them see.

// The columns of EdgeFeatures, EdgeFeatureDim in all.
const (
	EdgeColLogPaid      = 0                                            // log1p(Amount Paid)/10
	EdgeColLogRecv      = 1                                            // log1p(Amount Received)/10
	EdgeColPayCurrency  = 2                                            // one-hot Payment Currency, amlworld.NumCurrencies columns
	EdgeColRecvCurrency = EdgeColPayCurrency + amlworld.NumCurrencies  // one-hot Receiving Currency, amlworld.NumCurrencies columns
	EdgeColFormat       = EdgeColRecvCurrency + amlworld.NumCurrencies // one-hot Payment Format, amlworld.NumFormats columns
	EdgeColHourSin      = EdgeColFormat + amlworld.NumFormats          // sin(2π·second of day/86400)
	EdgeColHourCos      = EdgeColHourSin + 1                           // cos(2π·second of day/86400)
	EdgeColWeekSin      = EdgeColHourSin + 2                           // sin(2π·day of week/7), UTC days since 1970-01-01 mod 7
	EdgeColWeekCos      = EdgeColHourSin + 3                           // cos(2π·day of week/7)
	EdgeColSameCurr     = EdgeColHourSin + 4                           // 1 when pay and receiving currency agree
	EdgeColSelf         = EdgeColHourSin + 5                           // 1 for a self-transfer (same account)
	EdgeColCrossBank    = EdgeColHourSin + 6                           // 1 when the accounts are at different banks
	EdgeColTime         = EdgeColHourSin + 7                           // (t − first)/(last − first), first and last time of the graph (SetTimeRange)
	// EdgeFeatureDim is the number of edge feature columns (47).
	EdgeFeatureDim = EdgeColTime + 1
)

// The columns of NodeFeatures, NodeFeatureDim in all. Counts are over the
// edges of an Index (the graph visible at that stage), divided by the
// number of days that graph spans, and scaled as log1p(count/days): rates
// keep their scale as the visible graph grows from the training days to
// all days, where raw counts would shift (measured on a synthetic world:
// the same training edges scored in the full graph lost most of their
// recall with raw counts).
const (
	NodeColOne         = 0 // constant 1
	NodeColInDegree    = 1 // incoming transactions per day
	NodeColOutDegree   = 2 // outgoing transactions per day
	NodeColInPartners  = 3 // distinct accounts paying this one, per day
	NodeColOutPartners = 4 // distinct accounts this one pays, per day
	// NodeFeatureDim is the number of node feature columns.
	NodeFeatureDim = 5
)

// Featurizer computes EdgeFeatures rows for any edges of one graph; it
// holds the graph's time range, so rows computed batch by batch agree with
// rows computed all at once.
type Featurizer struct {
	g      *amlworld.Graph
	t0     int64
	invDur float64   // 1/(last - first time), 0 for a graph spanning one instant
	ord    []float32 // EdgeOrd rows of every edge, after EnableOrder
	phases *edgePhases
	// recs holds every edge's features in 24 bytes (edgeRecord): every
	// edge is featurized many times over a job, and a record is one
	// memory access where computing the row took ten and a division.
	recs []edgeRecord
}

// NewFeaturizer prepares the features of g's edges; g must not gain
// edges afterwards (their records are computed here).
func NewFeaturizer(g *amlworld.Graph) *Featurizer {
	f := &Featurizer{g: g, phases: newEdgePhases()}
	f.recs = newEdgeRecords(g, f.phases)
	if len(g.Time) > 0 {
		lo, hi := slices.Min(g.Time), slices.Max(g.Time)
		f.t0 = lo
		if hi > lo {
			f.invDur = 1 / float64(hi-lo)
		}
	}
	setRecordTimes(f.recs, g.Time, f.t0, f.invDur)
	return f
}

// SetTimeRange makes EdgeColTime measure from first to last (Unix
// seconds) instead of over the graph's own range: federated clients, each
// holding part of the transactions, agree on a job-wide range this way.
func (f *Featurizer) SetTimeRange(first, last int64) {
	f.t0, f.invDur = first, 0
	if last > first {
		f.invDur = 1 / float64(last-first)
	}
	setRecordTimes(f.recs, f.g.Time, f.t0, f.invDur)
}

// Fill sets row i of dst (len(edges)×EdgeFeatureDim) to the features of
// edge edges[i]. It panics on a shape mismatch or an edge outside the
// graph.
func (f *Featurizer) Fill(dst *gnn.Tensor, edges []int32) {
	if dst.Rows != len(edges) || dst.Cols != EdgeFeatureDim {
		gnn.ShapePanic("edge features", "%v for %d edges and %d features", dst, len(edges), EdgeFeatureDim)
	}
	clear(dst.Data)
	var idx [edgeInputSlots]int32
	var val [edgeInputSlots]float32
	for i, e := range edges {
		f.slots(&idx, &val, e)
		r := dst.Row(i)
		for k, c := range idx {
			r[c] = val[k]
		}
	}
}

// Features returns the len(edges)×EdgeFeatureDim features of edges.
func (f *Featurizer) Features(edges []int32) *gnn.Tensor {
	t := gnn.New(len(edges), EdgeFeatureDim)
	f.Fill(t, edges)
	return t
}

// EdgeFeatures returns the E×EdgeFeatureDim features of the given edges of
// g (all edges, in order, when edges is nil); the EdgeCol constants name
// the columns. For features batch by batch use a Featurizer, which
// computes the graph's time range once.
func EdgeFeatures(g *amlworld.Graph, edges []int32) *gnn.Tensor {
	if edges == nil {
		edges = make([]int32, g.NumEdges())
		for e := range edges {
			edges[e] = int32(e)
		}
	}
	return NewFeaturizer(g).Features(edges)
}

// NodeFeatures returns the N×NodeFeatureDim structural features of every
// node of idx (the NodeCol constants name the columns), computed from the
// edges idx holds only, over a visible period of days (values below 1
// count as 1; VisibleDays computes it): build idx from the
// training-visible edges to keep later edges out of training inputs.
func NodeFeatures(idx *Index, days float64) *gnn.Tensor {
	n := idx.NumNodes()
	x := gnn.New(n, NodeFeatureDim)
	var buf []int32
	partners := func(edges []int32, other []int32) int {
		buf = buf[:0]
		for _, e := range edges {
			buf = append(buf, other[e])
		}
		slices.Sort(buf)
		return len(slices.Compact(buf))
	}
	days = max(days, 1)
	scaled := func(c int) float32 { return float32(math.Log1p(float64(c) / days)) }
	for v := range n {
		in, out := idx.InEdges(int32(v)), idx.OutEdges(int32(v))
		r := x.Row(v)
		r[NodeColOne] = 1
		r[NodeColInDegree] = scaled(len(in))
		r[NodeColOutDegree] = scaled(len(out))
		r[NodeColInPartners] = scaled(partners(in, idx.src))
		r[NodeColOutPartners] = scaled(partners(out, idx.dst))
	}
	return x
}

// VisibleDays returns the number of days between the first and the last
// of the given edges of g (all when edges is nil), at least 1: the period
// NodeFeatures divides counts by.
func VisibleDays(g *amlworld.Graph, edges []int32) float64 {
	if len(g.Time) == 0 {
		return 1
	}
	lo, hi := g.Time[0], g.Time[0]
	if edges == nil {
		lo, hi = slices.Min(g.Time), slices.Max(g.Time)
	}
	for i, e := range edges {
		if t := g.Time[e]; i == 0 {
			lo, hi = t, t
		} else {
			lo, hi = min(lo, t), max(hi, t)
		}
	}
	return max(float64(hi-lo)/86400, 1)
}

func edgeFlag(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

func edgeFloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func edgeFloorMod(a, b int64) int64 { return a - edgeFloorDiv(a, b)*b }
