package aggregator

import (
	"maps"
	"testing"
)

func TestCollabSelf(t *testing.T) {
	for _, tt := range []struct {
		name string
		w    map[string][]float64
		want map[string]float64
	}{
		{"empty", map[string][]float64{}, map[string]float64{}},
		{"diagonal in id order", map[string][]float64{
			"b": {0.2, 0.8},
			"a": {0.6543, 0.3457},
		}, map[string]float64{"a": 0.654, "b": 0.8}},
		{"short row skipped", map[string][]float64{
			"a": {1},
			"b": {1},
		}, map[string]float64{"a": 1}},
	} {
		if got := collabSelf(tt.w); !maps.Equal(got, tt.want) {
			t.Errorf("%s: collabSelf = %v, want %v", tt.name, got, tt.want)
		}
	}
}
