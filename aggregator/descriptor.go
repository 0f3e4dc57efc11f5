package aggregator

import (
	"fmt"
	"math"
)

// Descriptor is a client's FedGSP spectral descriptors as they arrived
// with one of its updates (bus.Update.Descriptors): 4·Orders·Principal
// rows of Dim values, row-major, in four blocks of Orders·Principal rows
// (the FedGSP contract):
//
//	A: for k = 1..K, for a = 1..kpr: direction a of HM_k = P^k X      (p_i^(k))
//	B: the same for the heterophily bases U_k                         (q_i^(k))
//	C: for a = 1..kpr, for k = 1..K: chunk k of direction a of [HM_1..HM_K]  (p_i)
//	D: the same for [U_1..U_K]                                         (q_i)
//
// so that in C and D each direction is one contiguous row of K·Dim values.
type Descriptor struct {
	Orders, Principal, Dim int
	Rows                   []float32
}

// check validates the shape and the values.
func (d Descriptor) check() error {
	switch {
	case d.Orders < 1 || d.Principal < 1 || d.Dim < 1 || d.Orders > maxOrders:
		return fmt.Errorf("descriptor shape: %d orders (at most %d), %d directions, dimension %d", d.Orders, maxOrders, d.Principal, d.Dim)
	case len(d.Rows)%d.Dim != 0 || len(d.Rows)/d.Dim != 4*d.Orders*d.Principal:
		return fmt.Errorf("descriptor of %d values for 4·%d·%d rows of %d", len(d.Rows), d.Orders, d.Principal, d.Dim)
	}
	for i, x := range d.Rows {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("descriptor value %d is %v", i, x)
		}
	}
	return nil
}

// block returns one graph's pair of descriptors and their row length:
// for graph 0 (W) the concatenation directions (blocks C and D, rows of
// K·Dim), for graph k ≥ 1 (W^(k)) order k's directions (blocks A and B,
// rows of Dim).
func (d Descriptor) block(graph int) (sharing, complementing []float32, l int) {
	size := d.Orders * d.Principal * d.Dim
	if graph == 0 {
		return d.Rows[2*size : 3*size], d.Rows[3*size : 4*size], d.Orders * d.Dim
	}
	off := (graph - 1) * d.Principal * d.Dim
	n := d.Principal * d.Dim
	return d.Rows[off : off+n], d.Rows[size+off : size+off+n], d.Dim
}
