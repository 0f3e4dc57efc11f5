package graph

import (
	"math"
	"slices"
	"testing"
)

func TestRowNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   *CSR
		want []float32
	}{
		{"weighted", &CSR{Rows: 3, Cols: 4, RowPtr: []int{0, 2, 2, 5}, ColIdx: []int32{0, 3, 0, 1, 2}, Val: []float32{1, 3, 2, 2, 4}},
			[]float32{0.25, 0.75, 0.25, 0.25, 0.5}},
		{"unweighted", &CSR{Rows: 2, Cols: 3, RowPtr: []int{0, 3, 4}, ColIdx: []int32{0, 1, 2, 1}},
			[]float32{1. / 3, 1. / 3, 1. / 3, 1}},
		{"cancelling row kept", &CSR{Rows: 1, Cols: 2, RowPtr: []int{0, 2}, ColIdx: []int32{0, 1}, Val: []float32{1, -1}},
			[]float32{1, -1}},
		{"empty matrix", &CSR{Rows: 0, Cols: 5, RowPtr: []int{0}}, []float32{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]float32(nil), tc.in.Val...)
			got := RowNormalize(tc.in)
			if err := got.Validate(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Val, tc.want) {
				t.Errorf("values %v, want %v", got.Val, tc.want)
			}
			if !slices.Equal(tc.in.Val, before) {
				t.Error("input modified")
			}
		})
	}
}

func TestRowNormalizeCora(t *testing.T) {
	d, err := LoadTSV(sharedDataset(t, "cora"))
	if err != nil {
		t.Fatal(err)
	}
	m := RowNormalize(d.Features)
	for i := 0; i < m.Rows; i++ {
		_, vals := m.Row(i)
		var sum float64
		for _, v := range vals {
			sum += float64(v)
		}
		if len(vals) > 0 && math.Abs(sum-1) > 1e-5 {
			t.Fatalf("row %d sums to %v", i, sum)
		}
	}
}

func TestNonNegative(t *testing.T) {
	tests := []struct {
		val  []float32
		want bool
	}{{[]float32{0, 1, 2}, true}, {[]float32{1, -1e-9}, false}, {nil, true}}
	for _, tc := range tests {
		m := &CSR{Rows: 1, Cols: 3, RowPtr: []int{0, len(tc.val)}, ColIdx: []int32{0, 1, 2}[:len(tc.val)], Val: tc.val}
		if got := NonNegative(m); got != tc.want {
			t.Errorf("NonNegative(%v) = %v", tc.val, got)
		}
		if out := NormalizeIfNonNegative(m); (out != m) != tc.want {
			t.Errorf("NormalizeIfNonNegative(%v) normalized=%v", tc.val, out != m)
		}
	}
}
