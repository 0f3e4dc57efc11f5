package graph

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// checkEdgeAccounting verifies that every directed adjacency entry of d
// appears exactly once across the clients: inside its owner's Data.Adj when
// both ends share an owner, in its owner's Cross otherwise.
func checkEdgeAccounting(t *testing.T, d *Dataset, owner []int32, cgs []*ClientGraph) {
	t.Helper()
	type dir struct{ u, v int32 }
	seen := make(map[dir]int, d.Adj.NNZ())
	for c, cg := range cgs {
		if cg.Client != c {
			t.Errorf("client %d labelled %d", c, cg.Client)
		}
		if err := cg.Data.Validate(); err != nil {
			t.Errorf("client %d: %v", c, err)
		}
		for _, g := range cg.Global {
			if owner[g] != int32(c) {
				t.Errorf("client %d hosts node %d owned by %d", c, g, owner[g])
			}
		}
		for lu := 0; lu < cg.Data.N(); lu++ {
			cols, _ := cg.Data.Adj.Row(lu)
			for _, lv := range cols {
				seen[dir{cg.Global[lu], cg.Global[lv]}]++
			}
		}
		for _, e := range cg.Cross {
			u := cg.Global[e.Local]
			if e.RemoteOwner == int32(c) || owner[e.Remote] != e.RemoteOwner {
				t.Errorf("client %d: cross edge %d->%d names owner %d, real owner %d", c, u, e.Remote, e.RemoteOwner, owner[e.Remote])
			}
			seen[dir{u, e.Remote}]++
		}
	}
	total := 0
	for u := 0; u < d.N(); u++ {
		cols, _ := d.Adj.Row(u)
		for _, v := range cols {
			if k := seen[dir{int32(u), v}]; k != 1 {
				t.Errorf("edge %d->%d accounted %d times", u, v, k)
			}
			total++
		}
	}
	if len(seen) != total {
		t.Errorf("clients list %d directed edges, the graph has %d", len(seen), total)
	}
}

func TestSplitByOwner(t *testing.T) {
	d, err := LoadTSV(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		owner   []int32
		clients int
	}{
		{"one client", []int32{0, 0, 0, 0, 0, 0, 0, 0}, 1},
		{"halves", []int32{0, 0, 0, 0, 1, 1, 1, 1}, 2},
		{"interleaved", []int32{0, 1, 2, 0, 1, 2, 0, 1}, 3},
		{"empty client", []int32{0, 0, 2, 2, 0, 0, 2, 2}, 3},
		{"singletons", []int32{7, 6, 5, 4, 3, 2, 1, 0}, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cgs, err := SplitByOwner(d, tc.owner, tc.clients)
			if err != nil {
				t.Fatal(err)
			}
			if len(cgs) != tc.clients {
				t.Fatalf("%d clients, want %d", len(cgs), tc.clients)
			}
			checkEdgeAccounting(t, d, tc.owner, cgs)
			for _, cg := range cgs {
				if !slices.IsSorted(cg.Global) {
					t.Errorf("client %d: Global %v not ascending", cg.Client, cg.Global)
				}
				for l, g := range cg.Global {
					if cg.Data.Labels[l] != d.Labels[g] || cg.Data.Split[l] != d.Split[g] {
						t.Errorf("client %d local %d: label/split differ from global %d", cg.Client, l, g)
					}
					lc, lv := cg.Data.Features.Row(l)
					gc, gv := d.Features.Row(int(g))
					if !slices.Equal(lc, gc) || !slices.Equal(lv, gv) {
						t.Errorf("client %d local %d: features differ from global %d", cg.Client, l, g)
					}
				}
				if cg.Data.Classes != d.Classes || cg.Data.NumFeatures() != d.NumFeatures() {
					t.Errorf("client %d: %d classes %d features", cg.Client, cg.Data.Classes, cg.Data.NumFeatures())
				}
			}
		})
	}
}

