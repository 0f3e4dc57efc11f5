package spectral

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"graphfed/graph"
)

// Random reference graphs (LPSFed §3.2 and Appendix D.3): the server cannot
// see client graphs, so it builds a random user–item graph from aggregated
// counts and compares every client's kernel with its kernel. GNMK (Knuth)
// fixes the number of interactions exactly; Erdős–Rényi draws each pair
// independently.

// GraphStats are the aggregated counts a client may share: users, items
// and interactions of its user–item graph.
type GraphStats struct {
	Users, Items, Edges int
}

// MeanStats returns the per-field mean of the clients' counts, rounded to
// the nearest integer: the statistics the reference graph is built from.
func MeanStats(s []GraphStats) (GraphStats, error) {
	if len(s) == 0 {
		return GraphStats{}, fmt.Errorf("spectral: mean stats: no clients")
	}
	var u, i, e float64
	for c, x := range s {
		if x.Users < 0 || x.Items < 0 || x.Edges < 0 {
			return GraphStats{}, fmt.Errorf("spectral: mean stats: client %d has negative counts %+v", c, x)
		}
		u += float64(x.Users)
		i += float64(x.Items)
		e += float64(x.Edges)
	}
	k := float64(len(s))
	return GraphStats{Users: int(math.Round(u / k)), Items: int(math.Round(i / k)), Edges: int(math.Round(e / k))}, nil
}

// ReferenceModel selects the random graph model of a reference graph.
type ReferenceModel int

const (
	// ReferenceGNMK draws exactly Edges distinct user–item pairs; LPSFed's
	// choice, as it keeps the degree level of the clients.
	ReferenceGNMK ReferenceModel = iota
	// ReferenceER keeps every pair with probability Edges/(Users·Items).
	ReferenceER
)

// String names the model.
func (m ReferenceModel) String() string {
	switch m {
	case ReferenceGNMK:
		return "gnmk"
	case ReferenceER:
		return "er"
	}
	return fmt.Sprintf("ReferenceModel(%d)", int(m))
}

// ReferenceGraph draws a Users×Items interaction matrix from st with the
// given model.
func ReferenceGraph(model ReferenceModel, st GraphStats, rng *rand.Rand) (*graph.CSR, error) {
	switch model {
	case ReferenceGNMK:
		return GNMK(st.Users, st.Items, st.Edges, rng)
	case ReferenceER:
		pairs := float64(st.Users) * float64(st.Items)
		if pairs == 0 || st.Edges < 0 || float64(st.Edges) > pairs {
			return nil, fmt.Errorf("spectral: reference graph: %d edges among %d×%d pairs", st.Edges, st.Users, st.Items)
		}
		return BipartiteErdosRenyi(st.Users, st.Items, float64(st.Edges)/pairs, rng)
	}
	return nil, fmt.Errorf("spectral: reference graph: unknown model %v", model)
}

// ReferenceKernel draws a reference graph and returns its low-pass kernel
// over the phi lowest eigenvalues of its normalized Laplacian (floored at
// KernelFloor): the K^R the server sends each round.
func ReferenceKernel(model ReferenceModel, st GraphStats, phi int, rng *rand.Rand, opt EigenOptions) ([]float64, error) {
	r, err := ReferenceGraph(model, st, rng)
	if err != nil {
		return nil, err
	}
	l, err := NewBipartiteLaplacian(r)
	if err != nil {
		return nil, fmt.Errorf("spectral: reference kernel: %w", err)
	}
	e, err := LowestEigenpairs(l, phi, opt)
	if err != nil {
		return nil, fmt.Errorf("spectral: reference kernel: %w", err)
	}
	return LowPassKernel(e.Values, KernelFloor)
}

