package graph

// RowNormalize returns a copy of features in which every row sums to 1, as
// Kipf & Welling's GCN preprocesses Cora's bag-of-words features. It is meant
// for non-negative features. A row whose sum is zero (in particular an empty
// row) is copied unchanged: no scaling can make it sum to 1, and the
// reference implementation's 1/0 → 0 convention would erase a row with
// entries that merely cancel. The result always has Val set; the input is
// not modified.
func RowNormalize(features *CSR) *CSR {
	out := &CSR{
		Rows:   features.Rows,
		Cols:   features.Cols,
		RowPtr: append([]int(nil), features.RowPtr...),
		ColIdx: append([]int32(nil), features.ColIdx...),
		Val:    make([]float32, len(features.ColIdx)),
	}
	for i := 0; i < features.Rows; i++ {
		lo, hi := features.RowPtr[i], features.RowPtr[i+1]
		// Sum in float64: a 1433-wide row of float32 loses digits otherwise.
		var sum float64
		for k := lo; k < hi; k++ {
			sum += float64(csrValue(features, k))
		}
		scale := 1.0
		if sum != 0 {
			scale = 1 / sum
		}
		for k := lo; k < hi; k++ {
			out.Val[k] = float32(float64(csrValue(features, k)) * scale)
		}
	}
	return out
}

// csrValue is stored entry k of m, honouring nil Val as all ones.
func csrValue(m *CSR, k int) float32 {
	if m.Val == nil {
		return 1
	}
	return m.Val[k]
}

// NonNegative reports whether every stored feature value is ≥ 0, the case
// (bag-of-words, counts) where row normalization is meaningful. Signed
// features such as the CSBM's Gaussians must not be row-normalized: a row
// summing to nearly zero would be blown up.
func NonNegative(features *CSR) bool {
	for _, v := range features.Val {
		if v < 0 {
			return false
		}
	}
	return true
}

// NormalizeIfNonNegative row-normalizes non-negative features and returns
// signed ones unchanged.
func NormalizeIfNonNegative(features *CSR) *CSR {
	if NonNegative(features) {
		return RowNormalize(features)
	}
	return features
}
