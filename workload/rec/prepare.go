package rec

import (
	"fmt"
	"slices"

	"graphfed/gnn"
	"graphfed/graph"
	"graphfed/lpsfed"
	"graphfed/spectral"
)

// Prepared is a client's input to LPSFed's model: its subgraph, its Φ
// lowest-frequency eigenvectors P̄ (n×Φ, n = Data.Nodes()) and its
// low-pass kernel K^c over the same Φ frequencies.
type Prepared struct {
	Data    *lpsfed.Data
	Vectors *gnn.Tensor
	Kernel  []float64
	// TestDropped counts held-out interactions on one of the user's
	// training items, left out (a client directory Split wrote has none).
	TestDropped int
	TestUsers   int // users with held-out items
	TestItems   int // held-out interactions kept
	ValUsers    int // users with validation items (Data.Val; none without a validation split)
	ValItems    int // validation interactions kept
	Components  int // of the client's graph
	LambdaMax   float64
}

// PrepareOptions configure Prepare.
type PrepareOptions struct {
	Phi  int // eigenpairs; a client with fewer nodes gets all of them
	Seed uint64
	Tol  float64 // eigenpair residual tolerance; default 1e-8
	// Val is the client's validation split (d's shape, local ids; nil:
	// none): it becomes Data.Val, scored for model selection.
	Val *graph.CSR
}

// Prepare turns one client's interactions (local ids, as Split makes and
// LoadClient reads them) into LPSFed's input: the eigenpairs of the
// client's normalized bipartite Laplacian, by Lanczos, and its kernel. It
// sees nothing but d.
func Prepare(d *graph.Interactions, opt PrepareOptions) (Prepared, error) {
	const op = "rec: prepare"
	var p Prepared
	if err := d.Validate(); err != nil {
		return p, fmt.Errorf("%s: %w", op, err)
	}
	if opt.Phi < 1 {
		return p, fmt.Errorf("%s %s: phi %d < 1", op, d.Name, opt.Phi)
	}
	if opt.Tol == 0 {
		opt.Tol = 1e-8
	}
	data := &lpsfed.Data{Users: d.Users, Items: d.Items, Train: make([][]int32, d.Users), Test: make([][]int32, d.Users)}
	for u := range d.Users {
		it, _ := d.Train.Row(u)
		data.Train[u] = slices.Sorted(slices.Values(it))
		for _, i := range d.TestItems(u) {
			if _, dup := slices.BinarySearch(data.Train[u], i); dup {
				p.TestDropped++
				continue
			}
			data.Test[u] = append(data.Test[u], i)
		}
		slices.Sort(data.Test[u])
		if len(data.Test[u]) > 0 {
			p.TestUsers++
			p.TestItems += len(data.Test[u])
		}
	}
	if opt.Val != nil {
		if opt.Val.Rows != d.Users || opt.Val.Cols != d.Items {
			return p, fmt.Errorf("%s %s: validation split is %dx%d, want %dx%d", op, d.Name, opt.Val.Rows, opt.Val.Cols, d.Users, d.Items)
		}
		data.Val = make([][]int32, d.Users)
		for u := range d.Users {
			it, _ := opt.Val.Row(u)
			for _, i := range it {
				if _, dup := slices.BinarySearch(data.Train[u], i); !dup {
					data.Val[u] = append(data.Val[u], i)
				}
			}
			slices.Sort(data.Val[u])
			if len(data.Val[u]) > 0 {
				p.ValUsers++
				p.ValItems += len(data.Val[u])
			}
		}
	}
	if err := data.Validate(); err != nil {
		return p, fmt.Errorf("%s %s: %w", op, d.Name, err)
	}
	l, err := spectral.NewBipartiteLaplacian(d.Train)
	if err != nil {
		return p, fmt.Errorf("%s %s: %w", op, d.Name, err)
	}
	phi := min(opt.Phi, data.Nodes())
	ep, err := spectral.LowestEigenpairs(l, phi, spectral.EigenOptions{Seed: opt.Seed, Tol: opt.Tol})
	if err != nil {
		return p, fmt.Errorf("%s %s: %w", op, d.Name, err)
	}
	k, err := lpsfed.Kernel(ep.Values)
	if err != nil {
		return p, fmt.Errorf("%s %s: %w", op, d.Name, err)
	}
	v := gnn.New(ep.N, phi)
	for i, x := range ep.Vectors {
		v.Data[i] = float32(x)
	}
	p.Data, p.Vectors, p.Kernel = data, v, k
	p.Components, p.LambdaMax = ep.Stats.Components, ep.Values[phi-1]
	return p, nil
}
