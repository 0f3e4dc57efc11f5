package amlworld

import (
	"fmt"
	"slices"
	"testing"
)

// Compact keeps every edge and account, trims the arrays, and the lookup
// it drops comes back: accounts are found, and rows added afterwards reuse
// them rather than duplicating.
func TestAMLGraphCompact(t *testing.T) {
	g := NewGraph("c")
	row := func(i int) TxRow {
		return TxRow{Time: int64(1661991600 + 60*i), FromBank: fmt.Sprint(10 + i%3), FromAccount: fmt.Sprintf("%X", 0x8000E0+i%7),
			ToBank: "010", ToAccount: fmt.Sprintf("A-%d", i%5), AmountPaid: float64(i), AmountReceived: float64(i), Laundering: i%11 == 0}
	}
	for i := range 100 {
		r := row(i)
		g.AddRow(&r)
	}
	before := *g
	src, accts := slices.Clone(g.Src), slices.Clone(g.AccountIDs)
	g.Compact()
	if cap(g.Src) != len(g.Src) || cap(g.Time) != len(g.Time) || cap(g.Label) != len(g.Label) {
		t.Fatalf("arrays not trimmed: src %d/%d, time %d/%d", len(g.Src), cap(g.Src), len(g.Time), cap(g.Time))
	}
	if !slices.Equal(g.Src, src) || !slices.Equal(g.AccountIDs, accts) || !slices.Equal(g.Label, before.Label) {
		t.Fatal("Compact changed the graph")
	}
	if g.packed.n != 0 {
		t.Fatalf("lookup of %d accounts kept", g.packed.n)
	}
	for a, id := range accts {
		if got, ok := g.Account(g.BankIDs[g.AccountBank[a]], id); !ok || got != int32(a) {
			t.Fatalf("account %d (%s) found as %d, %v", a, id, got, ok)
		}
	}
	g.Compact()
	n := g.NumAccounts()
	for i := range 100 {
		r := row(i)
		g.AddRow(&r)
	}
	if g.NumAccounts() != n || g.NumEdges() != 200 || g.Validate() != nil {
		t.Fatalf("rows added after Compact: %d accounts (want %d), %d edges, %v", g.NumAccounts(), n, g.NumEdges(), g.Validate())
	}
}
