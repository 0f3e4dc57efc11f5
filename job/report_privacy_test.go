package job

import (
	"strings"
	"testing"
)

// TestProgressClaims: the progress line claims the embedding target only
// where the spending meets it, and never calls the model channel DP at
// σ1 = 1e-3's astronomical ε.
func TestProgressClaims(t *testing.T) {
	target := SimPrivacy{NodeTarget: 8}
	cases := []struct {
		name              string
		node, client      float64
		p                 SimPrivacy
		want, mustNotHave string
	}{
		{"target met", 7.9, 2.4e11, target, "emb DP ε_p90=7.9≤8", "model DP"},
		{"target exactly met", 8, 2.4e11, target, "emb DP ε_p90=8≤8", "model DP"},
		{"rho grew after the last release", 10.7, 2.4e11, target, "emb ε_p90=10.7 at the latest ρ (target 8 held at release-time ρ)", "≤8"},
		{"no target", 450, 2.4e11, SimPrivacy{}, "emb ε_p90=450", "DP ε_p90"},
		{"small model ε", 1, 3, SimPrivacy{}, "model DP ε=3", "no-DP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := progressClaims(c.node, c.client, c.p)
			if !strings.Contains(got, c.want) || strings.Contains(got, c.mustNotHave) {
				t.Fatalf("%q: want %q and not %q", got, c.want, c.mustNotHave)
			}
		})
	}
}
