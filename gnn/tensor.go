package gnn

import (
	"fmt"
	"math"
)

// Tensor is a dense row-major Rows×Cols float32 matrix: element (i, j) is
// Data[i*Cols+j].
type Tensor struct {
	Rows, Cols int
	Data       []float32 // len Rows*Cols
}

// New returns a zeroed r×c tensor.
func New(r, c int) *Tensor {
	if r < 0 || c < 0 {
		panic(fmt.Sprintf("gnn: new: negative shape %dx%d", r, c))
	}
	return &Tensor{Rows: r, Cols: c, Data: make([]float32, r*c)}
}

// NewFrom wraps data (len r*c, not copied) as an r×c tensor.
func NewFrom(r, c int, data []float32) *Tensor {
	if r < 0 || c < 0 || len(data) != r*c {
		panic(fmt.Sprintf("gnn: new from: %d values for shape %dx%d", len(data), r, c))
	}
	return &Tensor{Rows: r, Cols: c, Data: data}
}

// At returns element (i, j).
func (t *Tensor) At(i, j int) float32 { return t.Data[i*t.Cols+j] }

// Set sets element (i, j) to v.
func (t *Tensor) Set(i, j int, v float32) { t.Data[i*t.Cols+j] = v }

// Row returns row i (len Cols), aliasing t.
func (t *Tensor) Row(i int) []float32 { return t.Data[i*t.Cols : (i+1)*t.Cols] }

// Slice returns rows [lo, hi) as a (hi-lo)×Cols tensor aliasing t.
func (t *Tensor) Slice(lo, hi int) *Tensor {
	if lo < 0 || hi < lo || hi > t.Rows {
		panic(fmt.Sprintf("gnn: slice: rows [%d,%d) of %d", lo, hi, t.Rows))
	}
	return &Tensor{Rows: hi - lo, Cols: t.Cols, Data: t.Data[lo*t.Cols : hi*t.Cols]}
}

// Zero sets every element to 0.
func (t *Tensor) Zero() { clear(t.Data) }

// Clone returns a deep copy of t.
func (t *Tensor) Clone() *Tensor {
	return &Tensor{Rows: t.Rows, Cols: t.Cols, Data: append([]float32(nil), t.Data...)}
}

// Copy copies src into t; the shapes must match.
func (t *Tensor) Copy(src *Tensor) {
	mustSameShape("copy", t, src)
	copy(t.Data, src.Data)
}

// SameShape reports whether t and u have the same shape.
func (t *Tensor) SameShape(u *Tensor) bool { return t.Rows == u.Rows && t.Cols == u.Cols }

// String describes the shape, for messages.
func (t *Tensor) String() string { return fmt.Sprintf("Tensor(%dx%d)", t.Rows, t.Cols) }

// AllFinite reports whether no element is NaN or ±Inf.
func (t *Tensor) AllFinite() bool {
	for _, v := range t.Data {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}

// Add sets dst = a + b elementwise; dst may alias a or b.
func Add(dst, a, b *Tensor) {
	mustSameShape("add", a, b)
	mustSameShape("add", dst, a)
	b2 := b.Data[:len(a.Data)]
	d := dst.Data[:len(a.Data)]
	for i := addWide(d, a.Data, b2); i < len(d); i++ {
		d[i] = a.Data[i] + b2[i]
	}
}

// AddScaled sets dst += alpha·src elementwise.
func AddScaled(dst *Tensor, alpha float32, src *Tensor) {
	mustSameShape("add scaled", dst, src)
	s := src.Data[:len(dst.Data)]
	for i := axpyWide(dst.Data, alpha, s); i < len(dst.Data); i++ {
		dst.Data[i] += alpha * s[i]
	}
}

// Scale sets t *= alpha elementwise.
func (t *Tensor) Scale(alpha float32) {
	for i := range t.Data {
		t.Data[i] *= alpha
	}
}

// Reuse returns t when it already has shape r×c and a fresh tensor
// otherwise; layers and learners call it to keep their buffers across
// epochs. The contents are not cleared.
func Reuse(t *Tensor, r, c int) *Tensor {
	if t != nil && t.Rows == r && t.Cols == c {
		return t
	}
	return New(r, c)
}

func mustSameShape(op string, a, b *Tensor) {
	if a.Rows != b.Rows || a.Cols != b.Cols {
		panic(fmt.Sprintf("gnn: %s: shape %dx%d vs %dx%d", op, a.Rows, a.Cols, b.Rows, b.Cols))
	}
}

// ShapePanic panics with the package's shape message, "gnn: <op>: shape
// <format>": a shape mismatch is a programming error.
func ShapePanic(op string, format string, args ...any) {
	panic(fmt.Sprintf("gnn: %s: shape "+format, append([]any{op}, args...)...))
}
