package scenarios

import (
	"fmt"
	"slices"
	"time"

	"graphfed/gnn"
	"graphfed/graph"
	"graphfed/lpsfed"
	"graphfed/spectral"
)

// LPSFedPrepOptions configures PrepareLPSFed.
type LPSFedPrepOptions struct {
	Clients int
	Phi     int // eigenpairs per client (Φ); a smaller client gets all its nodes' worth
	// EdgeVariation is the spread of interaction counts across clients
	// (spectral.PartitionOptions); the paper's ±20% is
	// spectral.DefaultEdgeVariation.
	EdgeVariation float64
	// MaxUsers, when positive, keeps only users 0..MaxUsers-1: a slice of
	// the dataset for quick runs.
	MaxUsers int
	Seed     uint64
	Tol      float64 // eigenpair residual tolerance; default 1e-8
}

// LPSFedClientStats describe one prepared client.
type LPSFedClientStats struct {
	ID                   string
	Users, Items, Train  int
	TestUsers, TestItems int // users with held-out items in the catalog, and those items
	TestDropped          int // held-out interactions whose item the client never saw
	Components           int // of its graph
	LambdaMax            float64
	Seconds              float64 // eigensolver time
}

// LPSFedPrepStats describe a preparation.
type LPSFedPrepStats struct {
	Clients          []LPSFedClientStats
	Moved            int // users moved by the partition's rebalancing
	NoTrainUsers     int // users without training interactions, left out
	PartitionSeconds float64
	EigenSeconds     float64
}

// PrepareLPSFed builds LPSFed's federated benchmark from a user–item
// dataset (Appendix D.2): users are split into opt.Clients clients by
// spectral clustering of the training graph, each client holds its users,
// the items they trained on and their held-out interactions on those
// items, and each client's Φ lowest eigenpairs (P̄, λ) and kernel K^c are
// computed once, by Lanczos.
func PrepareLPSFed(d *graph.Interactions, opt LPSFedPrepOptions) ([]LPSFedClient, LPSFedPrepStats, error) {
	var st LPSFedPrepStats
	if err := d.Validate(); err != nil {
		return nil, st, fmt.Errorf("scenarios: prepare lpsfed: %w", err)
	}
	if opt.Tol == 0 {
		opt.Tol = 1e-8
	}
	if opt.Phi < 1 {
		return nil, st, fmt.Errorf("scenarios: prepare lpsfed: phi %d < 1", opt.Phi)
	}
	train := d.Train
	if opt.MaxUsers > 0 && opt.MaxUsers < d.Users {
		train = &graph.CSR{Rows: opt.MaxUsers, Cols: d.Items, RowPtr: d.Train.RowPtr[:opt.MaxUsers+1],
			ColIdx: d.Train.ColIdx[:d.Train.RowPtr[opt.MaxUsers]]}
	}
	start := time.Now()
	part, err := spectral.SpectralPartition(train, opt.Clients, spectral.PartitionOptions{EdgeVariation: opt.EdgeVariation,
		Eigen: spectral.EigenOptions{Seed: opt.Seed, Tol: opt.Tol}})
	if err != nil {
		return nil, st, fmt.Errorf("scenarios: prepare lpsfed: %w", err)
	}
	st.PartitionSeconds, st.Moved = time.Since(start).Seconds(), part.Moved
	members := make([][]int, opt.Clients)
	for u := range train.Rows {
		if train.Degree(u) == 0 {
			st.NoTrainUsers++
			continue
		}
		members[part.UserClient[u]] = append(members[part.UserClient[u]], u)
	}
	out := make([]LPSFedClient, opt.Clients)
	for c, us := range members {
		t0 := time.Now()
		cl, cs, err := prepareClient(d, train, us, ClientID(c), opt)
		if err != nil {
			return nil, st, err
		}
		cs.Seconds = time.Since(t0).Seconds()
		st.EigenSeconds += cs.Seconds
		out[c] = cl
		st.Clients = append(st.Clients, cs)
	}
	return out, st, nil
}

// prepareClient builds one client from its global users us.
func prepareClient(d *graph.Interactions, train *graph.CSR, us []int, id string, opt LPSFedPrepOptions) (LPSFedClient, LPSFedClientStats, error) {
	cs := LPSFedClientStats{ID: id, Users: len(us)}
	if len(us) == 0 {
		return LPSFedClient{}, cs, fmt.Errorf("scenarios: prepare lpsfed: client %s has no users", id)
	}
	local := map[int32]int32{}
	var items []int32
	for _, u := range us {
		it, _ := train.Row(u)
		items = append(items, it...)
	}
	slices.Sort(items)
	items = slices.Compact(items)
	for k, i := range items {
		local[i] = int32(k)
	}
	data := &lpsfed.Data{Users: len(us), Items: len(items), Train: make([][]int32, len(us)), Test: make([][]int32, len(us))}
	r := &graph.CSR{Rows: len(us), Cols: len(items), RowPtr: make([]int, len(us)+1)}
	for k, u := range us {
		it, _ := train.Row(u)
		for _, i := range it {
			data.Train[k] = append(data.Train[k], local[i])
		}
		slices.Sort(data.Train[k]) // global order is local order: items were numbered sorted
		r.ColIdx = append(r.ColIdx, data.Train[k]...)
		r.RowPtr[k+1] = len(r.ColIdx)
		for _, i := range d.TestItems(u) {
			j, ok := local[i]
			if !ok || hasLocal(data.Train[k], j) {
				cs.TestDropped++
				continue
			}
			data.Test[k] = append(data.Test[k], j)
		}
		slices.Sort(data.Test[k])
		if len(data.Test[k]) > 0 {
			cs.TestUsers++
			cs.TestItems += len(data.Test[k])
		}
	}
	cs.Items, cs.Train = len(items), len(r.ColIdx)
	l, err := spectral.NewBipartiteLaplacian(r)
	if err != nil {
		return LPSFedClient{}, cs, fmt.Errorf("scenarios: prepare lpsfed: client %s: %w", id, err)
	}
	phi := min(opt.Phi, data.Nodes())
	ep, err := spectral.LowestEigenpairs(l, phi, spectral.EigenOptions{Seed: opt.Seed, Tol: opt.Tol})
	if err != nil {
		return LPSFedClient{}, cs, fmt.Errorf("scenarios: prepare lpsfed: client %s: %w", id, err)
	}
	cs.Components, cs.LambdaMax = ep.Stats.Components, ep.Values[phi-1]
	k, err := lpsfed.Kernel(ep.Values)
	if err != nil {
		return LPSFedClient{}, cs, fmt.Errorf("scenarios: prepare lpsfed: client %s: %w", id, err)
	}
	p := gnn.New(ep.N, phi)
	for i, v := range ep.Vectors {
		p.Data[i] = float32(v)
	}
	return LPSFedClient{ID: id, Data: data, Vectors: p, Kernel: k}, cs, nil
}

func hasLocal(sorted []int32, i int32) bool {
	_, ok := slices.BinarySearch(sorted, i)
	return ok
}
