package lpsfed

import "fmt"

// Validation held-out items (Data.Val) let a job select a model — the
// round of best validation score — without looking at the test split:
// the validation items are ranked exactly as the test items are (all of
// the client's items, the user's training items left out), by the same
// Evaluate, against the other held-out set.

// validateVal checks Data.Val as Validate checks Test: sorted distinct
// ids of the catalog, disjoint from the user's training items.
func (d *Data) validateVal() error {
	if d.Val == nil {
		return nil
	}
	if len(d.Val) != d.Users {
		return fmt.Errorf("lpsfed: data: %d validation lists for %d users", len(d.Val), d.Users)
	}
	for u, it := range d.Val {
		for k, i := range it {
			if i < 0 || int(i) >= d.Items || (k > 0 && it[k-1] >= i) {
				return fmt.Errorf("lpsfed: data: validation items of user %d are not sorted distinct ids below %d", u, d.Items)
			}
			if hasItem(d.Train[u], i) {
				return fmt.Errorf("lpsfed: data: item %d of user %d is both train and validation", i, u)
			}
		}
	}
	return nil
}

// EvaluateOn scores the model against held (per user, sorted distinct
// items of the catalog, none of them training items) instead of
// Data.Test: Evaluate on a copy of the data whose Test is held, scoring
// every user with held-out items or a fixed seeded sample of limit of
// them. The model's data is restored before it returns.
func (m *Model) EvaluateOn(held [][]int32, limit int) Scores {
	orig, users := m.data, m.evalUser
	cp := *orig
	cp.Test = held
	m.data, m.evalUser = &cp, evalUsers(&cp, limit, m.cfg.Seed)
	defer func() { m.data, m.evalUser = orig, users }()
	return m.Evaluate()
}

// addValidation adds the validation scores to a client's metrics, named
// val_<metric>, when its data has a validation split.
func (l *Learner) addValidation(out map[string]float64) {
	if l.model.data.Val == nil {
		return
	}
	s := l.model.EvaluateOn(l.model.data.Val, l.model.cfg.ValUsers)
	out[fmt.Sprintf("val_recall_at_%d", s.K)] = s.Recall
	out[fmt.Sprintf("val_ndcg_at_%d", s.K)] = s.NDCG
	out["val_users"] = float64(s.Users)
}
