package aggregator

import (
	"fmt"
	"math"
)

// MaxWeight bounds an update's aggregation weight (a sample count): sums of
// weights below it cannot overflow, so an average cannot turn into NaN.
const MaxWeight = 1e15

// checkSnapshotValues rejects numbers a machine must never hold: a negative
// parameter count, vectors of the wrong length, non-finite values and
// weights outside [0, MaxWeight]. A checkpoint comes from the aggregator's
// own bucket, but one corrupted value would otherwise panic a round close
// or publish a NaN model.
func checkSnapshotValues(s Snapshot) error {
	if s.NumParams < 0 {
		return fmt.Errorf("%d parameters", s.NumParams)
	}
	vec := func(name string, v []float32) error {
		if len(v) != 0 && len(v) != s.NumParams {
			return fmt.Errorf("%s of %d values in a job of %d parameters", name, len(v), s.NumParams)
		}
		for i, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("%s[%d] = %v", name, i, x)
			}
		}
		return nil
	}
	weight := func(name string, w float64) error {
		if !(w >= 0 && w <= MaxWeight) {
			return fmt.Errorf("%s weight %v outside [0, %g]", name, w, MaxWeight)
		}
		return nil
	}
	for _, p := range s.Models {
		if len(p.Params) != s.NumParams {
			return fmt.Errorf("model for %q of %d values in a job of %d parameters", p.To, len(p.Params), s.NumParams)
		}
		if err := vec("model for "+p.To, p.Params); err != nil {
			return err
		}
		if err := vec("gradient estimator for "+p.To, p.Grad); err != nil {
			return err
		}
	}
	for _, c := range s.Clients {
		if err := weight("client "+c.ID, c.Weight); err != nil {
			return err
		}
	}
	for _, list := range [][]Contribution{s.Pending, s.Stale} {
		for _, c := range list {
			if err := weight("update of "+c.Client, c.Weight); err != nil {
				return err
			}
			if err := vec("update of "+c.Client, c.Params); err != nil {
				return err
			}
			if err := vec("gradient of "+c.Client, c.Grad); err != nil {
				return err
			}
			if c.HasRho && !finite(c.Rho) || !c.HasRho && c.Rho != 0 || c.HasMargin && !finite(c.Margin) || !c.HasMargin && c.Margin != 0 {
				return fmt.Errorf("update of %s releases ρ %v (%v) and margin %v (%v)", c.Client, c.Rho, c.HasRho, c.Margin, c.HasMargin)
			}
		}
	}
	return nil
}
