package aggregator

import (
	"fmt"
	"math"
)

// Staleness policies for updates that arrive after their round closed.
const (
	StaleDrop       = "drop"       // late updates are discarded
	StaleConstant   = "constant"   // folded in with a constant weight factor
	StalePolynomial = "polynomial" // folded in with weight 1/(1+s)^a (FedAsync)
)

// Staleness says what happens to a late update, whose staleness s is the
// number of rounds between the round it trained for and the open round.
type Staleness struct {
	Policy string  // default drop
	Factor float64 // constant policy: weight multiplier in (0,1]
	A      float64 // polynomial policy: exponent a > 0
	MaxAge uint64  // updates older than this many rounds are always dropped; 0: 10
}

// Validate checks the policy.
func (s Staleness) Validate() error {
	switch s.Policy {
	case "", StaleDrop:
	case StaleConstant:
		if !(s.Factor > 0 && s.Factor <= 1) {
			return fmt.Errorf("aggregator: staleness: constant factor %v outside (0,1]", s.Factor)
		}
	case StalePolynomial:
		if !(s.A > 0) {
			return fmt.Errorf("aggregator: staleness: polynomial exponent %v must be positive", s.A)
		}
	default:
		return fmt.Errorf("aggregator: staleness: unknown policy %q", s.Policy)
	}
	return nil
}

// Weight is the factor a late update of staleness s is folded in with; 0
// means drop.
func (s Staleness) Weight(age uint64) float64 {
	maxAge := s.MaxAge
	if maxAge == 0 {
		maxAge = 10
	}
	if age == 0 {
		return 1
	}
	if age > maxAge {
		return 0
	}
	switch s.Policy {
	case StaleConstant:
		return s.Factor
	case StalePolynomial:
		return math.Pow(1+float64(age), -s.A)
	}
	return 0
}