// GNMK returns a users×items interaction matrix with exactly edges
// interactions, chosen uniformly among all sets of that many distinct
// pairs (NetworkX's gnmk_random_graph). Pairs are drawn by Floyd's
// algorithm, O(edges) expected, or their complement when more than half of
// all pairs are wanted.
func GNMK(users, items, edges int, rng *rand.Rand) (*graph.CSR, error) {
	if users < 0 || items < 0 || edges < 0 || int64(users) > math.MaxInt32 || int64(items) > math.MaxInt32 {
		return nil, fmt.Errorf("spectral: gnmk: shape %dx%d with %d edges", users, items, edges)
	}
	total := int64(users) * int64(items)
	if int64(edges) > total {
		return nil, fmt.Errorf("spectral: gnmk: %d edges exceed the %d user–item pairs", edges, total)
	}
	k := int64(edges)
	complement := k > total/2
	if complement {
		k = total - k
	}
	chosen := make(map[int64]struct{}, k)
	for j := total - k; j < total; j++ {
		t := rng.Int64N(j + 1)
		if _, ok := chosen[t]; ok {
			t = j
		}
		chosen[t] = struct{}{}
	}
	var idx []int64
	if complement {
		idx = make([]int64, 0, edges)
		for t := int64(0); t < total; t++ {
			if _, ok := chosen[t]; !ok {
				idx = append(idx, t)
			}
		}
	} else {
		idx = make([]int64, 0, edges)
		for t := range chosen {
			idx = append(idx, t)
		}
		slices.Sort(idx) // map order is random; the result must not be
	}
	return pairsCSR(users, items, idx), nil
}

// BipartiteErdosRenyi returns a users×items interaction matrix keeping each
// pair independently with probability p, drawn by geometric skips
// (Batagelj and Brandes 2005) in O(users + items + edges).
func BipartiteErdosRenyi(users, items int, p float64, rng *rand.Rand) (*graph.CSR, error) {
	if users < 0 || items < 0 || int64(users) > math.MaxInt32 || int64(items) > math.MaxInt32 || !(p >= 0 && p <= 1) {
		return nil, fmt.Errorf("spectral: bipartite erdős–rényi: shape %dx%d, p %v", users, items, p)
	}
	total := int64(users) * int64(items)
	return pairsCSR(users, items, skipSample(total, p, rng)), nil
}

// ErdosRenyi returns the symmetric adjacency of a G(n, p) graph: each of
// the n(n−1)/2 node pairs is an edge independently with probability p.
func ErdosRenyi(n int, p float64, rng *rand.Rand) (*graph.CSR, error) {
	if n < 0 || int64(n) > math.MaxInt32 || !(p >= 0 && p <= 1) {
		return nil, fmt.Errorf("spectral: erdős–rényi: n %d, p %v", n, p)
	}
	total := int64(n) * int64(n-1) / 2
	var edges []graph.Edge
	// Pair index t enumerates (v, w) with w < v row by row: row v starts
	// at v(v−1)/2.
	v := int64(1)
	for _, t := range skipSample(total, p, rng) {
		for (v+1)*v/2 <= t {
			v++
		}
		edges = append(edges, graph.Edge{U: int32(v), V: int32(t - v*(v-1)/2)})
	}
	return graph.FromEdges(n, edges, true)
}

// skipSample returns, increasing, the indices in [0, total) kept by
// independent Bernoulli(p) trials, jumping over each run of misses with
// one geometric draw.
func skipSample(total int64, p float64, rng *rand.Rand) []int64 {
	var out []int64
	switch {
	case p == 0 || total == 0:
		return out
	case p == 1:
		out = make([]int64, total)
		for t := range out {
			out[t] = int64(t)
		}
		return out
	}
	lq := math.Log1p(-p)
	for t := int64(-1); ; {
		skip := math.Floor(math.Log1p(-rng.Float64()) / lq)
		if skip >= float64(total-t-1) {
			return out
		}
		t += 1 + int64(skip)
		out = append(out, t)
	}
}

// pairsCSR builds the users×items matrix of the increasing pair indices idx
// (index = user·items + item).
func pairsCSR(users, items int, idx []int64) *graph.CSR {
	rowPtr := make([]int, users+1)
	col := make([]int32, len(idx))
	for k, t := range idx {
		u := int(t / int64(items))
		rowPtr[u+1]++
		col[k] = int32(t % int64(items))
	}
	for u := 0; u < users; u++ {
		rowPtr[u+1] += rowPtr[u]
	}
	return &graph.CSR{Rows: users, Cols: items, RowPtr: rowPtr, ColIdx: col}
}
