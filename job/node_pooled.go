package job

import (
	"maps"
	"slices"

	"graphfed/cefedgnn"
	"graphfed/gnn"
)

// Two macro-F1s of a node-classification job, both in its report:
//
//   - test_macro_f1 is the mean over clients of each client's macro-F1 on
//     its own test nodes, over the classes that occur in that client's
//     labels or predictions (scikit-learn's f1_score(average="macro") per
//     client). This is CE-FedGNN's "average macro F1 across all clients"
//     (Guo et al. 2026, Appendix D), the figure of its Table 2.
//   - test_macro_f1_pooled is one macro-F1 over the union of all clients'
//     test nodes, from the per-class counts the clients report
//     (cefedgnn.ClassCountKey): every client's true positives, false
//     positives and false negatives of a class are summed, then F1 per
//     class and the unweighted mean over the classes that occur in some
//     client's labels or predictions. It is the score of the one global
//     model on the whole test set, as a centralized run would report it.
//
// With clients cut along communities the two differ structurally: a
// client whose 60 test nodes are 56 of one class and 1 and 2 of two
// others averages its F1 over three classes, two of which rest on one or
// two nodes, while pooling puts every class on about a hundred nodes.

// macroF1Notes says in words what each macro-F1 key of a node report is,
// for readers of the JSON.
func macroF1Notes() map[string]string {
	return map[string]string{
		"test_macro_f1": "mean over clients of each client's macro-F1 on its own test nodes (classes present in that client's labels or predictions); " +
			"CE-FedGNN's 'average macro F1 across all clients' (its Table 2 metric)",
		"test_macro_f1_pooled": "macro-F1 over the union of all clients' test nodes: per-class counts summed over clients, then the mean F1 " +
			"over the classes present in some client's labels or predictions",
	}
}

// putPooledMacroF1 adds test_macro_f1_pooled and the notes on both
// macro-F1 keys to a node report when the clients reported per-class
// counts (CE-FedGNN's learners do); the report is unchanged otherwise.
func putPooledMacroF1(m map[string]any, final map[string]map[string]float64) {
	f1, ok := pooledMacroF1(final, "test_")
	if !ok {
		return
	}
	m["test_macro_f1_pooled"] = f1
	m["macro_f1_notes"] = macroF1Notes()
}

// pooledMacroF1 is the macro-F1 over the union of the clients' nodes
// scored under prefix ("test_"), from their per-class counts. ok is false
// when no client reported counts. Classes are numbered from 0 and every
// reporting client reports all of them, so the classes are those k for
// which some client has the key of k's true positives.
func pooledMacroF1(final map[string]map[string]float64, prefix string) (f1 float64, ok bool) {
	ids := slices.Sorted(maps.Keys(final)) // one summation order: the same bits every run
	var sum float64
	classes := 0
	for k := 0; ; k++ {
		var tp, fp, fn float64
		seen := false
		for _, id := range ids {
			sc := final[id]
			v, has := sc[cefedgnn.ClassCountKey(prefix, k, "tp")]
			if !has {
				continue
			}
			seen = true
			tp += v
			fp += sc[cefedgnn.ClassCountKey(prefix, k, "fp")]
			fn += sc[cefedgnn.ClassCountKey(prefix, k, "fn")]
		}
		if !seen {
			break
		}
		if tp+fp+fn > 0 {
			sum += gnn.F1(tp, fp, fn)
			classes++
		}
	}
	if classes == 0 {
		return 0, false
	}
	return sum / float64(classes), true
}
