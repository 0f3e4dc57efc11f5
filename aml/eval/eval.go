package eval

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"graphfed/gnn"
)

// The AML job's evaluation: each bank scores the transactions it sends
// (every transaction once, by its sending bank) and reports counts; the
// job pools them. Scores travel as the learners' string keys (test_tp,
// test_typ_<name>_pos, ...) and are read here only.

// PooledF1 is the laundering-class F1, precision and recall over the
// union of the banks' scored transactions, from their true-positive,
// false-positive and false-negative counts under prefix ("test_",
// "val_", "test_tuned_").
func PooledF1(scores map[string]map[string]float64, prefix string) (f1, precision, recall float64) {
	var tp, fp, fn float64
	for _, sc := range scores {
		tp += sc[prefix+"tp"]
		fp += sc[prefix+"fp"]
		fn += sc[prefix+"fn"]
	}
	if tp == 0 {
		return 0, 0, 0
	}
	return gnn.F1(tp, fp, fn), tp / (tp + fp), tp / (tp + fn)
}

// TypologyRecall is the test recall of one laundering typology, pooled
// over the banks, at the arg-max decision.
type TypologyRecall struct {
	Recall float64 `json:"recall"`
	Rows   int     `json:"rows"` // laundering test transactions of the typology
}

// TypologyRecalls pools the banks' test_typ_<name>_pos and _tp counts into
// recall by typology; nil when no bank counted any.
func TypologyRecalls(final map[string]map[string]float64) map[string]TypologyRecall {
	pos, tp := map[string]float64{}, map[string]float64{}
	for _, sc := range final {
		for k, v := range sc {
			name, ok := strings.CutPrefix(k, "test_typ_")
			if !ok {
				continue
			}
			if n, ok := strings.CutSuffix(name, "_pos"); ok {
				pos[n] += v
			} else if n, ok := strings.CutSuffix(name, "_tp"); ok {
				tp[n] += v
			}
		}
	}
	if len(pos) == 0 {
		return nil
	}
	out := map[string]TypologyRecall{}
	for n, p := range pos {
		out[n] = TypologyRecall{Rows: int(p), Recall: tp[n] / p}
	}
	return out
}

// WriteTypologyTable prints recall by typology, largest first.
func WriteTypologyTable(w io.Writer, rec map[string]TypologyRecall) error {
	if rec == nil {
		return nil
	}
	names := make([]string, 0, len(rec))
	for n := range rec {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := rec[b].Rows - rec[a].Rows; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	if _, err := fmt.Fprintf(w, "test recall by typology (laundering rows, pooled over banks, arg-max decision):\n"); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := fmt.Fprintf(w, "  %-15s %6d rows  recall %.3f\n", n, rec[n].Rows, rec[n].Recall); err != nil {
			return err
		}
	}
	return nil
}

// Scores are the AML job's pooled figures at its end.
type Scores struct {
	TestF1, TestPrecision, TestRecall float64
	ValF1                             float64
	// TunedF1 is the test F1 at each bank's own validation-tuned
	// threshold.
	TunedF1 float64
	// Pooled is the F1 at one threshold chosen on the banks' pooled
	// validation counts (PooledOperatingPoint); HasPooled when the
	// banks reported grid counts.
	Pooled    OperatingPoint
	HasPooled bool
	Typology  map[string]TypologyRecall // nil: no typology counts
}

// Score pools the banks' final scores.
func Score(final map[string]map[string]float64) (Scores, error) {
	var s Scores
	s.TestF1, s.TestPrecision, s.TestRecall = PooledF1(final, "test_")
	s.ValF1, _, _ = PooledF1(final, "val_")
	s.TunedF1, _, _ = PooledF1(final, "test_tuned_")
	s.Typology = TypologyRecalls(final)
	op, ok, err := PooledOperatingPoint(final)
	if err != nil {
		return s, fmt.Errorf("job: aml scores: %w", err)
	}
	s.Pooled, s.HasPooled = op, ok
	return s, nil
}
