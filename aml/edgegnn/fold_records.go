package edgegnn

import "graphfed/gnn"

// The first GIN layer's raw sums read straight from the featurizer's edge
// records. Of an evaluation batch's edges (h32, 512 seeds, fan-out 5×5)
// about 30,000 are inputs and only 6,800 are updated by the first layer;
// the others are read once, summed into their target's row. Writing their
// thirteen slots (104 bytes each) and reading them back cost more than
// reading the 24-byte record where it lies, and the node inputs of five
// columns went through a gather kernel call per row for a few messages
// each. GIN's message weights are all 1, so each sum is a plain running
// sum in message order: exactly what the slot path computes, on every
// machine (a fused multiply-add by 1 rounds as the add), bit for bit.

// foldRecords reports whether the fold may sum layer l's messages from the
// records: GIN weights, slots filled from a featurizer's records, and the
// node and edge input widths the record layout has.
func (f *inputFold) foldRecords(l *edgeLayer) bool {
	s := f.slots
	return l.kind == KindGIN && s.feat != nil && len(s.edges) == s.Rows && s.Cols == EdgeFeatureDim &&
		s.K == edgeInputSlots && f.nodeX.Cols == NodeFeatureDim && f.nodeEnc.W.W.Rows == NodeFeatureDim
}

// foldRecordRows is the number of targets whose raw sums are formed and
// projected together: their rows (424 bytes each for GIN with reverse
// messages) stay in the first-level cache from one to the other, where the
// sums of every target first left the product to read a megabyte and a
// half back from the last-level cache.
const foldRecordRows = 32

// foldRecordsForward sets f.xr (every column) to the raw sums of the nt
// targets of msgs (one per direction, weights 1) and f.out to xr·f.wf +
// bias, block by block when the product runs in edgeTiles on one
// goroutine, else sums first and then gnn's product.
func (f *inputFold) foldRecordsForward(lay foldLayout, msgs []*Messages, bias *gnn.Tensor, nt int) {
	H := f.wf.Cols
	if !edgeTilesApply(lay.width, H) || gnn.ParallelWorkers(nt, nt*lay.width*H) > 1 {
		for d, m := range msgs {
			f.foldRecordSums(f.xr, lay.node+d*lay.ni, lay.edge+d*lay.ei, lay.sum+d, m, 0, nt)
		}
		edgeMatMulBias(f.out, f.xr, f.wf, bias)
		return
	}
	if bias.Rows != 1 || bias.Cols != H {
		gnn.ShapePanic("fold records forward", "bias %v for %d columns", bias, H)
	}
	for lo := 0; lo < nt; lo += foldRecordRows {
		hi := min(lo+foldRecordRows, nt)
		for d, m := range msgs {
			f.foldRecordSums(f.xr, lay.node+d*lay.ni, lay.edge+d*lay.ei, lay.sum+d, m, lo, hi)
		}
		edgeTiles(f.out.Data, f.xr.Data, f.wf.Data, bias.Data, lay.width, H, lo, hi)
	}
}

// foldRecordSums sets, for each target t in [lo, hi) of messages m
// (weights 1), columns [cn, cn+NodeFeatureDim) of xr's row t to the sum
// of the source nodes' inputs, columns [ce, ce+EdgeFeatureDim) to the sum
// of the edges' inputs and column cs to the number of messages.
func (f *inputFold) foldRecordSums(xr *gnn.Tensor, cn, ce, cs int, m *Messages, lo, hi int) {
	const ni = NodeFeatureDim
	recs, ph, edges := f.slots.feat.recs, f.slots.feat.phases, f.slots.edges
	nx, ld := f.nodeX.Data, xr.Cols
	// Touch the block's records before summing them: they lie scattered
	// over a table of every edge of the graph, and this short loop keeps
	// many cache misses in flight where the summing loop, long per
	// message, keeps a few (as FillSlots and Sampler.hop do).
	sink := f.sink
	for _, e := range m.Edge[m.Ptr[lo]:m.Ptr[hi]] {
		sink += recs[edges[e]].touch()
	}
	f.sink = sink
	for t := lo; t < hi; t++ {
		row := xr.Data[t*ld : (t+1)*ld]
		er := row[ce : ce+EdgeFeatureDim]
		clear(er)
		var n0, n1, n2, n3, n4 float32
		var paid, recv, hs, hc, ws, wc, same, self, cross, tm, cnt float32
		k0, k1 := m.Ptr[t], m.Ptr[t+1]
		for k, s := range m.Src[k0:k1] {
			x := (*[ni]float32)(nx[int(s)*ni:])
			n0 += x[0]
			n1 += x[1]
			n2 += x[2]
			n3 += x[3]
			n4 += x[4]
			r := &recs[edges[m.Edge[k0+k]]]
			paid += r.logPaid
			recv += r.logRecv
			hs += r.hourSin
			hc += r.hourCos
			wd := r.bits & recWeekday
			ws += ph.daySin[wd]
			wc += ph.dayCos[wd]
			same += float32(r.bits >> 3 & 1)
			self += float32(r.bits >> 4 & 1)
			cross += float32(r.bits >> 5 & 1)
			tm += r.time
			er[EdgeColPayCurrency+int(r.pay)]++
			er[EdgeColRecvCurrency+int(r.recv)]++
			er[EdgeColFormat+int(r.form)]++
			cnt++
		}
		nr := (*[ni]float32)(row[cn:])
		nr[0], nr[1], nr[2], nr[3], nr[4] = n0, n1, n2, n3, n4
		// Added, not set, as the slot path adds its fixed-slot sums into
		// the zeroed row (a −0 sum becomes +0 either way).
		er[EdgeColLogPaid] += paid
		er[EdgeColLogRecv] += recv
		er[EdgeColHourSin] += hs
		er[EdgeColHourCos] += hc
		er[EdgeColWeekSin] += ws
		er[EdgeColWeekCos] += wc
		er[EdgeColSameCurr] += same
		er[EdgeColSelf] += self
		er[EdgeColCrossBank] += cross
		er[EdgeColTime] += tm
		row[cs] = cnt
	}
}
