// Package eval is the AML job's evaluation: each bank scores the
// transactions it sends and reports counts under string keys (test_tp,
// val_g<j>_fp, test_typ_<name>_pos, ...), which the learner writes with
// PutGridCounts and TypologyKey and the job pools here: laundering-class
// F1, precision and recall over all banks (PooledF1, with gnn.F1, the one
// F1 formula), the operating point chosen on the pooled validation counts
// (PooledOperatingPoint), recall by typology (TypologyRecalls) and all of
// them at once (Score).
package eval
