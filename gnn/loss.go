package gnn

import (
	"fmt"
	"math"
)

// SoftmaxCrossEntropy returns the mean cross-entropy between the row-wise
// softmax of logits (N×C) and labels (len N) over the nodes i with mask[i]
// (mask nil means every node) and labels[i] ≥ 0; nodes labelled -1 never
// count. With classWeights (len C; nil means all ones) node i counts
// w[labels[i]] times and the mean divides by the summed weights, as
// PyTorch's CrossEntropyLoss(weight=w) does.
//
// When dLogits (N×C) is non-nil it is overwritten with the gradient of the
// returned loss: (softmax(row) - onehot)·w/Σw on counted rows, 0 elsewhere.
// When no node counts the loss and the gradient are 0. Sums run in float64;
// it panics on a label ≥ C or inconsistent lengths.
func SoftmaxCrossEntropy(logits *Tensor, labels []int32, mask []bool, classWeights []float32, dLogits *Tensor) float64 {
	n, c := logits.Rows, logits.Cols
	if len(labels) != n || (mask != nil && len(mask) != n) || (classWeights != nil && len(classWeights) != c) {
		ShapePanic("softmax cross entropy", "logits %dx%d, %d labels, %d mask, %d class weights", n, c, len(labels), len(mask), len(classWeights))
	}
	if dLogits != nil {
		mustSameShape("softmax cross entropy", dLogits, logits)
		dLogits.Zero()
	}
	counted := func(i int) bool { return labels[i] >= 0 && (mask == nil || mask[i]) }
	var wsum float64
	for i := 0; i < n; i++ {
		if !counted(i) {
			continue
		}
		y := labels[i]
		if int(y) >= c {
			panic(fmt.Sprintf("gnn: softmax cross entropy: node %d label %d outside [0,%d)", i, y, c))
		}
		if classWeights != nil {
			wsum += float64(classWeights[y])
		} else {
			wsum++
		}
	}
	if wsum == 0 {
		return 0
	}
	var total float64
	for i := 0; i < n; i++ {
		if !counted(i) {
			continue
		}
		y := labels[i]
		w := 1.0
		if classWeights != nil {
			w = float64(classWeights[y])
		}
		row := logits.Data[i*c : (i+1)*c]
		lse := logSumExp(row)
		total += w * (lse - float64(row[y]))
		if dLogits != nil {
			d := dLogits.Data[i*c : (i+1)*c]
			scale := w / wsum
			for j, v := range row {
				d[j] = float32(scale * math.Exp(float64(v)-lse))
			}
			d[y] -= float32(scale)
		}
	}
	return total / wsum
}

// logSumExp returns log Σ exp(x[j]) computed stably in float64.
func logSumExp(x []float32) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	return m + math.Log(s)
}

// ArgMax returns the index of the largest value in each row of t (the
// first on ties), into dst (len t.Rows) or a new slice when dst is short.
func ArgMax(t *Tensor, dst []int32) []int32 {
	if cap(dst) < t.Rows {
		dst = make([]int32, t.Rows)
	}
	dst = dst[:t.Rows]
	for i := range dst {
		row := t.Row(i)
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		dst[i] = int32(best)
	}
	return dst
}
