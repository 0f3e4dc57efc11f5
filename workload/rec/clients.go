package rec

import (
	"fmt"
	"time"

	"graphfed/graph"
)

// ClientsOptions configures PrepareClients.
type ClientsOptions struct {
	Clients int
	Phi     int // eigenpairs per client (Φ); a smaller client gets all its nodes' worth
	// EdgeVariation is the spread of interaction counts across clients
	// (spectral.PartitionOptions); the paper's ±20% is
	// spectral.DefaultEdgeVariation.
	EdgeVariation float64
	// MaxUsers, when positive, keeps only users 0..MaxUsers-1: a slice of
	// the dataset for quick runs.
	MaxUsers int
	// Holdout and Partitioning are SplitOptions'.
	Holdout      Holdout
	Partitioning int
	// Seed seeds the clients' eigensolvers and, unless PartitionSeed is
	// set, the partition's (SplitOptions.Seed).
	Seed          uint64
	PartitionSeed *uint64
	Tol           float64 // eigenpair residual tolerance; default 1e-8
}

// SplitOptions are the options of the Split PrepareClients makes: `graphfed
// split rec` with them writes the same clients.
func (o ClientsOptions) SplitOptions() SplitOptions {
	seed := o.Seed
	if o.PartitionSeed != nil {
		seed = *o.PartitionSeed
	}
	return SplitOptions{Clients: o.Clients, Partition: PartitionSpectral, EdgeVariation: o.EdgeVariation,
		MaxUsers: o.MaxUsers, Holdout: o.Holdout, Partitioning: o.Partitioning, Seed: seed, Tol: o.Tol}
}

// ClientStats describe one prepared client.
type ClientStats struct {
	ID                   string
	Users, Items, Train  int
	TestUsers, TestItems int // users with held-out items in the catalog, and those items
	TestDropped          int // held-out interactions whose item the client never saw
	ValUsers, ValItems   int // as TestUsers, TestItems for the validation split
	Components           int // of its graph
	LambdaMax            float64
	Seconds              float64 // eigensolver time
}

// ClientsStats describe a preparation.
type ClientsStats struct {
	Clients          []ClientStats
	Moved            int // users moved by the partition's rebalancing
	NoTrainUsers     int // users without training interactions, left out
	PartitionSeconds float64
	EigenSeconds     float64
}

// PrepareClients builds LPSFed's federated benchmark from a user–item
// dataset (Appendix D.2): users are split into opt.Clients clients by
// spectral clustering of the training graph (Split), each client holds
// its users, the items they trained on and their held-out interactions on
// those items, and each client's Φ lowest eigenpairs (P̄, λ) and kernel K^c
// are computed once, by Lanczos (Prepare, as a deployed agent does on
// the client directory `graphfed split rec` writes).
func PrepareClients(d *graph.Interactions, opt ClientsOptions) ([]PreparedClient, ClientsStats, error) {
	var st ClientsStats
	if opt.Phi < 1 {
		return nil, st, fmt.Errorf("rec: prepare clients: phi %d < 1", opt.Phi)
	}
	start := time.Now()
	parts, sst, err := Split(d, opt.SplitOptions())
	if err != nil {
		return nil, st, fmt.Errorf("rec: prepare clients: %w", err)
	}
	st.PartitionSeconds, st.Moved, st.NoTrainUsers = time.Since(start).Seconds(), sst.Moved, sst.NoTrainUsers
	out := make([]PreparedClient, len(parts))
	for c, part := range parts {
		t0 := time.Now()
		p, err := Prepare(part.Data, PrepareOptions{Phi: opt.Phi, Seed: opt.Seed, Tol: opt.Tol, Val: part.Val})
		if err != nil {
			return nil, st, fmt.Errorf("rec: prepare clients: client %s: %w", part.ID, err)
		}
		cs := ClientStats{ID: part.ID, Users: part.Data.Users, Items: part.Data.Items, Train: part.Data.Train.NNZ(),
			TestUsers: p.TestUsers, TestItems: p.TestItems, TestDropped: part.TestDropped + p.TestDropped,
			ValUsers: p.ValUsers, ValItems: p.ValItems, Components: p.Components, LambdaMax: p.LambdaMax, Seconds: time.Since(t0).Seconds()}
		st.EigenSeconds += cs.Seconds
		out[c] = PreparedClient{ID: part.ID, Prepared: p}
		st.Clients = append(st.Clients, cs)
	}
	return out, st, nil
}

// PreparedClient is one client of a prepared benchmark: its id and its
// data, eigenpairs and kernel.
type PreparedClient struct {
	ID string
	Prepared
}
