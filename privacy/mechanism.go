package privacy

import (
	"fmt"
	"math"
)

// clipRow scales row in place so that its L2 norm is at most c; with
// normalize it scales every nonzero row to norm c exactly (up to float32
// rounding, always from below). The norm is computed in float64 and the
// result re-checked after rounding to float32, so the bound the accountant
// relies on holds for the stored values. Zero rows cannot be normalized.
func clipRow(row []float32, c float64, normalize bool) error {
	n := norm2(row)
	if n == 0 {
		if normalize {
			return fmt.Errorf("zero row has no direction to normalize")
		}
		return nil
	}
	if n <= c && !normalize {
		return nil
	}
	s := c / n
	for range 8 {
		for i, v := range row {
			row[i] = float32(float64(v) * s)
		}
		if norm2(row) <= c {
			return nil
		}
		s = 1 - 0x1p-22 // shrink the rounded row by a few float32 ulps
	}
	return fmt.Errorf("cannot clip row to norm %v", c)
}

func norm2(row []float32) float64 {
	var s float64
	for _, v := range row {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// gatherRows validates the shape and values of a request's rows and
// returns them copied into one row-major slice.
func gatherRows(r *Request) (data []float32, rows, dim int, err error) {
	switch {
	case r.Rows != nil && r.Flat != nil:
		return nil, 0, 0, fmt.Errorf("both Rows and Flat set")
	case r.Rows != nil:
		if len(r.Rows) == 0 || len(r.Rows[0]) == 0 {
			return nil, 0, 0, fmt.Errorf("no rows or empty first row")
		}
		dim = len(r.Rows[0])
		if r.Dim != 0 && r.Dim != dim {
			return nil, 0, 0, fmt.Errorf("dim %d but rows of length %d", r.Dim, dim)
		}
		data = make([]float32, 0, len(r.Rows)*dim)
		for i, row := range r.Rows {
			if len(row) != dim {
				return nil, 0, 0, fmt.Errorf("row %d has length %d, want %d", i, len(row), dim)
			}
			data = append(data, row...)
		}
		rows = len(r.Rows)
	case r.Flat != nil:
		dim = r.Dim
		if dim <= 0 || len(r.Flat) == 0 || len(r.Flat)%dim != 0 {
			return nil, 0, 0, fmt.Errorf("flat length %d is not a positive multiple of dim %d", len(r.Flat), dim)
		}
		data = append([]float32(nil), r.Flat...)
		rows = len(r.Flat) / dim
	default:
		return nil, 0, 0, fmt.Errorf("no data: set Rows or Flat and Dim")
	}
	for i, v := range data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, 0, 0, fmt.Errorf("non-finite value %v at row %d column %d", v, i/dim, i%dim)
		}
	}
	return data, rows, dim, nil
}
