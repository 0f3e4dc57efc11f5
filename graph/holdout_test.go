package graph

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestHoldOutValidation(t *testing.T) {
	d, err := parseLightGCN(
		strings.NewReader("0 1 2 3 4 5 6 7 8 9\n1 4\n2 1 7\n3\n4 0 1 2 3\n"),
		strings.NewReader("0 10\n1 11\n"), "train.txt", "test.txt")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		frac     float64
		wantHeld []int // per user
	}{
		{0.2, []int{2, 0, 1, 0, 1}},
		{0.5, []int{5, 0, 1, 0, 2}},
		{0.99, []int{8, 0, 1, 0, 3}}, // never every item
		{0.01, []int{1, 0, 1, 0, 1}}, // at least one from a user with two
	}
	for _, tc := range tests {
		v, err := HoldOutValidation(d, tc.frac, 7)
		if err != nil {
			t.Fatalf("frac %v: %v", tc.frac, err)
		}
		if err := v.Validate(); err != nil {
			t.Fatalf("frac %v: result invalid: %v", tc.frac, err)
		}
		for u := range d.Users {
			held, kept := v.TestItems(u), v.TrainItems(u)
			if len(held) != tc.wantHeld[u] {
				t.Errorf("frac %v user %d: %d held out, want %d", tc.frac, u, len(held), tc.wantHeld[u])
			}
			// The two parts partition the user's training items; test.txt is unused.
			both := slices.Sorted(slices.Values(append(slices.Clone(held), kept...)))
			if !slices.Equal(both, d.TrainItems(u)) {
				t.Errorf("frac %v user %d: held %v + kept %v is not train %v", tc.frac, u, held, kept, d.TrainItems(u))
			}
		}
		again, _ := HoldOutValidation(d, tc.frac, 7)
		if !reflect.DeepEqual(rows(again.Test), rows(v.Test)) {
			t.Errorf("frac %v: not deterministic given the seed", tc.frac)
		}
	}
	a, _ := HoldOutValidation(d, 0.5, 1)
	b, _ := HoldOutValidation(d, 0.5, 2)
	if reflect.DeepEqual(rows(a.Test), rows(b.Test)) {
		t.Error("seeds 1 and 2 held out the same items")
	}
	for _, bad := range []float64{0, 1, -0.1, 2} {
		if _, err := HoldOutValidation(d, bad, 1); err == nil {
			t.Errorf("fraction %v accepted", bad)
		}
	}
}
