package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// LargestComponent returns the subgraph of d induced by its largest
// connected component (ties: the component holding the smallest node id),
// as PyG's LargestConnectedComponents transform, which FED-PUB's and
// FedGSP's data generators apply before splitting and partitioning. Global
// maps its node ids back to d's. Edges count in either direction, so an
// asymmetric adjacency still has the components of its symmetrisation. The
// result never aliases d.
func LargestComponent(d *Dataset) (lcc *Dataset, global []int32, err error) {
	if err := d.Validate(); err != nil {
		return nil, nil, fmt.Errorf("graph: largest component: %w", err)
	}
	n := d.N()
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	find := func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]] // path halving
			x = parent[x]
		}
		return x
	}
	for u := range n {
		cols, _ := d.Adj.Row(u)
		for _, v := range cols {
			a, b := find(int32(u)), find(v)
			if a != b {
				parent[max(a, b)] = min(a, b) // the root is the smallest id
			}
		}
	}
	size := make([]int, n)
	best := int32(0)
	for v := range int32(n) {
		r := find(v)
		size[r]++
		if size[r] > size[best] || size[r] == size[best] && r < best {
			best = r
		}
	}
	owner := make([]int32, n)
	for v := range int32(n) {
		if find(v) != best {
			owner[v] = 1
		}
	}
	parts, err := SplitByOwner(d, owner, 2)
	if err != nil {
		return nil, nil, fmt.Errorf("graph: largest component: %w", err)
	}
	parts[0].Data.Name = d.Name
	return parts[0].Data, parts[0].Global, nil
}

// SplitSpec says how node datasets get their train/validation/test split.
// The zero value (Kind "public") keeps the split the dataset ships with.
type SplitSpec struct {
	Kind             string // "public" or "random"
	Train, Val, Test float64
}

// ParseSplitSpec reads --split: "" or "public" keeps the dataset's own
// split; "random:TRAIN,VAL,TEST" (fractions ≥ 0 summing to 1, e.g. FedGSP's
// random:0.2,0.4,0.4) draws a fresh one over the largest connected
// component (see ApplySplit).
func ParseSplitSpec(s string) (SplitSpec, error) {
	if s == "" || s == "public" {
		return SplitSpec{Kind: "public"}, nil
	}
	rest, ok := strings.CutPrefix(s, "random:")
	if !ok {
		return SplitSpec{}, fmt.Errorf("graph: split %q: want public or random:TRAIN,VAL,TEST", s)
	}
	fields := strings.Split(rest, ",")
	if len(fields) != 3 {
		return SplitSpec{}, fmt.Errorf("graph: split %q: want three fractions TRAIN,VAL,TEST, got %d", s, len(fields))
	}
	var f [3]float64
	for i, x := range fields {
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 1 {
			return SplitSpec{}, fmt.Errorf("graph: split %q: fraction %q is not a number in [0,1]", s, x)
		}
		f[i] = v
	}
	if sum := f[0] + f[1] + f[2]; math.Abs(sum-1) > 1e-6 {
		return SplitSpec{}, fmt.Errorf("graph: split %q: fractions sum to %v, want 1", s, sum)
	}
	if f[0] == 0 {
		return SplitSpec{}, fmt.Errorf("graph: split %q: no training nodes", s)
	}
	return SplitSpec{Kind: "random", Train: f[0], Val: f[1], Test: f[2]}, nil
}

// String is the spec as ParseSplitSpec reads it.
func (s SplitSpec) String() string {
	if s.Kind != "random" {
		return "public"
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return "random:" + g(s.Train) + "," + g(s.Val) + "," + g(s.Test)
}

// ApplySplit returns d re-split by spec. "public" returns d unchanged.
// "random" follows FED-PUB's generator, which FedGSP's data come from: it
// keeps the largest connected component, then draws one seeded random
// permutation of its labelled nodes and cuts it into round(Train·n)
// training, round(Val·n) validation and the remaining test nodes, on the
// whole graph before any partitioning (so a node sampled into two
// overlapping clients has the same role at both, and every client's
// shares are the global fractions up to sampling noise). Unlabelled nodes
// get no split.
func ApplySplit(d *Dataset, spec SplitSpec, seed uint64) (*Dataset, error) {
	switch spec.Kind {
	case "", "public":
		return d, nil
	case "random":
	default:
		return nil, fmt.Errorf("graph: apply split: unknown kind %q", spec.Kind)
	}
	lcc, _, err := LargestComponent(d)
	if err != nil {
		return nil, fmt.Errorf("graph: apply split: %w", err)
	}
	var labelled []int32
	for v, y := range lcc.Labels {
		lcc.Split[v] = SplitNone
		if y >= 0 {
			labelled = append(labelled, int32(v))
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5b117))
	for k, s := range RandomSplit(len(labelled), spec.Train, spec.Val, rng) {
		lcc.Split[labelled[k]] = s
	}
	return lcc, nil
}
