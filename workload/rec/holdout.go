package rec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"graphfed/graph"
)

// Held-out splits a dataset's interactions can be cut by.
const (
	// HoldoutLightGCN keeps the dataset's own train.txt/test.txt (for
	// Gowalla, Yelp2018 and Amazon-Book LightGCN's published split): the
	// default, which the README's figures use.
	HoldoutLightGCN = "lightgcn"
	// HoldoutRandom pools train.txt and test.txt and splits every user's
	// interactions at random into train, validation and test (LPSFed,
	// §4.1: "split into training, validation, and test sets in an 8:1:1
	// ratio").
	HoldoutRandom = "random"
)

// Holdout is how a dataset's interactions are cut into train, validation
// and test: the dataset's own split, or a seeded random split with the
// given shares.
type Holdout struct {
	Kind             string  // HoldoutLightGCN (also when empty) or HoldoutRandom
	Train, Val, Test float64 // HoldoutRandom: shares, summing to 1
	Seed             uint64  // HoldoutRandom: seed of the per-user shuffles
}

// PaperHoldout is LPSFed's 8:1:1 split under seed.
func PaperHoldout(seed uint64) Holdout {
	return Holdout{Kind: HoldoutRandom, Train: 0.8, Val: 0.1, Test: 0.1, Seed: seed}
}

// ParseHoldout reads a --split spec: "lightgcn" (or "") or
// "random:TRAIN,VAL,TEST", three non-negative shares summing to 1 (within
// 1e-6) with TRAIN and TEST positive, such as random:0.8,0.1,0.1. The seed
// is not part of the spec.
func ParseHoldout(spec string) (Holdout, error) {
	const op = "rec: parse split"
	kind, args, hasArgs := strings.Cut(strings.TrimSpace(spec), ":")
	switch kind {
	case "", HoldoutLightGCN:
		if hasArgs {
			return Holdout{}, fmt.Errorf("%s %q: %s takes no shares", op, spec, HoldoutLightGCN)
		}
		return Holdout{Kind: HoldoutLightGCN}, nil
	case HoldoutRandom:
	default:
		return Holdout{}, fmt.Errorf("%s %q: want %s or %s:TRAIN,VAL,TEST", op, spec, HoldoutLightGCN, HoldoutRandom)
	}
	parts := strings.Split(args, ",")
	if !hasArgs || len(parts) != 3 {
		return Holdout{}, fmt.Errorf("%s %q: want three shares, %s:TRAIN,VAL,TEST", op, spec, HoldoutRandom)
	}
	var f [3]float64
	for k, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1 {
			return Holdout{}, fmt.Errorf("%s %q: share %q is not a number in [0, 1]", op, spec, p)
		}
		f[k] = v
	}
	h := Holdout{Kind: HoldoutRandom, Train: f[0], Val: f[1], Test: f[2]}
	if err := h.check(); err != nil {
		return Holdout{}, fmt.Errorf("%s %q: %w", op, spec, err)
	}
	return h, nil
}

// check validates a random split's shares.
func (h Holdout) check() error {
	if h.Kind != HoldoutRandom {
		return nil
	}
	if !(h.Train > 0) || !(h.Test > 0) || !(h.Val >= 0) || math.Abs(h.Train+h.Val+h.Test-1) > 1e-6 {
		return fmt.Errorf("shares %g,%g,%g: want train and test > 0, validation ≥ 0, summing to 1", h.Train, h.Val, h.Test)
	}
	return nil
}

// String is the spec ParseHoldout reads back.
func (h Holdout) String() string {
	if h.Kind != HoldoutRandom {
		return HoldoutLightGCN
	}
	return fmt.Sprintf("%s:%g,%g,%g", HoldoutRandom, h.Train, h.Val, h.Test)
}

// Random reports whether h re-splits the dataset.
func (h Holdout) Random() bool { return h.Kind == HoldoutRandom }

// Dataset is a dataset with an optional validation split: Val is nil
// unless a random holdout made one, and has d's shape.
type Dataset struct {
	*graph.Interactions
	Val *graph.CSR
}

// Apply cuts d by h. The LightGCN holdout returns d as it is. A random
// holdout pools every user's train and test items (the union) and, per
// user, in a seeded random order, takes ⌊n·Test⌋ test items and
// ⌊n·Val⌋ validation items, at least one of each when its share is
// positive and the user has enough items, so that every user keeps at
// least one training item: n = 1 trains only, n = 2 gives one test item,
// n ≥ 3 one of each at least. Per user, as the authors' split_data_by_user
// does (their released code, with max(1, int(n·ratio))): a global split
// of all interactions would leave light users without test items and
// others without training items. The result shares no memory with d.
func (h Holdout) Apply(d *graph.Interactions) (Dataset, error) {
	const op = "rec: holdout"
	if err := d.Validate(); err != nil {
		return Dataset{}, fmt.Errorf("%s: %w", op, err)
	}
	if !h.Random() {
		return Dataset{Interactions: d}, nil
	}
	if err := h.check(); err != nil {
		return Dataset{}, fmt.Errorf("%s: %w", op, err)
	}
	rng := rand.New(rand.NewPCG(h.Seed, 0x3811))
	mats := [3]*graph.CSR{}
	for k := range mats {
		mats[k] = &graph.CSR{Rows: d.Users, Cols: d.Items, RowPtr: make([]int, d.Users+1)}
	}
	var items []int32
	for u := range d.Users {
		items = append(append(items[:0], d.TrainItems(u)...), d.TestItems(u)...)
		slices.Sort(items)
		items = slices.Compact(items)
		rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		nTest, nVal := h.counts(len(items))
		cuts := [3][]int32{items[nTest+nVal:], items[nTest : nTest+nVal], items[:nTest]} // train, val, test
		for k, c := range cuts {
			row := slices.Clone(c)
			slices.Sort(row)
			mats[k].ColIdx = append(mats[k].ColIdx, row...)
			mats[k].RowPtr[u+1] = len(mats[k].ColIdx)
		}
	}
	out := &graph.Interactions{Name: d.Name, Users: d.Users, Items: d.Items, Train: mats[0], Test: mats[2]}
	return Dataset{Interactions: out, Val: mats[1]}, nil
}

// counts is how many of a user's n items are held out for test and for
// validation.
func (h Holdout) counts(n int) (test, val int) {
	take := func(share float64, left int) int {
		if share == 0 || left < 2 {
			return 0
		}
		return min(max(int(float64(n)*share), 1), left-1)
	}
	test = take(h.Test, n)
	val = take(h.Val, n-test)
	return test, val
}
