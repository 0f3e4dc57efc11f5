package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"graphfed/agent"
	"graphfed/graph"
	"graphfed/workload/aml"
)

// finalProgress shows the banks' final evaluation, which at AMLworld scale
// takes a while after the last round, as one bar: seeds scored by every
// bank of those they score in all.
type finalProgress struct {
	mu    sync.Mutex
	done  []int
	total int
	bar   *progress
}

func newFinalProgress(views []*aml.BankView) *finalProgress {
	f := &finalProgress{done: make([]int, len(views))}
	for _, v := range views {
		for e, home := range v.Home {
			if home && v.Split[e] != graph.SplitTrain {
				f.total++
			}
		}
	}
	return f
}

// bank returns bank i's AMLConfig.OnFinalScore.
func (f *finalProgress) bank(i int) func(done, total int) {
	return func(done, _ int) {
		f.mu.Lock()
		f.done[i] = done
		sum := 0
		for _, d := range f.done {
			sum += d
		}
		if f.bar == nil {
			f.bar = newProgress("final evaluation", f.total)
		}
		bar := f.bar
		f.mu.Unlock()
		bar.update(sum, "seeds scored (every home validation and test transaction)")
	}
}

func (f *finalProgress) finish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bar != nil {
		f.bar.finish()
	}
}

// typologyRecall pools the banks' test_typ_<name>_pos and _tp counts into
// recall by typology: name → {rows, recall}; nil when no bank counted any.
func typologyRecall(final map[string]map[string]float64) map[string]any {
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
	out := map[string]any{}
	for n, p := range pos {
		out[n] = map[string]any{"rows": int(p), "recall": tp[n] / p}
	}
	return out
}

// writeTypologyTable prints recall by typology, largest first.
func writeTypologyTable(w io.Writer, rec map[string]any) error {
	if rec == nil {
		return nil
	}
	names := make([]string, 0, len(rec))
	for n := range rec {
		names = append(names, n)
	}
	rows := func(n string) int { return rec[n].(map[string]any)["rows"].(int) }
	slices.SortFunc(names, func(a, b string) int {
		if d := rows(b) - rows(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	if _, err := fmt.Fprintf(w, "test recall by typology (laundering rows, pooled over banks, arg-max decision):\n"); err != nil {
		return err
	}
	for _, n := range names {
		m := rec[n].(map[string]any)
		if _, err := fmt.Fprintf(w, "  %-15s %6d rows  recall %.3f\n", n, m["rows"], m["recall"]); err != nil {
			return err
		}
	}
	return nil
}

// putOperatingPoint adds the F1 at the threshold chosen on the banks'
// pooled validation counts (agent.PooledOperatingPoint) to an AML report's
// metrics, when the banks reported grid counts.
func putOperatingPoint(metrics map[string]any, final map[string]map[string]float64) error {
	op, ok, err := agent.PooledOperatingPoint(final)
	if err != nil || !ok {
		return err
	}
	metrics["test_f1_illicit_pooled"] = op.TestF1
	metrics["test_precision_illicit_pooled"] = op.TestPrecision
	metrics["test_recall_illicit_pooled"] = op.TestRecall
	metrics["val_f1_illicit_pooled"] = op.ValF1
	metrics["threshold_pooled"] = op.Threshold
	return nil
}
