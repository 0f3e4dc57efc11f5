package spectral

import (
	"math"
	"math/rand/v2"
	"slices"

	"graphfed/graph"
)

// Generated user–item graphs shaped like real recommendation data: user
// degrees with a Pareto tail, item popularity Zipf-distributed, plus the
// structures that give sparse real graphs their repeated eigenvalues.

// plShape describes one generated user–item interaction matrix.
type plShape struct {
	users, items int
	meanDeg      float64 // mean user degree before the extras
	userTail     float64 // Pareto tail index of user degrees (smaller: heavier)
	itemZipf     float64 // Zipf exponent of item popularity
	dupUsers     int     // extra users copying another user's items (λ = 1 repeated)
	stars        int     // extra hub items, each with starLeaves degree-1 users
	starLeaves   int
	pendants     int // identical pendant chains hung off one hub user
	chain        int // length of each pendant chain in edges (≥ 1)
	detached     int // of the stars, how many stay separate components
}

// plGraph draws the interaction matrix of s from seed.
func plGraph(s plShape, seed uint64) *graph.CSR {
	rng := rand.New(rand.NewPCG(seed, 0x706c))
	// Item weights w ∝ (rank+1)^-s over a random ranking, as a cumulative
	// table for sampling by binary search.
	rank := rng.Perm(s.items)
	cum := make([]float64, s.items)
	total := 0.0
	for i := range cum {
		total += math.Pow(float64(rank[i]+1), -s.itemZipf)
		cum[i] = total
	}
	dmin := s.meanDeg * (s.userTail - 1) / s.userTail
	type edge struct{ u, i int }
	var rows [][]int
	for u := 0; u < s.users; u++ {
		d := int(dmin / math.Pow(1-rng.Float64(), 1/s.userTail))
		d = min(max(d, 1), s.items/2)
		set := map[int]bool{}
		for try := 0; len(set) < d && try < 20*d; try++ {
			i, _ := slices.BinarySearch(cum, rng.Float64()*total)
			set[min(i, s.items-1)] = true
		}
		row := make([]int, 0, len(set))
		for i := range set {
			row = append(row, i)
		}
		slices.Sort(row)
		rows = append(rows, row)
	}
	items := s.items
	for k := 0; k < s.dupUsers; k++ {
		rows = append(rows, slices.Clone(rows[rng.IntN(s.users)]))
	}
	for k := 0; k < s.stars; k++ {
		hub := items
		items++
		for j := 0; j < s.starLeaves; j++ {
			rows = append(rows, []int{hub})
		}
		if k >= s.detached { // tie the star to the rest through one user
			u := rng.IntN(s.users)
			rows[u] = append(rows[u], hub)
		}
	}
	if s.pendants > 0 {
		hub := rng.IntN(s.users)
		for p := 0; p < s.pendants; p++ {
			// hub – item – user – item – … : chain edges alternate sides.
			prevUser := hub
			for e := 0; e < s.chain; e++ {
				if e%2 == 0 {
					it := items
					items++
					rows[prevUser] = append(rows[prevUser], it)
				} else {
					rows = append(rows, []int{items - 1})
					prevUser = len(rows) - 1
				}
			}
		}
	}
	var idx []int64
	for u, row := range rows {
		for _, i := range row {
			idx = append(idx, int64(u)*int64(items)+int64(i))
		}
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	return pairsCSR(len(rows), items, idx)
}

// stackR puts interaction matrices block-diagonally: a graph whose
// components are theirs.
func stackR(rs ...*graph.CSR) *graph.CSR {
	var users, items int
	for _, r := range rs {
		users += r.Rows
		items += r.Cols
	}
	var idx []int64
	uo, io := 0, 0
	for _, r := range rs {
		for u := 0; u < r.Rows; u++ {
			cols, _ := r.Row(u)
			for _, i := range cols {
				idx = append(idx, int64(uo+u)*int64(items)+int64(io)+int64(i))
			}
		}
		uo += r.Rows
		io += r.Cols
	}
	return pairsCSR(users, items, idx)
}
