package scenarios

import (
	"fmt"
	"sort"

	"graphfed/agent"
	"graphfed/bus"
	"graphfed/graph"
)

// BankView is what one bank of an AML world sees: every transaction with at
// least one endpoint among its accounts (a cross-bank transaction is seen by
// both banks, attributes included), which of the endpoints it hosts, and
// the temporal split. The other bank's account is only an id to it: no
// attribute of that account is visible.
type BankView struct {
	Bank   int    // bank index in the world
	ID     string // client id: "bank-" + the bank id as written
	World  *graph.AMLGraph
	Edges  []int32       // visible transactions, ascending
	Split  []graph.Split // per visible transaction
	Owned  []bool        // per world account: hosted here
	Remote map[int32]int // account hosted elsewhere but adjacent -> its bank index
	// Home marks the transactions this bank evaluates: those it sends
	// (From Bank), so that every transaction is scored exactly once when
	// the banks' counts are pooled.
	Home []bool
}

// BankClientID names bank b's agent; bank ids keep their leading zeros, so
// "010" and "10" stay distinct clients.
func BankClientID(w *graph.AMLGraph, b int) string { return "bank-" + w.BankIDs[b] }

// SplitBanks cuts an AML world into one view per bank, with the Multi-GNN
// temporal split (60/20/20 by day) of the whole world.
func SplitBanks(w *graph.AMLGraph) ([]*BankView, error) {
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("scenarios: split banks: %w", err)
	}
	ds := w.TemporalSplit()
	split := w.EdgeSplits(&ds)
	views := make([]*BankView, w.NumBanks())
	for b := range views {
		views[b] = &BankView{Bank: b, ID: BankClientID(w, b), World: w, Owned: make([]bool, w.NumAccounts()), Remote: map[int32]int{}}
		if !bus.ValidID(views[b].ID) {
			return nil, fmt.Errorf("scenarios: split banks: bank id %q does not make a client id", w.BankIDs[b])
		}
	}
	for a, b := range w.AccountBank {
		views[b].Owned[a] = true
	}
	for e := range w.Src {
		s, d := w.Src[e], w.Dst[e]
		bs, bd := int(w.AccountBank[s]), int(w.AccountBank[d])
		views[bs].add(int32(e), split[e], true)
		if bd != bs {
			views[bd].add(int32(e), split[e], false)
			views[bs].Remote[d] = bd
			views[bd].Remote[s] = bs
		}
	}
	return views, nil
}

func (v *BankView) add(e int32, s graph.Split, home bool) {
	v.Edges = append(v.Edges, e)
	v.Split = append(v.Split, s)
	v.Home = append(v.Home, home)
}

// Neighbours lists the client ids of the banks this bank shares
// transactions with, sorted.
func (v *BankView) Neighbours() []string {
	seen := map[int]bool{}
	for _, b := range v.Remote {
		seen[b] = true
	}
	ids := make([]string, 0, len(seen))
	for b := range seen {
		ids = append(ids, BankClientID(v.World, b))
	}
	sort.Strings(ids)
	return ids
}

// Boundary lists this bank's accounts adjacent to accounts of bank b,
// ascending.
func (v *BankView) Boundary(b int) []int32 {
	set := map[int32]bool{}
	for _, e := range v.Edges {
		s, d := v.World.Src[e], v.World.Dst[e]
		if v.Owned[s] && int(v.World.AccountBank[d]) == b && b != v.Bank {
			set[s] = true
		}
		if v.Owned[d] && int(v.World.AccountBank[s]) == b && b != v.Bank {
			set[d] = true
		}
	}
	out := make([]int32, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Data turns the view into the agent's AML learner input.
func (v *BankView) Data() agent.AMLData {
	d := agent.AMLData{World: v.World, Edges: v.Edges, Split: v.Split, Home: v.Home, Owned: v.Owned,
		Remote: make(map[int32]string, len(v.Remote)), Peers: map[string][]int32{}}
	banks := map[int]bool{}
	for a, b := range v.Remote {
		d.Remote[a] = BankClientID(v.World, b)
		banks[b] = true
	}
	for b := range banks {
		if facing := v.Boundary(b); len(facing) > 0 {
			d.Peers[BankClientID(v.World, b)] = facing
		}
	}
	return d
}
