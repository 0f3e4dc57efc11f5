package bus

import "fmt"

// MinDescriptorValues is the descriptor size every job accepts whatever
// its parameter count: 256 KiB of float32, which fits the smallest payload
// limit (MinMaxPayload) beside the parameters of any model small enough to
// need the floor (JobSize.LargestMessage's model term is then under 576 KiB).
const MinDescriptorValues = 1 << 16

// MaxDescriptorValues bounds the descriptor values of one update of a job
// of numParams parameters: numParams, at least MinDescriptorValues. An
// update carries descriptors or a gradient estimator, never both, so an
// update with descriptors is no larger than the parameters and gradient
// estimator the job's payload limit is sized for (JobSize.LargestMessage).
func MaxDescriptorValues(numParams int) int { return max(numParams, MinDescriptorValues) }

// checkDescriptors checks an update's FedGSP descriptors: absent with zero
// shape fields, or a consistent shape (4·K·kpr rows of Dim values, each
// factor positive), no more values than the schema allows
// (MaxDescriptorValues; before the parameter count is known, the floor),
// no gradient estimator beside them, and finite values.
func checkDescriptors(s Schema, u *Update) error {
	n := u.Descriptors.Len()
	if n == 0 {
		if u.DescOrders != 0 || u.DescPrincipal != 0 || u.DescDim != 0 {
			return &RejectError{ReasonShape, fmt.Errorf("descriptor shape %d×%d×%d without descriptors", u.DescOrders, u.DescPrincipal, u.DescDim)}
		}
		return nil
	}
	limit := MaxDescriptorValues(s.NumParams)
	k, kpr, dim := u.DescOrders, u.DescPrincipal, u.DescDim
	// The shape is checked by division: no product of untrusted factors
	// is formed, so nothing can overflow.
	switch {
	case k < 1 || kpr < 1 || dim < 1:
		return &RejectError{ReasonShape, fmt.Errorf("descriptor shape orders %d, principal %d, dim %d", k, kpr, dim)}
	case n > limit:
		return &RejectError{ReasonShape, fmt.Errorf("%d descriptor values over the job's %d", n, limit)}
	case n%dim != 0 || (n/dim)%4 != 0 || (n/dim/4)%k != 0 || n/dim/4/k != kpr:
		return &RejectError{ReasonShape, fmt.Errorf("%d descriptor values for 4·%d·%d rows of %d", n, k, kpr, dim)}
	case u.Grad.Len() > 0:
		return &RejectError{ReasonShape, fmt.Errorf("descriptors beside a gradient estimator")}
	}
	if i := firstNonFinite(u.Descriptors.Floats()); i >= 0 {
		return &RejectError{ReasonNonFinite, fmt.Errorf("descriptors[%d] = %v", i, u.Descriptors.Floats()[i])}
	}
	return nil
}
