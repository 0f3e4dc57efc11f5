package gnn

// GatherSlots sets row i of d (rows×n, row-major) to Σ_s vals[i·k+s]·
// w[cols[i·k+s]·n : …+n] for s < k: a sparse matrix stored as k (column,
// value) slots per row times a dense matrix w (row-major, n columns).
// Every element is what GatherSparse computes for the row; where AVX-512
// is available, groups of rows run together so that their sums overlap
// (an edge encoder's rows have a dozen slots, and one row at a time waited
// out the multiply-add latency at each). It panics on a column outside w.
func GatherSlots(d []float32, cols []int32, vals []float32, k int, w []float32, n int) {
	GatherSlotsBias(d, cols, vals, k, w, n, nil)
}

// GatherSlotsBias is GatherSlots with bias (len n, nil for none) added to
// every row after its sum, as AddBias would after GatherSlots, bit for
// bit, without a second pass over d.
func GatherSlotsBias(d []float32, cols []int32, vals []float32, k int, w []float32, n int, bias []float32) {
	if k <= 0 || n <= 0 {
		clear(d)
		if bias != nil && n > 0 {
			for i := 0; i+n <= len(d); i += n {
				AddInto(d[i:i+n], bias)
			}
		}
		return
	}
	rows := len(cols) / k
	if len(vals) < rows*k || len(d) < rows*n || (bias != nil && len(bias) < n) {
		ShapePanic("gather slots", "%d slots of %d values for %d rows into %d values, bias %d", len(cols), len(vals), rows, len(d), len(bias))
	}
	done := gatherSlotsWide(d, cols[:rows*k], vals[:rows*k], k, w, n, bias)
	for i := done; i < rows; i++ {
		row := d[i*n : (i+1)*n]
		GatherSparse(row, cols[i*k:(i+1)*k], vals[i*k:(i+1)*k], w, n)
		if bias != nil {
			AddInto(row, bias[:n])
		}
	}
}
