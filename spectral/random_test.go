package spectral

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestGNMK(t *testing.T) {
	for _, c := range []struct{ users, items, edges int }{
		{50, 80, 300}, {10, 10, 100}, {10, 10, 0}, {10, 10, 73}, {1, 5, 5}, {0, 0, 0},
	} {
		r, err := GNMK(c.users, c.items, c.edges, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if r.Rows != c.users || r.Cols != c.items || r.NNZ() != c.edges || r.Val != nil {
			t.Errorf("%+v: got %dx%d with %d edges", c, r.Rows, r.Cols, r.NNZ())
		}
	}
	a, _ := GNMK(30, 40, 200, rand.New(rand.NewPCG(7, 1)))
	b, _ := GNMK(30, 40, 200, rand.New(rand.NewPCG(7, 1)))
	d, _ := GNMK(30, 40, 200, rand.New(rand.NewPCG(8, 1)))
	if !slices.Equal(a.ColIdx, b.ColIdx) || !slices.Equal(a.RowPtr, b.RowPtr) {
		t.Error("same seed, different graphs")
	}
	if slices.Equal(a.ColIdx, d.ColIdx) && slices.Equal(a.RowPtr, d.RowPtr) {
		t.Error("different seeds, same graph")
	}
	for _, bad := range [][3]int{{2, 2, 5}, {-1, 2, 0}, {2, 2, -1}} {
		if _, err := GNMK(bad[0], bad[1], bad[2], rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("GNMK%v accepted", bad)
		}
	}
}

// TestGNMKUniform draws many 3×3 graphs with 4 edges (sparse path) and 7
// edges (complement path): every pair must appear with probability k/9.
func TestGNMKUniform(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	const draws = 9000
	for _, k := range []int{4, 7} {
		var count [9]int
		for d := 0; d < draws; d++ {
			r, err := GNMK(3, 3, k, rng)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range r.Edges() {
				count[int(e.U)*3+int(e.V)]++
			}
		}
		p := float64(k) / 9
		mean, sd := draws*p, math.Sqrt(draws*p*(1-p))
		for pair, c := range count {
			if math.Abs(float64(c)-mean) > 5*sd {
				t.Errorf("k=%d: pair %d drawn %d times, want %.0f ± %.0f", k, pair, c, mean, sd)
			}
		}
	}
}

func TestErdosRenyi(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	n, p := 400, 0.05
	var total float64
	const draws = 20
	for d := 0; d < draws; d++ {
		a, err := ErdosRenyi(n, p, rng)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Validate(); err != nil {
			t.Fatal(err)
		}
		if _, err := NewLaplacian(a); err != nil {
			t.Fatalf("not a symmetric adjacency: %v", err)
		}
		for i := 0; i < n; i++ {
			if c, _ := a.Row(i); slices.Contains(c, int32(i)) {
				t.Fatalf("self loop at %d", i)
			}
		}
		total += float64(a.NNZ() / 2)
	}
	pairs := float64(n * (n - 1) / 2)
	mean, sd := pairs*p, math.Sqrt(pairs*p*(1-p)/draws)
	if got := total / draws; math.Abs(got-mean) > 5*sd {
		t.Errorf("mean edges %v, want %v ± %v", got, mean, sd)
	}
	full, _ := ErdosRenyi(30, 1, rng)
	empty, _ := ErdosRenyi(30, 0, rng)
	if full.NNZ() != 30*29 || empty.NNZ() != 0 {
		t.Errorf("p=1 gave %d entries, p=0 gave %d", full.NNZ(), empty.NNZ())
	}
	for _, p := range []float64{-0.1, 1.1, math.NaN()} {
		if _, err := ErdosRenyi(10, p, rng); err == nil {
			t.Errorf("p %v accepted", p)
		}
	}
}

func TestBipartiteErdosRenyi(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	users, items, p := 200, 300, 0.02
	var total float64
	const draws = 20
	for d := 0; d < draws; d++ {
		r, err := BipartiteErdosRenyi(users, items, p, rng)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Validate(); err != nil || r.Rows != users || r.Cols != items {
			t.Fatalf("%dx%d: %v", r.Rows, r.Cols, err)
		}
		total += float64(r.NNZ())
	}
	pairs := float64(users * items)
	mean, sd := pairs*p, math.Sqrt(pairs*p*(1-p)/draws)
	if got := total / draws; math.Abs(got-mean) > 5*sd {
		t.Errorf("mean edges %v, want %v ± %v", got, mean, sd)
	}
}

func TestReferenceGraphFromStats(t *testing.T) {
	st, err := MeanStats([]GraphStats{{100, 200, 1000}, {300, 100, 2001}, {200, 300, 1500}})
	if err != nil {
		t.Fatal(err)
	}
	if st != (GraphStats{200, 200, 1500}) {
		t.Errorf("mean stats %+v", st)
	}
	rng := rand.New(rand.NewPCG(6, 6))
	g, err := ReferenceGraph(ReferenceGNMK, st, rng)
	if err != nil || g.NNZ() != 1500 || g.Rows != 200 || g.Cols != 200 {
		t.Errorf("GNMK reference: %v, %+v", err, g)
	}
	var sum int
	for d := 0; d < 10; d++ {
		e, err := ReferenceGraph(ReferenceER, st, rng)
		if err != nil {
			t.Fatal(err)
		}
		sum += e.NNZ()
	}
	if m := float64(sum) / 10; math.Abs(m-1500) > 5*math.Sqrt(1500.0/10) {
		t.Errorf("ER reference: mean %v edges, want about 1500", m)
	}
	if _, err := MeanStats(nil); err == nil {
		t.Error("mean of no clients accepted")
	}
	if _, err := MeanStats([]GraphStats{{-1, 0, 0}}); err == nil {
		t.Error("negative counts accepted")
	}
	if _, err := ReferenceGraph(ReferenceER, GraphStats{0, 5, 1}, rng); err == nil {
		t.Error("ER with no pairs accepted")
	}
	if _, err := ReferenceGraph(ReferenceModel(9), st, rng); err == nil {
		t.Error("unknown model accepted")
	}
	if ReferenceGNMK.String() != "gnmk" || ReferenceER.String() != "er" {
		t.Error("model names")
	}
}
