package rec

import (
	"math"
	"slices"
	"strings"
	"testing"

	"graphfed/graph"
)

func TestParseHoldout(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want Holdout
		bad  bool
	}{
		{spec: "", want: Holdout{Kind: HoldoutLightGCN}},
		{spec: "lightgcn", want: Holdout{Kind: HoldoutLightGCN}},
		{spec: "random:0.8,0.1,0.1", want: Holdout{Kind: HoldoutRandom, Train: 0.8, Val: 0.1, Test: 0.1}},
		{spec: " random:0.9, 0, 0.1 ", want: Holdout{Kind: HoldoutRandom, Train: 0.9, Test: 0.1}},
		{spec: "random:0.7,0.1,0.2", want: Holdout{Kind: HoldoutRandom, Train: 0.7, Val: 0.1, Test: 0.2}},
		{spec: "lightgcn:0.8,0.1,0.1", bad: true},
		{spec: "random", bad: true},
		{spec: "random:", bad: true},
		{spec: "random:0.8,0.2", bad: true},
		{spec: "random:0.8,0.1,0.1,0", bad: true},
		{spec: "random:0.8,0.1,0.2", bad: true}, // sums to 1.1
		{spec: "random:0,0.5,0.5", bad: true},   // no training share
		{spec: "random:0.9,0.1,0", bad: true},   // no test share
		{spec: "random:1.2,-0.1,-0.1", bad: true},
		{spec: "random:NaN,0.1,0.1", bad: true},
		{spec: "random:0.8,x,0.1", bad: true},
		{spec: "public", bad: true},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			h, err := ParseHoldout(tc.spec)
			if tc.bad {
				if err == nil {
					t.Fatalf("ParseHoldout(%q) = %+v, want an error", tc.spec, h)
				}
				if !strings.Contains(err.Error(), "split") {
					t.Fatalf("error %q does not name the operation", err)
				}
				return
			}
			if err != nil || h != tc.want {
				t.Fatalf("ParseHoldout(%q) = %+v, %v; want %+v", tc.spec, h, err, tc.want)
			}
			if back, err := ParseHoldout(h.String()); err != nil || back != h {
				t.Fatalf("%q does not read back: %+v, %v", h.String(), back, err)
			}
		})
	}
}

// FuzzParseHoldout: any spec parses or fails without panicking, and an
// accepted spec has valid shares and reads back from its String.
func FuzzParseHoldout(f *testing.F) {
	for _, s := range []string{"", "lightgcn", "random:0.8,0.1,0.1", "random:1,0,0", "random:0.5,0.5", "random:,,", "random:1e-3,0.999,0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		h, err := ParseHoldout(spec)
		if err != nil {
			return
		}
		if h.Random() {
			if !(h.Train > 0 && h.Test > 0 && h.Val >= 0) || math.Abs(h.Train+h.Val+h.Test-1) > 1e-6 {
				t.Fatalf("%q accepted with shares %+v", spec, h)
			}
		}
		back, err := ParseHoldout(h.String())
		if err != nil || back.Kind != h.Kind || math.Abs(back.Train-h.Train) > 1e-9 || math.Abs(back.Val-h.Val) > 1e-9 || math.Abs(back.Test-h.Test) > 1e-9 {
			t.Fatalf("%q → %+v → %q → %+v, %v", spec, h, h.String(), back, err)
		}
	})
}

