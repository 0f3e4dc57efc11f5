package rec

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"graphfed/graph"
	"graphfed/spectral"
)

// Partitions a dataset's users can be split by.
const (
	PartitionSpectral = "spectral" // spectral clustering of the training graph (LPSFed's benchmark)
	PartitionRandom   = "random"   // users drawn uniformly at random
)

// SplitOptions configure Split.
type SplitOptions struct {
	Clients   int
	Partition string // PartitionSpectral (also when empty) or PartitionRandom
	// EdgeVariation is the spread of interaction counts across clients of a
	// spectral partition (spectral.PartitionOptions).
	EdgeVariation float64
	// MaxUsers, when positive, keeps only users 0..MaxUsers-1.
	MaxUsers int
	Seed     uint64
	Tol      float64 // eigenpair residual tolerance of the spectral partition; default 1e-8
}

// Client is one client's share of a dataset in local ids: its users (those
// the partition gave it that have training interactions), the items they
// trained on (the client's catalog, numbered in global order), and their
// held-out interactions on those items.
type Client struct {
	ID    string
	Data  *graph.Interactions // local ids: users 0..len(Users)-1, items 0..len(Items)-1
	Users []int32             // local user -> global user
	Items []int32             // local item -> global item
	// TestDropped counts held-out interactions left out: their item is not
	// in the client's catalog (the client cannot rank it) or is one of the
	// user's training items.
	TestDropped int
}

// SplitStats describe a split.
type SplitStats struct {
	Moved        int // users moved by the spectral partition's rebalancing
	NoTrainUsers int // users without training interactions, left out
}

// ClientID names client i of a split: "client-<i>", as the simulation's
// clients are named.
func ClientID(i int) string { return fmt.Sprintf("client-%d", i) }

// Split cuts d's users into opt.Clients clients.
func Split(d *graph.Interactions, opt SplitOptions) ([]Client, SplitStats, error) {
	const op = "rec: split"
	var st SplitStats
	if err := d.Validate(); err != nil {
		return nil, st, fmt.Errorf("%s: %w", op, err)
	}
	if opt.Clients < 1 {
		return nil, st, fmt.Errorf("%s: %d clients", op, opt.Clients)
	}
	if opt.Tol == 0 {
		opt.Tol = 1e-8
	}
	train := d.Train
	if opt.MaxUsers > 0 && opt.MaxUsers < d.Users {
		train = &graph.CSR{Rows: opt.MaxUsers, Cols: d.Items, RowPtr: d.Train.RowPtr[:opt.MaxUsers+1],
			ColIdx: d.Train.ColIdx[:d.Train.RowPtr[opt.MaxUsers]]}
	}
	var owner []int32
	switch opt.Partition {
	case PartitionSpectral, "":
		part, err := spectral.SpectralPartition(train, opt.Clients, spectral.PartitionOptions{EdgeVariation: opt.EdgeVariation,
			Eigen: spectral.EigenOptions{Seed: opt.Seed, Tol: opt.Tol}})
		if err != nil {
			return nil, st, fmt.Errorf("%s: %w", op, err)
		}
		owner, st.Moved = part.UserClient, part.Moved
	case PartitionRandom:
		rng := rand.New(rand.NewPCG(opt.Seed, 0x7265632d73706c74))
		owner = make([]int32, train.Rows)
		for u := range owner {
			owner[u] = int32(rng.IntN(opt.Clients))
		}
	default:
		return nil, st, fmt.Errorf("%s: partition %q (want %s or %s)", op, opt.Partition, PartitionSpectral, PartitionRandom)
	}
	members := make([][]int32, opt.Clients)
	for u := range train.Rows {
		if train.Degree(u) == 0 {
			st.NoTrainUsers++
			continue
		}
		members[owner[u]] = append(members[owner[u]], int32(u))
	}
	out := make([]Client, opt.Clients)
	for c, us := range members {
		if len(us) == 0 {
			return nil, st, fmt.Errorf("%s: client %s has no users", op, ClientID(c))
		}
		out[c] = extract(d, train, us, ClientID(c))
	}
	return out, st, nil
}

// extract builds the client of global users us (ascending).
func extract(d *graph.Interactions, train *graph.CSR, us []int32, id string) Client {
	var items []int32
	for _, u := range us {
		it, _ := train.Row(int(u))
		items = append(items, it...)
	}
	slices.Sort(items)
	items = slices.Compact(items)
	local := make(map[int32]int32, len(items))
	for k, i := range items {
		local[i] = int32(k)
	}
	n := len(us)
	tr := &graph.CSR{Rows: n, Cols: len(items), RowPtr: make([]int, n+1)}
	te := &graph.CSR{Rows: n, Cols: len(items), RowPtr: make([]int, n+1)}
	cl := Client{ID: id, Users: us, Items: items}
	for k, u := range us {
		it, _ := train.Row(int(u))
		row := make([]int32, len(it))
		for j, i := range it {
			row[j] = local[i]
		}
		slices.Sort(row) // items were numbered in global order: already sorted unless the input was not
		tr.ColIdx = append(tr.ColIdx, row...)
		tr.RowPtr[k+1] = len(tr.ColIdx)
		var held []int32
		for _, i := range d.TestItems(int(u)) {
			j, ok := local[i]
			if _, dup := slices.BinarySearch(row, j); !ok || dup {
				cl.TestDropped++
				continue
			}
			held = append(held, j)
		}
		slices.Sort(held)
		te.ColIdx = append(te.ColIdx, held...)
		te.RowPtr[k+1] = len(te.ColIdx)
	}
	cl.Data = &graph.Interactions{Name: id, Users: n, Items: len(items), Train: tr, Test: te}
	return cl
}