func TestSplitByOwnerCopies(t *testing.T) {
	d, err := LoadTSV(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	cgs, err := SplitByOwner(d, make([]int32, d.N()), 1)
	if err != nil {
		t.Fatal(err)
	}
	cgs[0].Data.Labels[0] = 2
	cgs[0].Data.Features.Val[0] = 42
	if d.Labels[0] != 0 || d.Features.Val[0] != 1 {
		t.Error("client data aliases the dataset")
	}
}

func TestSplitByOwnerErrors(t *testing.T) {
	d, err := LoadTSV(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		owner   []int32
		clients int
		want    string
	}{
		{"short owner", []int32{0, 0}, 1, "2 owners for 8 nodes"},
		{"no clients", make([]int32, 8), 0, "0 clients"},
		{"owner out of range", []int32{0, 0, 0, 3, 0, 0, 0, 0}, 3, "node 3 owned by client 3"},
		{"negative owner", []int32{0, -1, 0, 0, 0, 0, 0, 0}, 3, "node 1 owned by client -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SplitByOwner(d, tc.owner, tc.clients)
			if err == nil || !strings.HasPrefix(err.Error(), "graph: split by owner: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestMaskAndNodes(t *testing.T) {
	d, err := LoadTSV(tinyDir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Nodes(SplitTrain), []int32{0, 2, 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("train nodes %v, want %v", got, want)
	}
	if got, want := d.Mask(SplitTest), []bool{false, false, false, false, false, true, true, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("test mask %v, want %v", got, want)
	}
	if got := d.Nodes(SplitNone); !reflect.DeepEqual(got, []int32{7}) {
		t.Errorf("unsplit nodes %v", got)
	}
}

func TestRandomSplit(t *testing.T) {
	tests := []struct {
		n                  int
		train, val         float64
		wantTrain, wantVal int
		wantTest           int
	}{
		{100, 0.6, 0.2, 60, 20, 20},
		{10, 0.25, 0.25, 3, 3, 4}, // 2.5 rounds away from zero
		{7, 0, 0, 0, 0, 7},
		{5, 1, 0.5, 5, 0, 0},
		{5, -1, math.NaN(), 0, 0, 5},
		{0, 0.5, 0.5, 0, 0, 0},
		{-3, 0.5, 0.5, 0, 0, 0},
	}
	for _, tc := range tests {
		s := RandomSplit(tc.n, tc.train, tc.val, seeded(1))
		d := &Dataset{Split: s}
		if got := [3]int{d.Count(SplitTrain), d.Count(SplitVal), d.Count(SplitTest)}; got != [3]int{tc.wantTrain, tc.wantVal, tc.wantTest} {
			t.Errorf("RandomSplit(%d, %v, %v) counts %v, want %v", tc.n, tc.train, tc.val, got, [3]int{tc.wantTrain, tc.wantVal, tc.wantTest})
		}
		if again := RandomSplit(tc.n, tc.train, tc.val, seeded(1)); !slices.Equal(s, again) {
			t.Errorf("RandomSplit(%d, …) not deterministic", tc.n)
		}
	}
}

func TestStratifiedSplit(t *testing.T) {
	labels := make([]int32, 0, 110)
	for range 100 {
		labels = append(labels, 0)
	}
	for range 10 {
		labels = append(labels, 2)
	}
	labels = append(labels, -1, -1)
	s := StratifiedSplit(labels, 0.1, 0.3, seeded(3))
	per := map[int32][4]int{}
	for v, y := range labels {
		c := per[y]
		c[s[v]]++
		per[y] = c
	}
	want := map[int32][4]int{
		0:  {SplitTrain: 10, SplitVal: 30, SplitTest: 60},
		2:  {SplitTrain: 1, SplitVal: 3, SplitTest: 6},
		-1: {SplitNone: 2},
	}
	if !reflect.DeepEqual(per, want) {
		t.Errorf("per-class split counts %v, want %v", per, want)
	}
}