// genWorld is a generated dataset (workload/rec's generator) for the
// protocol tests.
func genWorld(t *testing.T) *graph.Interactions {
	t.Helper()
	c := DefaultGenConfig()
	c.Users, c.Items = 600, 900
	d, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// pooled is user u's train and test items of d, sorted.
func pooled(d *graph.Interactions, u int) []int32 {
	it := append(slices.Clone(d.TrainItems(u)), d.TestItems(u)...)
	slices.Sort(it)
	return slices.Compact(it)
}

func TestHoldoutApply(t *testing.T) {
	d := genWorld(t)
	for _, tc := range []struct {
		name string
		h    Holdout
	}{
		{"paper 8:1:1", PaperHoldout(1)},
		{"7:1:2", Holdout{Kind: HoldoutRandom, Train: 0.7, Val: 0.1, Test: 0.2, Seed: 2}},
		{"9:0:1 no validation", Holdout{Kind: HoldoutRandom, Train: 0.9, Test: 0.1, Seed: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := tc.h.Apply(d)
			if err != nil {
				t.Fatal(err)
			}
			if ds.Users != d.Users || ds.Items != d.Items || ds.Val.Rows != d.Users || ds.Val.Cols != d.Items {
				t.Fatalf("shape %dx%d (val %dx%d), want %dx%d", ds.Users, ds.Items, ds.Val.Rows, ds.Val.Cols, d.Users, d.Items)
			}
			if err := ds.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := ds.Val.Validate(); err != nil {
				t.Fatal(err)
			}
			var total, nTest, nVal int
			for u := range d.Users {
				all := pooled(d, u)
				tr, te := ds.TrainItems(u), ds.TestItems(u)
				va, _ := ds.Val.Row(u)
				n := len(all)
				// Sizes: ⌊n·share⌋, at least one while a training item is left.
				wantTest, wantVal := tc.h.counts(n)
				if len(te) != wantTest || len(va) != wantVal || len(tr) != n-wantTest-wantVal {
					t.Fatalf("user %d of %d items: %d/%d/%d train/val/test, want %d/%d/%d", u, n, len(tr), len(va), len(te), n-wantTest-wantVal, wantVal, wantTest)
				}
				if n >= 10 && (wantTest != int(float64(n)*tc.h.Test) || wantVal != int(float64(n)*tc.h.Val)) {
					t.Fatalf("user %d of %d items: %d test, %d val, want the floor of the shares", u, n, wantTest, wantVal)
				}
				// No user lost: every user with an item keeps a training item.
				if n > 0 && len(tr) == 0 {
					t.Fatalf("user %d lost all of its %d items from train", u, n)
				}
				// Disjoint, and together the pooled items.
				got := append(append(slices.Clone(tr), va...), te...)
				slices.Sort(got)
				if !slices.Equal(got, all) {
					t.Fatalf("user %d: splits %v/%v/%v are not a partition of %v", u, tr, va, te, all)
				}
				total, nTest, nVal = total+n, nTest+len(te), nVal+len(va)
			}
			if share := float64(nTest) / float64(total); math.Abs(share-tc.h.Test) > 0.04 {
				t.Fatalf("test share %.3f, want about %g", share, tc.h.Test)
			}
			if share := float64(nVal) / float64(total); math.Abs(share-tc.h.Val) > 0.04 {
				t.Fatalf("validation share %.3f, want about %g", share, tc.h.Val)
			}
			// Deterministic by seed; another seed draws another split.
			again, _ := tc.h.Apply(d)
			if !slices.Equal(again.Test.ColIdx, ds.Test.ColIdx) || !slices.Equal(again.Val.ColIdx, ds.Val.ColIdx) {
				t.Fatal("same seed, different split")
			}
			other := tc.h
			other.Seed += 100
			o, _ := other.Apply(d)
			if slices.Equal(o.Test.ColIdx, ds.Test.ColIdx) {
				t.Fatal("another seed, same test split")
			}
		})
	}
}

func TestHoldoutLightGCNKeepsTheSplit(t *testing.T) {
	d := world()
	ds, err := Holdout{}.Apply(d)
	if err != nil || ds.Interactions != d || ds.Val != nil {
		t.Fatalf("LightGCN holdout changed the dataset: %+v, %v", ds, err)
	}
}

// Users with one, two and three items: train only; one test item; one of
// each.
func TestHoldoutSmallUsers(t *testing.T) {
	d := &graph.Interactions{Name: "s", Users: 3, Items: 4,
		Train: csr(4, []int32{0}, []int32{1}, []int32{0, 1}), Test: csr(4, nil, []int32{2}, []int32{3})}
	ds, err := PaperHoldout(5).Apply(d)
	if err != nil {
		t.Fatal(err)
	}
	for u, want := range [][3]int{{1, 0, 0}, {1, 0, 1}, {1, 1, 1}} {
		va, _ := ds.Val.Row(u)
		if got := [3]int{len(ds.TrainItems(u)), len(va), len(ds.TestItems(u))}; got != want {
			t.Fatalf("user %d: train/val/test %v, want %v", u, got, want)
		}
	}
}
