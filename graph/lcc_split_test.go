package graph

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestLargestComponent(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges []Edge
		want  []int32
	}{
		{"path plus triangle", 7, []Edge{{0, 1}, {2, 3}, {3, 4}, {2, 4}, {5, 6}}, []int32{2, 3, 4}},
		{"tie goes to the smallest id", 4, []Edge{{2, 3}, {0, 1}}, []int32{0, 1}},
		{"all isolated", 3, nil, []int32{0}},
		{"connected", 3, []Edge{{0, 2}, {1, 2}}, []int32{0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := toyDataset(symEdges(t, tc.n, tc.edges), SplitTest)
			lcc, global, err := LargestComponent(d)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(global, tc.want) {
				t.Errorf("global %v, want %v", global, tc.want)
			}
			if err := lcc.Validate(); err != nil || lcc.N() != len(tc.want) || lcc.Name != d.Name {
				t.Errorf("lcc %q with %d nodes (err %v)", lcc.Name, lcc.N(), err)
			}
			for l, g := range global {
				if lcc.Labels[l] != d.Labels[g] || lcc.Features.ColIdx[l] != d.Features.ColIdx[g] {
					t.Errorf("local %d does not carry global %d's label and feature", l, g)
				}
			}
		})
	}
	// A one-directional entry still joins its ends.
	dir, err := FromEdges(3, []Edge{{2, 0}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, global, err := LargestComponent(toyDataset(dir, SplitTest)); err != nil || !slices.Equal(global, []int32{0, 2}) {
		t.Errorf("asymmetric: global %v, err %v", global, err)
	}
}

func TestParseSplitSpec(t *testing.T) {
	tests := []struct {
		in   string
		want SplitSpec
		err  string
	}{
		{"", SplitSpec{Kind: "public"}, ""},
		{"public", SplitSpec{Kind: "public"}, ""},
		{"random:0.2,0.4,0.4", SplitSpec{"random", 0.2, 0.4, 0.4}, ""},
		{"random: 0.6, 0.2 ,0.2", SplitSpec{"random", 0.6, 0.2, 0.2}, ""},
		{"random:1,0,0", SplitSpec{"random", 1, 0, 0}, ""},
		{"random:0.2,0.4", SplitSpec{}, "three fractions"},
		{"random:0.2,0.4,0.5", SplitSpec{}, "sum to"},
		{"random:0,0.5,0.5", SplitSpec{}, "no training nodes"},
		{"random:-0.2,0.6,0.6", SplitSpec{}, "not a number in [0,1]"},
		{"random:NaN,0.5,0.5", SplitSpec{}, "not a number"},
		{"random:x,0.5,0.5", SplitSpec{}, "not a number"},
		{"stratified:0.2,0.4,0.4", SplitSpec{}, "want public or random"},
	}
	for _, tc := range tests {
		got, err := ParseSplitSpec(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if again, err := ParseSplitSpec(got.String()); err != nil || again != got {
			t.Errorf("%q: String %q reads back as %+v, %v", tc.in, got.String(), again, err)
		}
	}
}

// TestApplySplit: the random split keeps the largest component, gives it
// round(0.2n)/round(0.4n)/rest over its labelled nodes, leaves unlabelled
// nodes out, is seeded, and "public" changes nothing.
func TestApplySplit(t *testing.T) {
	adj := symEdges(t, 1005, append(gridGraph(t, 40, 25).Edges(), Edge{1000, 1001}))
	d := toyDataset(adj, SplitTest)
	d.Labels[7] = -1
	spec, err := ParseSplitSpec("random:0.2,0.4,0.4")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ApplySplit(d, spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got.N() != 1000 {
		t.Fatalf("kept %d nodes, want the 1000 of the largest component", got.N())
	}
	labelled := 999
	wantTrain, wantVal := int(math.Round(0.2*float64(labelled))), int(math.Round(0.4*float64(labelled)))
	if tr, va, te, no := got.Count(SplitTrain), got.Count(SplitVal), got.Count(SplitTest), got.Count(SplitNone); tr != wantTrain || va != wantVal || te != labelled-tr-va || no != 1 || got.Split[7] != SplitNone {
		t.Errorf("train/val/test/none %d/%d/%d/%d, want %d/%d/%d/1 with node 7 unsplit", tr, va, te, no, wantTrain, wantVal, labelled-wantTrain-wantVal)
	}
	if d.Count(SplitTest) != d.N() {
		t.Error("ApplySplit changed its input")
	}
	again, _ := ApplySplit(d, spec, 3)
	other, _ := ApplySplit(d, spec, 4)
	if !slices.Equal(got.Split, again.Split) || slices.Equal(got.Split, other.Split) {
		t.Error("split not determined by the seed")
	}
	if same, err := ApplySplit(d, SplitSpec{Kind: "public"}, 3); err != nil || same != d {
		t.Errorf("public: %v, want the dataset unchanged", err)
	}
	if _, err := ApplySplit(d, SplitSpec{Kind: "odd"}, 3); err == nil {
		t.Error("unknown kind accepted")
	}
}

// FuzzParseSplitSpec: any accepted spec has fractions in [0,1] summing to
// one and reads back from its String.
func FuzzParseSplitSpec(f *testing.F) {
	for _, s := range []string{"", "public", "random:0.2,0.4,0.4", "random:1,0,0", "random:,,", "random:0.1,0.9,0,0", "random:1e-1,4e-1,.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := ParseSplitSpec(s)
		if err != nil {
			return
		}
		if spec.Kind == "random" {
			for _, x := range []float64{spec.Train, spec.Val, spec.Test} {
				if !(x >= 0 && x <= 1) {
					t.Fatalf("%q: fraction %v", s, x)
				}
			}
			if math.Abs(spec.Train+spec.Val+spec.Test-1) > 1e-6 || spec.Train == 0 {
				t.Fatalf("%q: fractions %+v", s, spec)
			}
		}
		again, err := ParseSplitSpec(spec.String())
		if err != nil || again != spec {
			t.Fatalf("%q: String %q reads back as %+v, %v", s, spec.String(), again, err)
		}
	})
}
