package job

import (
	"math"
	"strings"
	"testing"
)

func TestEpsilon(t *testing.T) {
	for _, tc := range []struct {
		name       string
		accountant string
		want       float64 // ε; 0: an error
		rdpOrder   bool
	}{
		{"rdp, CE-FedGNN Table 6", "rdp", 51.7936, true},
		{"exact", "exact", 48.7829, false},
		{"unknown accountant", "moments", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultEpsilonSpec()
			s.Sigma, s.Rho, s.Releases, s.Accountant = 0.3, 0.1466, 200, tc.accountant
			r, err := Epsilon(s)
			if tc.want == 0 {
				if err == nil {
					t.Fatalf("Epsilon = %v, want an error", r)
				}
				return
			}
			if err != nil || math.Abs(r.Epsilon-tc.want) > 1e-3 {
				t.Fatalf("Epsilon = %v, %v; want ε %v", r.Epsilon, err, tc.want)
			}
			if _, ok := r.Metrics()["rdp_order"]; ok != tc.rdpOrder {
				t.Errorf("rdp_order in metrics: %v, want %v", ok, tc.rdpOrder)
			}
			if r.Privacy()["accountant"] != tc.accountant {
				t.Errorf("privacy %v", r.Privacy())
			}
			var b strings.Builder
			if err := r.WriteText(&b); err != nil || !strings.HasPrefix(b.String(), tc.accountant+" accountant: 200 releases") {
				t.Errorf("text %q, %v", b.String(), err)
			}
		})
	}
}
