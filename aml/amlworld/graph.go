package amlworld

import (
	"fmt"

	"graphfed/graph"
)

// Graph is the directed transaction multigraph of an AMLworld *_Trans.csv
// file: one node per account, one edge per row, in file order. Accounts are
// keyed by (bank id, account number) as written, so "010"/"A" and "10"/"A"
// are different accounts at different banks; nodes are numbered 0..N-1 in
// order of first appearance, banks likewise.
//
// Edge e goes from account Src[e] to account Dst[e] (Src == Dst for a
// self-transfer). An edge whose endpoints sit at different banks is a
// cross-client edge in federated training: both banks know it.
type Graph struct {
	Name string

	BankIDs     []string // bank index -> bank id as written ("010")
	AccountBank []int32  // account index -> bank index
	AccountIDs  []string // account index -> account number as written

	Src, Dst       []int32
	Time           []int64 // Unix seconds, UTC, minute resolution
	AmountPaid     []float64
	AmountReceived []float64
	PayCurrency    []Currency
	RecvCurrency   []Currency
	Format         []Format
	Label          []uint8 // 1 = laundering

	// Account lookup. Account numbers of up to 11 characters of [0-9A-Z]
	// (all published and generated ones) are packed into an integer and
	// found in amlIndex; any other account goes through the string map.
	packed amlIndex
	index  map[string]int32 // amlKey(bank, account) -> account index
	banks  map[string]int32 // bank id -> bank index
	// unindexed: Compact dropped packed; the next lookup rebuilds it.
	unindexed bool
}

// Compact trims the transaction arrays to their length (appending leaves
// up to a quarter spare) and drops the packed account lookup, which the
// next Account or AddRow rebuilds: a bank's graph, once built, is read by
// index only, and at 5M rows the lookups of eight banks held 112 MB.
func (g *Graph) Compact() {
	g.Src, g.Dst, g.Time = clip(g.Src), clip(g.Dst), clip(g.Time)
	g.AmountPaid, g.AmountReceived = clip(g.AmountPaid), clip(g.AmountReceived)
	g.PayCurrency, g.RecvCurrency, g.Format, g.Label = clip(g.PayCurrency), clip(g.RecvCurrency), clip(g.Format), clip(g.Label)
	g.AccountBank, g.AccountIDs = clip(g.AccountBank), clip(g.AccountIDs)
	if g.packed.n > 0 {
		g.packed, g.unindexed = amlIndex{}, true
	}
}

// clip returns x in an array of exactly its length.
func clip[T any](x []T) []T {
	if cap(x) == len(x) {
		return x
	}
	return append(make([]T, 0, len(x)), x...)
}

// reindex rebuilds the packed lookup Compact dropped.
func (g *Graph) reindex() {
	if !g.unindexed {
		return
	}
	g.unindexed = false
	for i, acct := range g.AccountIDs {
		if v, ok := amlPack([]byte(acct)); ok {
			g.packed.put(g.AccountBank[i], v, int32(i))
		}
	}
}

// amlBase36 is the base-36 digit value of '0'-'9' and 'A'-'Z', 0xFF else.
var amlBase36 = func() (t [256]uint8) {
	for i := range t {
		t[i] = 0xFF
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = uint8(c - '0')
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = uint8(c - 'A' + 10)
	}
	return t
}()

// amlPack packs an account number of 1..11 characters of [0-9A-Z] into an
// integer, injectively: base-36 digits, times 12, plus the length (so "0A"
// and "A" differ, and no account packs to 0).
func amlPack(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 11 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		d := amlBase36[c]
		if d == 0xFF {
			return 0, false
		}
		v = v*36 + uint64(d)
	}
	return v*12 + uint64(len(b)), true
}

// NewGraph returns an empty graph; AddRow grows it.
func NewGraph(name string) *Graph {
	return &Graph{Name: name, index: map[string]int32{}, banks: map[string]int32{}}
}

// NumAccounts is the number of accounts N.
func (g *Graph) NumAccounts() int { return len(g.AccountIDs) }

// NumEdges is the number of transactions.
func (g *Graph) NumEdges() int { return len(g.Src) }

// NumBanks is the number of distinct bank ids.
func (g *Graph) NumBanks() int { return len(g.BankIDs) }

// CrossBank reports whether edge e joins accounts at different banks.
func (g *Graph) CrossBank(e int) bool {
	return g.AccountBank[g.Src[e]] != g.AccountBank[g.Dst[e]]
}

// Account returns the index of account acct at bank, if present.
func (g *Graph) Account(bank, acct string) (int32, bool) {
	b, ok := g.banks[bank]
	if !ok {
		return 0, false
	}
	if v, ok := amlPack([]byte(acct)); ok {
		g.reindex()
		return g.packed.get(b, v)
	}
	var buf [128]byte
	i, ok := g.index[string(amlKey(buf[:0], []byte(bank), []byte(acct)))]
	return i, ok
}

// Bank returns the index of a bank id, if present.
func (g *Graph) Bank(id string) (int32, bool) {
	i, ok := g.banks[id]
	return i, ok
}

