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
	// Holdout cuts the interactions into train, validation and test
	// before the partition (zero: the dataset's own split).
	Holdout Holdout
	// Partitioning picks one of several distinct partitionings of the
	// same graph: 0 (the default) matches spectral clusters to the edge
	// targets by size, k > 0 by a permutation seeded by k
	// (spectral.PartitionOptions.Matching); for a random partition it
	// reseeds the draw.
	Partitioning int
	Seed         uint64  // of the spectral embedding's eigensolver, or of the random partition
	Tol          float64 // eigenpair residual tolerance of the spectral partition; default 1e-8
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
	// Val is the users' validation items on the catalog (local ids, the
	// shape of Data.Train), nil without a validation split; ValDropped
	// counts those left out as TestDropped does.
	Val        *graph.CSR
	ValDropped int
}

// SplitStats describe a split.
type SplitStats struct {
	Moved        int // users moved by the spectral partition's rebalancing
	NoTrainUsers int // users without training interactions, left out
}

// ClientID names client i of a split: "client-<i>", as the simulation's
// clients are named.
func ClientID(i int) string { return fmt.Sprintf("client-%d", i) }

// Split cuts d's interactions by opt.Holdout and its users into
// opt.Clients clients. It is what both `graphfed split rec` and `graphfed
// sim --lightgcn` call, so that the same options give the same clients.
func Split(raw *graph.Interactions, opt SplitOptions) ([]Client, SplitStats, error) {
	const op = "rec: split"
	var st SplitStats
	if opt.Clients < 1 {
		return nil, st, fmt.Errorf("%s: %d clients", op, opt.Clients)
	}
	if opt.Partitioning < 0 {
		return nil, st, fmt.Errorf("%s: partitioning %d < 0", op, opt.Partitioning)
	}
	if opt.Tol == 0 {
		opt.Tol = 1e-8
	}
	ds, err := opt.Holdout.Apply(raw)
	if err != nil {
		return nil, st, fmt.Errorf("%s: %w", op, err)
	}
	d := ds.Interactions
	train := d.Train
	if opt.MaxUsers > 0 && opt.MaxUsers < d.Users {
		train = &graph.CSR{Rows: opt.MaxUsers, Cols: d.Items, RowPtr: d.Train.RowPtr[:opt.MaxUsers+1],
			ColIdx: d.Train.ColIdx[:d.Train.RowPtr[opt.MaxUsers]]}
	}
	var owner []int32
	switch opt.Partition {
	case PartitionSpectral, "":
		part, err := spectral.SpectralPartition(train, opt.Clients, spectral.PartitionOptions{EdgeVariation: opt.EdgeVariation,
			Matching: uint64(opt.Partitioning), Eigen: spectral.EigenOptions{Seed: opt.Seed, Tol: opt.Tol}})
		if err != nil {
			return nil, st, fmt.Errorf("%s: %w", op, err)
		}
		owner, st.Moved = part.UserClient, part.Moved
	case PartitionRandom:
		rng := rand.New(rand.NewPCG(opt.Seed, 0x7265632d73706c74+uint64(opt.Partitioning)))
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
		out[c] = extract(d, ds.Val, train, us, ClientID(c))
	}
	return out, st, nil
}

// extract builds the client of global users us (ascending); val, when
// not nil, is the validation split in global ids.
func extract(d *graph.Interactions, val, train *graph.CSR, us []int32, id string) Client {
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
	var va *graph.CSR
	if val != nil {
		va = &graph.CSR{Rows: n, Cols: len(items), RowPtr: make([]int, n+1)}
	}
	for k, u := range us {
		it, _ := train.Row(int(u))
		row := make([]int32, len(it))
		for j, i := range it {
			row[j] = local[i]
		}
		slices.Sort(row) // items were numbered in global order: already sorted unless the input was not
		tr.ColIdx = append(tr.ColIdx, row...)
		tr.RowPtr[k+1] = len(tr.ColIdx)
		cl.TestDropped += appendHeld(te, k, d.TestItems(int(u)), row, local)
		if va != nil {
			vi, _ := val.Row(int(u))
			cl.ValDropped += appendHeld(va, k, vi, row, local)
		}
	}
	cl.Data = &graph.Interactions{Name: id, Users: n, Items: len(items), Train: tr, Test: te}
	cl.Val = va
	return cl
}

// appendHeld appends local user k's held-out items global (those of the
// catalog local, none of its training items row) as row k of m and
// returns how many it left out.
func appendHeld(m *graph.CSR, k int, global, row []int32, local map[int32]int32) (dropped int) {
	var held []int32
	for _, i := range global {
		j, ok := local[i]
		if _, dup := slices.BinarySearch(row, j); !ok || dup {
			dropped++
			continue
		}
		held = append(held, j)
	}
	slices.Sort(held)
	m.ColIdx = append(m.ColIdx, held...)
	m.RowPtr[k+1] = len(m.ColIdx)
	return dropped
}
