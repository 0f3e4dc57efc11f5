package edgegnn

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestEdgeIndex(t *testing.T) {
	src := []int32{0, 1, 2, 2, 0, 3}
	dst := []int32{1, 2, 2, 0, 1, 3}
	for _, c := range []struct {
		name           string
		visible        []int32
		out0, in1, in2 []int32
		deg2, edges    int
	}{
		{"all", nil, []int32{0, 4}, []int32{0, 4}, []int32{1, 2}, 4, 6},
		{"subset", []int32{4, 2, 1, 4}, []int32{4}, []int32{4}, []int32{1, 2}, 3, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, err := NewIndex(4, src, dst, c.visible)
			if err != nil {
				t.Fatal(err)
			}
			if got := x.OutEdges(0); !slices.Equal(got, c.out0) {
				t.Errorf("out(0) = %v, want %v", got, c.out0)
			}
			if got := x.InEdges(1); !slices.Equal(got, c.in1) {
				t.Errorf("in(1) = %v, want %v", got, c.in1)
			}
			if got := x.InEdges(2); !slices.Equal(got, c.in2) {
				t.Errorf("in(2) = %v, want %v", got, c.in2)
			}
			if got := x.Degree(2); got != c.deg2 {
				t.Errorf("degree(2) = %d, want %d", got, c.deg2)
			}
			if x.NumEdges() != c.edges || x.NumGraphEdges() != 6 || x.NumNodes() != 4 {
				t.Errorf("counts %d/%d/%d", x.NumEdges(), x.NumGraphEdges(), x.NumNodes())
			}
		})
	}
	for _, c := range []struct {
		name     string
		n        int
		src, dst []int32
		visible  []int32
		want     string
	}{
		{"lengths", 4, src, dst[:5], nil, "destinations"},
		{"endpoint", 3, src, dst, nil, "outside [0,3)"},
		{"visible", 4, src, dst, []int32{6}, "edge 6 outside"},
	} {
		if _, err := NewIndex(c.n, c.src, c.dst, c.visible); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// checkBatch verifies the structural invariants every Batch must
// satisfy and returns a description of it for comparisons.
func checkBatch(t *testing.T, x *Index, b *Batch, seeds []int32, fanOut []int) string {
	t.Helper()
	L := len(fanOut)
	if b.Layers() != L || len(b.NumNodes) != L+1 || len(b.NumEdges) != L+1 {
		t.Fatalf("layers %d, counts %v %v", b.Layers(), b.NumNodes, b.NumEdges)
	}
	if !slices.Equal(b.Edges[:b.NumSeeds()], seeds) {
		t.Fatalf("seed rows %v, want %v", b.Edges[:b.NumSeeds()], seeds)
	}
	if b.NumNodes[0] != len(b.Nodes) || b.NumEdges[0] != len(b.Edges) || len(b.Degree) != len(b.Nodes) {
		t.Fatalf("input counts %v/%v for %d nodes and %d edges", b.NumNodes, b.NumEdges, len(b.Nodes), len(b.Edges))
	}
	for l := 1; l <= L; l++ {
		if b.NumNodes[l] > b.NumNodes[l-1] || b.NumEdges[l] > b.NumEdges[l-1] {
			t.Fatalf("counts not nested: %v %v", b.NumNodes, b.NumEdges)
		}
	}
	seen := map[int32]bool{}
	for r, v := range b.Nodes {
		if seen[v] {
			t.Fatalf("node %d twice", v)
		}
		seen[v] = true
		if int(b.Degree[r]) != x.Degree(v) {
			t.Fatalf("node %d degree %d, want %d", v, b.Degree[r], x.Degree(v))
		}
	}
	for k, e := range b.Edges {
		s, d := x.Endpoints(e)
		if b.Nodes[b.EdgeSrc[k]] != s || b.Nodes[b.EdgeDst[k]] != d {
			t.Fatalf("edge %d endpoints wrong", e)
		}
	}
	// Edges layer l updates have both endpoints among layer l's nodes.
	for l := 1; l <= L; l++ {
		for k := range b.NumEdges[l] {
			if int(b.EdgeSrc[k]) >= b.NumNodes[l] || int(b.EdgeDst[k]) >= b.NumNodes[l] {
				t.Fatalf("layer %d updates edge row %d whose endpoints are not its nodes", l, k)
			}
		}
	}
	var desc strings.Builder
	fmt.Fprintf(&desc, "%v %v %v %v|", b.Nodes, b.Edges, b.NumNodes, b.NumEdges)
	for l := 1; l <= L; l++ {
		blk, f := &b.Blocks[l-1], fanOut[L-l]
		nt := b.NumNodes[l]
		for dir, m := range []*Messages{&blk.In, &blk.Out} {
			if len(m.Ptr) != nt+1 || m.Ptr[nt] != len(m.Src) || len(m.Edge) != len(m.Src) {
				t.Fatalf("layer %d dir %d: ptr %v for %d targets, %d messages", l, dir, m.Ptr, nt, len(m.Src))
			}
			for tg := range nt {
				v := b.Nodes[tg]
				list := x.InEdges(v)
				if dir == 1 {
					list = x.OutEdges(v)
				}
				got := m.Ptr[tg+1] - m.Ptr[tg]
				if want := len(list); f >= 0 {
					want = min(want, f)
					if got != want {
						t.Fatalf("layer %d node %d dir %d: %d messages, want %d", l, v, dir, got, want)
					}
				} else if got != want {
					t.Fatalf("layer %d node %d dir %d: %d messages of %d", l, v, dir, got, want)
				}
				picked := map[int32]bool{}
				for k := m.Ptr[tg]; k < m.Ptr[tg+1]; k++ {
					er := m.Edge[k]
					if int(er) >= b.NumEdges[l-1] || int(m.Src[k]) >= b.NumNodes[l-1] {
						t.Fatalf("layer %d message from rows beyond its inputs", l)
					}
					e := b.Edges[er]
					if picked[e] || !slices.Contains(list, e) {
						t.Fatalf("layer %d node %d: edge %d repeated or not incident", l, v, e)
					}
					picked[e] = true
					other := x.src[e]
					if dir == 1 {
						other = x.dst[e]
					}
					if b.Nodes[m.Src[k]] != other {
						t.Fatalf("layer %d: message source %d, want %d", l, b.Nodes[m.Src[k]], other)
					}
				}
			}
			fmt.Fprintf(&desc, "%v %v %v|", m.Ptr, m.Src, m.Edge)
		}
	}
	return desc.String()
}

func TestEdgeSampler(t *testing.T) {
	rng := newRNG(80)
	src, dst := randMultigraph(rng, 30, 200)
	x, err := NewIndex(30, src, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fanOut []int
		seeds  []int32
	}{
		{[]int{-1, -1}, []int32{0, 5, 7}},
		{[]int{3, 2}, []int32{1, 2, 3, 100, 199}},
		{[]int{10, 10}, []int32{14}},
		{[]int{0, 2}, []int32{9, 8}},
		{[]int{2, 1, 4}, []int32{50, 60}},
		{[]int{1}, nil},
	} {
		t.Run(fmt.Sprintf("%v/%d", c.fanOut, len(c.seeds)), func(t *testing.T) {
			s, err := NewSampler(x, c.fanOut)
			if err != nil {
				t.Fatal(err)
			}
			var b1, b2 Batch
			if err := s.Sample(&b1, c.seeds, newRNG(1)); err != nil {
				t.Fatal(err)
			}
			d1 := checkBatch(t, x, &b1, c.seeds, c.fanOut)
			// Reusing the batch and the sampler, with the same seed:
			// the same batch.
			if err := s.Sample(&b2, c.seeds, newRNG(99)); err != nil {
				t.Fatal(err)
			}
			if err := s.Sample(&b2, c.seeds, newRNG(1)); err != nil {
				t.Fatal(err)
			}
			if d2 := checkBatch(t, x, &b2, c.seeds, c.fanOut); d2 != d1 {
				t.Fatalf("same rng, different batches:\n%s\n%s", d1, d2)
			}
		})
	}
}

func TestEdgeSamplerErrors(t *testing.T) {
	x, err := NewIndex(3, []int32{0, 1}, []int32{1, 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSampler(x, nil); err == nil {
		t.Error("sampler without layers")
	}
	s, err := NewSampler(x, []int{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	var b Batch
	for _, c := range []struct {
		seeds []int32
		want  string
	}{{[]int32{2}, "outside"}, {[]int32{-1}, "outside"}, {[]int32{1, 0, 1}, "repeated"}} {
		if err := s.Sample(&b, c.seeds, newRNG(1)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("seeds %v: error %v, want %q", c.seeds, err, c.want)
		}
	}
	// Unvisited: a later good batch is unaffected by the failed ones.
	if err := s.Sample(&b, []int32{1}, newRNG(1)); err != nil {
		t.Fatal(err)
	}
	checkBatch(t, x, &b, []int32{1}, []int{1, 1})
}

func TestEdgeBatchRows(t *testing.T) {
	b := testBatch(t, newRNG(81), 20, 60, 3, []int{2, 2}, 1, 1)
	for l := 0; l <= 2; l++ {
		rows := b.Rows(l, func(v int32) bool { return v%2 == 0 })
		want := 0
		for _, v := range b.Nodes[:b.NumNodes[l]] {
			want += int(1 - v%2)
		}
		if len(rows) != want || !slices.IsSorted(rows) {
			t.Fatalf("layer %d: rows %v, want %d even nodes", l, rows, want)
		}
		for _, r := range rows {
			if b.Nodes[r]%2 != 0 || int(r) >= b.NumNodes[l] {
				t.Fatalf("layer %d: row %d (node %d)", l, r, b.Nodes[r])
			}
		}
	}
}
