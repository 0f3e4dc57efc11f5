package agent

import (
	"fmt"
	"testing"
	"time"
)

func TestHelloBackoff(t *testing.T) {
	const retry = time.Second
	for _, tt := range []struct {
		try      int
		min, max time.Duration
	}{
		{0, retry, retry},
		{1, 1500 * time.Millisecond, 2500 * time.Millisecond},
		{2, 3 * time.Second, 5 * time.Second},
		{5, 24 * time.Second, 40 * time.Second},
		{9, 24 * time.Second, 40 * time.Second}, // capped
	} {
		for _, c := range []string{"client-0", "client-1", "bank-a"} {
			d := helloBackoff(retry, c, tt.try)
			if d < tt.min || d >= tt.max+1 {
				t.Errorf("helloBackoff(%v, %s, %d) = %v, want in [%v, %v)", retry, c, tt.try, d, tt.min, tt.max)
			}
			if d != helloBackoff(retry, c, tt.try) {
				t.Errorf("helloBackoff(%s, %d) is not deterministic", c, tt.try)
			}
		}
	}
	// The jitter spreads clients: 100 clients' third waits are not all equal.
	seen := map[time.Duration]bool{}
	for i := range 100 {
		seen[helloBackoff(retry, fmt.Sprintf("client-%d", i), 3)] = true
	}
	if len(seen) < 90 {
		t.Fatalf("100 clients got %d distinct waits; the jitter does not spread them", len(seen))
	}
}
