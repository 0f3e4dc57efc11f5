package bank

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	"graphfed/aml/amlworld"
	"graphfed/graph"
)

// GlobalID names account acct of bank across banks: FNV-1a-64 of
// bank + "\x00" + acct with the sign bit cleared. Any bank computes it from
// the bank id and account number alone, as written ("010" and "10" are
// different banks), so two banks agree on the id of an account they both
// see without sharing anything else.
//
// A collision only matters between accounts one bank sees (its own and
// their counterparties): a received id is looked up among the sending
// bank's accounts adjacent to ours, which that bank owns, so a colliding
// pair that could be confused is visible to the sender or the receiver,
// and NewView refuses a view holding one.
func GlobalID(bank, acct string) int64 {
	h := fnv.New64a()
	h.Write([]byte(bank))
	h.Write([]byte{0})
	h.Write([]byte(acct))
	return int64(h.Sum64() & math.MaxInt64)
}

// View is what one bank of an AML world sees: every transaction with at
// least one endpoint among its accounts, in world order, as a graph of its
// own (a cross-bank transaction is seen by both banks, attributes
// included). Another bank's account is only a bank id and account number
// in it. Everything per account or per transaction is sized by the bank's
// own rows, never by the world.
type View struct {
	Bank  string           // bank id as written ("010")
	ID    string           // client id: "bank-" + Bank
	Graph *amlworld.Graph  // the visible transactions only
	Cut   amlworld.Cutoffs // the world's temporal split
	Split []graph.Split    // per local transaction
	// Home marks the transactions this bank evaluates: those it sends
	// (From Bank), so that every transaction is scored exactly once when
	// the banks' counts are pooled.
	Home   []bool
	Owned  []bool  // per local account: hosted here
	Global []int64 // per local account: GlobalID
	// Accounts are this bank's rows of the accounts file (nil without one).
	Accounts []amlworld.Account
}

// ClientID names the agent of bank id: "bank-" + id, leading zeros kept, so
// "010" and "10" stay distinct clients.
func ClientID(bank string) string { return "bank-" + bank }

// NewView builds bank's view from its local graph g (every row must
// have an endpoint at bank), the world's cut-offs and its accounts (may be
// nil; each must be at bank).
func NewView(bank string, g *amlworld.Graph, cut amlworld.Cutoffs, accounts []amlworld.Account) (*View, error) {
	const op = "aml: bank view"
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("%s %q: %w", op, bank, err)
	}
	if err := cut.Validate(); err != nil {
		return nil, fmt.Errorf("%s %q: %w", op, bank, err)
	}
	v := &View{Bank: bank, ID: ClientID(bank), Graph: g, Cut: cut, Accounts: accounts,
		Split: make([]graph.Split, g.NumEdges()), Home: make([]bool, g.NumEdges()),
		Owned: make([]bool, g.NumAccounts()), Global: make([]int64, g.NumAccounts())}
	for _, a := range accounts {
		if a.BankID != bank {
			return nil, fmt.Errorf("%s %q: account %q of bank %q in its accounts", op, bank, a.Account, a.BankID)
		}
	}
	seen := make(map[int64]int32, g.NumAccounts())
	for a := range g.AccountIDs {
		b := g.BankIDs[g.AccountBank[a]]
		v.Owned[a] = b == bank
		id := GlobalID(b, g.AccountIDs[a])
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("%s %q: accounts %s/%s and %s/%s share global id %d", op, bank,
				g.BankIDs[g.AccountBank[prev]], g.AccountIDs[prev], b, g.AccountIDs[a], id)
		}
		seen[id] = int32(a)
		v.Global[a] = id
	}
	for e := range g.Src {
		s, d := g.Src[e], g.Dst[e]
		if !v.Owned[s] && !v.Owned[d] {
			return nil, fmt.Errorf("%s %q: transaction %d (%s) has no endpoint at the bank", op, bank, e, rowString(g, e))
		}
		v.Home[e] = v.Owned[s]
		v.Split[e] = cut.Of(g.Time[e])
	}
	return v, nil
}

func rowString(g *amlworld.Graph, e int) string {
	r := g.Row(e)
	return string(amlworld.AppendTxRow(nil, &r))
}

// Remote maps every adjacent account hosted at another bank to that
// bank's client id.
func (v *View) Remote() map[int32]string {
	out := map[int32]string{}
	g := v.Graph
	ids := make([]string, len(g.BankIDs)) // one string per bank, not per account
	for a, owned := range v.Owned {
		if !owned {
			b := g.AccountBank[a]
			if ids[b] == "" {
				ids[b] = ClientID(g.BankIDs[b])
			}
			out[int32(a)] = ids[b]
		}
	}
	return out
}

// Peers maps each neighbouring bank's client id to this bank's accounts
// with a transaction to one of its accounts, ascending.
func (v *View) Peers() map[string][]int32 {
	g := v.Graph
	sets := map[string]map[int32]bool{}
	face := func(own, other int32) {
		if !v.Owned[own] || v.Owned[other] {
			return
		}
		id := ClientID(g.BankIDs[g.AccountBank[other]])
		if sets[id] == nil {
			sets[id] = map[int32]bool{}
		}
		sets[id][own] = true
	}
	for e := range g.Src {
		face(g.Src[e], g.Dst[e])
		face(g.Dst[e], g.Src[e])
	}
	out := make(map[string][]int32, len(sets))
	for id, set := range sets {
		accts := make([]int32, 0, len(set))
		for a := range set {
			accts = append(accts, a)
		}
		slices.Sort(accts)
		out[id] = accts
	}
	return out
}

// Neighbours lists the client ids of the banks this bank shares
// transactions with, sorted.
func (v *View) Neighbours() []string {
	peers := v.Peers()
	ids := make([]string, 0, len(peers))
	for id := range peers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// SplitWorld cuts a world into one view per bank (in the world's bank
// order), each with a local graph of the rows it sees, sharing the world's
// temporal split. accounts (may be nil) are handed to their banks.
func SplitWorld(w *amlworld.Graph, accounts []amlworld.Account) ([]*View, error) {
	if err := w.Validate(); err != nil {
		return nil, fmt.Errorf("aml: split banks: %w", err)
	}
	cut := amlworld.CutoffsOf(w)
	locals := make([]*amlworld.Graph, w.NumBanks())
	for b := range locals {
		locals[b] = amlworld.NewGraph(w.Name)
	}
	for e := range w.Src {
		r := w.Row(e)
		bs, bd := w.AccountBank[w.Src[e]], w.AccountBank[w.Dst[e]]
		locals[bs].AddRow(&r)
		if bd != bs {
			locals[bd].AddRow(&r)
		}
	}
	byBank := map[string][]amlworld.Account{}
	for _, a := range accounts {
		byBank[a.BankID] = append(byBank[a.BankID], a)
	}
	views := make([]*View, w.NumBanks())
	for b, g := range locals {
		v, err := NewView(w.BankIDs[b], g, cut, byBank[w.BankIDs[b]])
		if err != nil {
			return nil, fmt.Errorf("aml: split banks: %w", err)
		}
		views[b] = v
	}
	return views, nil
}
