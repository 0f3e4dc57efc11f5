package edgegnn

import (
	"math"

	"graphfed/aml/amlworld"
)

// edgeRecord is one edge's EdgeFeatures in 24 bytes: the values of its
// non-constant slots, computed once when the featurizer is built. A
// batch's edges are scattered over the graph, and computing a row read
// ten arrays at that edge (time, amounts, currencies, format, endpoints,
// their banks) and divided its time into days: in the evaluation step
// that was a third of the time, more than the model's forward pass. Reading
// one record instead is the Go side of what the PyTorch reference does by
// default (gathering rows of a feature table computed once,
// /work/shared/bench/ref_torch_aml_step.py), at an eighth of its 188 bytes
// per edge.
type edgeRecord struct {
	logPaid, logRecv float32 // EdgeColLogPaid, EdgeColLogRecv
	hourSin, hourCos float32 // EdgeColHourSin, EdgeColHourCos
	time             float32 // EdgeColTime under the featurizer's current time range
	pay, recv, form  uint8   // offsets in the one-hot blocks
	bits             uint8   // weekday (0..6) | same currency<<3 | self<<4 | cross bank<<5
}

// touch reads both ends of the record: at 24 bytes, a third of them
// straddle two cache lines, and a touching pass that read one field left
// the other line to miss in the loop that reads the record.
func (r *edgeRecord) touch() uint8 {
	return uint8(math.Float32bits(r.logPaid)) + r.bits
}

const (
	recSameCurr  = 1 << 3
	recSelf      = 1 << 4
	recCrossBank = 1 << 5
	recWeekday   = 7
)

// newEdgeRecords computes the records of every edge of g; the time
// column is left to setRecordTimes.
func newEdgeRecords(g *amlworld.Graph, ph *edgePhases) []edgeRecord {
	recs := make([]edgeRecord, g.NumEdges())
	for e := range recs {
		t := g.Time[e]
		day := edgeFloorDiv(t, 86400)
		hs, hc := ph.hour(t - day*86400)
		pc, rc := g.PayCurrency[e], g.RecvCurrency[e]
		src, dst := g.Src[e], g.Dst[e]
		bits := uint8(edgeFloorMod(day, 7))
		if pc == rc {
			bits |= recSameCurr
		}
		if src == dst {
			bits |= recSelf
		}
		if g.AccountBank[src] != g.AccountBank[dst] {
			bits |= recCrossBank
		}
		recs[e] = edgeRecord{
			logPaid: edgeLogAmount(g.AmountPaid[e]), logRecv: edgeLogAmount(g.AmountReceived[e]),
			hourSin: hs, hourCos: hc,
			pay: uint8(pc), recv: uint8(rc), form: uint8(g.Format[e]), bits: bits,
		}
	}
	return recs
}

// setRecordTimes sets every record's EdgeColTime to (t − t0)·invDur.
func setRecordTimes(recs []edgeRecord, times []int64, t0 int64, invDur float64) {
	for e := range recs {
		recs[e].time = float32(float64(times[e]-t0) * invDur)
	}
}

// The slots of the one-hot blocks in an edge's slot row.
const edgeSlotPay, edgeSlotRecv, edgeSlotForm = 2, 3, 4

// edgeSlotBase is the column of every slot of an edge's slot row, the
// one-hot slots at the start of their blocks (slots adds the record's
// offsets; edgeSlotColumns marks them as varying).
func edgeSlotBase() [edgeInputSlots]int32 {
	return [edgeInputSlots]int32{EdgeColLogPaid, EdgeColLogRecv,
		EdgeColPayCurrency, EdgeColRecvCurrency, EdgeColFormat,
		EdgeColHourSin, EdgeColHourCos, EdgeColWeekSin, EdgeColWeekCos,
		EdgeColSameCurr, EdgeColSelf, EdgeColCrossBank, EdgeColTime}
}

// slots sets the columns and values of edge e's features from its record,
// writing in place: built as array literals, the rows went through the
// stack first, and this loop runs for every edge of every batch.
func (f *Featurizer) slots(idx *[edgeInputSlots]int32, val *[edgeInputSlots]float32, e int32) {
	r := &f.recs[e]
	ph := f.phases
	wd := r.bits & recWeekday
	*idx = edgeSlotBase()
	idx[edgeSlotPay] += int32(r.pay)
	idx[edgeSlotRecv] += int32(r.recv)
	idx[edgeSlotForm] += int32(r.form)
	val[0], val[1] = r.logPaid, r.logRecv
	val[edgeSlotPay], val[edgeSlotRecv], val[edgeSlotForm] = 1, 1, 1
	val[5], val[6], val[7], val[8] = r.hourSin, r.hourCos, ph.daySin[wd], ph.dayCos[wd]
	val[9] = float32(r.bits >> 3 & 1)  // same currency
	val[10] = float32(r.bits >> 4 & 1) // self
	val[11] = float32(r.bits >> 5 & 1) // cross bank
	val[12] = r.time
}
