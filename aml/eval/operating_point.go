package eval

import (
	"fmt"
	"strings"

	"graphfed/aml/amlworld"
	"graphfed/aml/edgegnn"
	"graphfed/gnn"
)

// The operating point a federated AML job reports beside the arg-max one.
// EvaluateFinal counts each bank's validation and test transactions at
// every threshold of edgegnn.DecisionGrid; pooled over banks, the validation
// counts choose the threshold (PooledOperatingPoint) and the test counts
// at that threshold give a test F1 chosen on validation data alone. Only
// counts leave a bank, as for the arg-max F1; no score does.

// gridKey is the score key of count c ("tp", "fp" or "fn") of split
// ("val" or "test") at grid point j: "val_g12_tp".
func gridKey(split string, j int, c string) string {
	return fmt.Sprintf("%s_g%d_%s", split, j, c)
}

// WithoutGridCounts returns scores without the grid counts, which are
// hundreds of keys meant for pooling, not for reading in a log line, and
// how many it left out.
func WithoutGridCounts(scores map[string]float64) (map[string]float64, int) {
	out := make(map[string]float64, len(scores))
	n := 0
	for k, v := range scores {
		if isGridKey(k) {
			n++
			continue
		}
		out[k] = v
	}
	return out, n
}

// isGridKey reports whether k has gridKey's form, <split>_g<digits>_<count>.
func isGridKey(k string) bool {
	for _, split := range []string{"val_g", "test_g"} {
		rest, ok := strings.CutPrefix(k, split)
		if !ok {
			continue
		}
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i > 0 && i < len(rest) && rest[i] == '_' {
			return true
		}
	}
	return false
}

// PutGridCounts writes the confusion counts of margins against labels at
// every threshold of grid under split's grid keys.
func PutGridCounts(out map[string]float64, split string, grid []float32, margins []float32, labels []int32) error {
	counts, err := edgegnn.GridCounts(margins, labels, grid)
	if err != nil {
		return err
	}
	for j, c := range counts {
		out[gridKey(split, j, "tp")] = float64(c.TP)
		out[gridKey(split, j, "fp")] = float64(c.FP)
		out[gridKey(split, j, "fn")] = float64(c.FN)
	}
	return nil
}

// OperatingPoint is a job's decision threshold chosen on pooled validation
// counts, and the pooled test scores at it.
type OperatingPoint struct {
	Threshold     float32 // margin threshold, relative to the arg-max decision 0
	ValF1         float64 // pooled validation F1 at Threshold
	TestF1        float64 // pooled test F1 at Threshold
	TestPrecision float64
	TestRecall    float64
}

// PooledOperatingPoint sums the banks' grid counts (final scores by
// client, as EvaluateFinal writes them) and returns the threshold of
// edgegnn.DecisionGrid that maximizes pooled validation F1 with the test
// scores there. ok is false when no bank reported grid counts.
func PooledOperatingPoint(final map[string]map[string]float64) (op OperatingPoint, ok bool, err error) {
	grid := edgegnn.DecisionGrid()
	n := len(grid)
	sum := func(split, c string) ([]float64, bool) {
		v, any := make([]float64, n), false
		for _, sc := range final {
			for j := range n {
				x, has := sc[gridKey(split, j, c)]
				v[j] += x
				any = any || has
			}
		}
		return v, any
	}
	vtp, ok := sum("val", "tp")
	if !ok {
		return OperatingPoint{}, false, nil
	}
	vfp, _ := sum("val", "fp")
	vfn, _ := sum("val", "fn")
	j, vf1, err := edgegnn.PooledThreshold(grid, vtp, vfp, vfn)
	if err != nil {
		return OperatingPoint{}, false, fmt.Errorf("agent: pooled operating point: %w", err)
	}
	ttp, _ := sum("test", "tp")
	tfp, _ := sum("test", "fp")
	tfn, _ := sum("test", "fn")
	op = OperatingPoint{Threshold: grid[j], ValF1: vf1}
	if tp := ttp[j]; tp > 0 {
		op.TestF1 = gnn.F1(tp, tfp[j], tfn[j])
		op.TestPrecision, op.TestRecall = tp/(tp+tfp[j]), tp/(tp+tfn[j])
	}
	return op, true, nil
}

// TypologyKey names typology t (an amlworld.Typology, or -1 for laundering
// outside every listed attempt) in score keys: "FAN-OUT" becomes "fan_out".
func TypologyKey(t int8) string {
	if t < 0 {
		return "unlisted"
	}
	b := []byte(amlworld.Typology(t).String())
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c == '-' || c == ' ':
			b[i] = '_'
		}
	}
	return string(b)
}