// amlKey is the map key of an account: bank, a comma (which neither field
// may contain), account.
func amlKey(dst, bank, acct []byte) []byte {
	dst = append(dst, bank...)
	dst = append(dst, ',')
	return append(dst, acct...)
}

// node returns the index of (bank, acct), adding it if new. key is scratch.
func (g *Graph) node(bank, acct []byte, key *[]byte) int32 {
	b, ok := g.banks[string(bank)] // no allocation for the lookup
	if !ok {
		b = int32(len(g.BankIDs))
		g.BankIDs = append(g.BankIDs, string(bank))
		g.banks[string(bank)] = b
	}
	v, packable := amlPack(acct)
	if packable {
		g.reindex()
		if i, ok := g.packed.get(b, v); ok {
			return i
		}
	} else {
		*key = amlKey((*key)[:0], bank, acct)
		if i, ok := g.index[string(*key)]; ok {
			return i
		}
	}
	i := int32(len(g.AccountIDs))
	g.AccountIDs = append(g.AccountIDs, string(acct))
	g.AccountBank = append(g.AccountBank, b)
	if packable {
		g.packed.put(b, v, i)
	} else {
		g.index[string(*key)] = i
	}
	return i
}

// AddRow appends one transaction, adding its accounts and banks if new.
func (g *Graph) AddRow(r *TxRow) {
	var buf [128]byte
	key := buf[:0]
	var lab uint8
	if r.Laundering {
		lab = 1
	}
	g.add(g.node([]byte(r.FromBank), []byte(r.FromAccount), &key),
		g.node([]byte(r.ToBank), []byte(r.ToAccount), &key),
		r.Time, r.AmountPaid, r.AmountReceived, r.PayCurrency, r.RecvCurrency, r.Format, lab)
}

func (g *Graph) add(s, d int32, t int64, paid, recv float64, pc, rc Currency, f Format, lab uint8) {
	g.Src = append(g.Src, s)
	g.Dst = append(g.Dst, d)
	g.Time = append(g.Time, t)
	g.AmountPaid = append(g.AmountPaid, paid)
	g.AmountReceived = append(g.AmountReceived, recv)
	g.PayCurrency = append(g.PayCurrency, pc)
	g.RecvCurrency = append(g.RecvCurrency, rc)
	g.Format = append(g.Format, f)
	g.Label = append(g.Label, lab)
}

// Row returns edge e as a TxRow (bank and account strings alias the graph's).
func (g *Graph) Row(e int) TxRow {
	s, d := g.Src[e], g.Dst[e]
	return TxRow{
		Time:           g.Time[e],
		FromBank:       g.BankIDs[g.AccountBank[s]],
		FromAccount:    g.AccountIDs[s],
		ToBank:         g.BankIDs[g.AccountBank[d]],
		ToAccount:      g.AccountIDs[d],
		AmountReceived: g.AmountReceived[e],
		RecvCurrency:   g.RecvCurrency[e],
		AmountPaid:     g.AmountPaid[e],
		PayCurrency:    g.PayCurrency[e],
		Format:         g.Format[e],
		Laundering:     g.Label[e] == 1,
	}
}

// Edges lists the transactions as directed (Src, Dst) pairs, duplicates and
// self-transfers included; FromEdges(g.NumAccounts(), g.Edges(), true) gives
// the simple undirected account graph.
func (g *Graph) Edges() []graph.Edge {
	out := make([]graph.Edge, len(g.Src))
	for e := range g.Src {
		out[e] = graph.Edge{U: g.Src[e], V: g.Dst[e]}
	}
	return out
}

// Validate checks that every array has the length and ranges it claims.
func (g *Graph) Validate() error {
	n, m := len(g.AccountIDs), len(g.Src)
	if len(g.AccountBank) != n {
		return fmt.Errorf("graph: aml graph %q: %d account banks for %d accounts", g.Name, len(g.AccountBank), n)
	}
	for name, l := range map[string]int{"dst": len(g.Dst), "time": len(g.Time), "amount paid": len(g.AmountPaid),
		"amount received": len(g.AmountReceived), "pay currency": len(g.PayCurrency),
		"receiving currency": len(g.RecvCurrency), "format": len(g.Format), "label": len(g.Label)} {
		if l != m {
			return fmt.Errorf("graph: aml graph %q: %d %s entries for %d edges", g.Name, l, name, m)
		}
	}
	for i, b := range g.AccountBank {
		if b < 0 || int(b) >= len(g.BankIDs) {
			return fmt.Errorf("graph: aml graph %q: account %d bank %d outside [0,%d)", g.Name, i, b, len(g.BankIDs))
		}
	}
	for e := 0; e < m; e++ {
		if s, d := g.Src[e], g.Dst[e]; s < 0 || int(s) >= n || d < 0 || int(d) >= n {
			return fmt.Errorf("graph: aml graph %q: edge %d (%d,%d) outside [0,%d)", g.Name, e, s, d, n)
		}
		if g.PayCurrency[e] >= NumCurrencies || g.RecvCurrency[e] >= NumCurrencies ||
			g.Format[e] >= NumFormats || g.Label[e] > 1 {
			return fmt.Errorf("graph: aml graph %q: edge %d has an invalid currency, format or label", g.Name, e)
		}
	}
	return nil
}
