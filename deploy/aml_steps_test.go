package deploy

import "testing"

func TestAMLLocalSteps(t *testing.T) {
	for _, tc := range []struct {
		name          string
		sizes         []int
		batch, rounds int
		want          int
	}{
		{"demo-sized banks keep the default", []int{9000, 11000, 10000}, 512, 12, DefaultAMLLocalSteps},
		{"big banks: two passes of the median", []int{300000, 450000, 400000, 5000}, 512, 12, 131},
		{"median, not mean, of an even count", []int{100000, 200000, 300000, 1000000}, 512, 10, 118},
		{"no banks", nil, 512, 12, DefaultAMLLocalSteps},
		{"bad batch", []int{1 << 20}, 0, 12, DefaultAMLLocalSteps},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AMLLocalSteps(tc.sizes, tc.batch, tc.rounds); got != tc.want {
				t.Fatalf("AMLLocalSteps(%v, %d, %d) = %d, want %d", tc.sizes, tc.batch, tc.rounds, got, tc.want)
			}
		})
	}
}
