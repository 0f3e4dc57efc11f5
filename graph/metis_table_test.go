package graph

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// louvainEdgeLimit: above it the cut table runs Louvain only on request.
const louvainEdgeLimit = 100_000

// cutTableDatasets are the graphs issue 15 reports partitions on.
var cutTableDatasets = []string{"cora", "chameleon", "actor", "minesweeper", "tolokers"}

// TestPartitionCutTable prints the edge cut and balance of METIS, Louvain
// and random partitions into 10 clients on every shared dataset, over the
// whole graph (the largest connected component is the whole graph except
// on Cora, where it is also reported), and checks the claims the issue
// makes: METIS balanced within 3%, cutting fewer edges than random
// everywhere and no more than Louvain. Run with -v to see the table.
// gonum's Louvain needs minutes on Tolokers (519,000 edges), so graphs
// above louvainEdgeLimit get it only with GRAPHFED_CUT_TABLE_LOUVAIN=1.
func TestPartitionCutTable(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every shared dataset; skipped with -short")
	}
	const clients = 10
	var tab strings.Builder
	fmt.Fprintf(&tab, "\n| dataset | nodes | edges | metis cut | metis bal | louvain cut | louvain bal | random cut | random bal | metis time |\n")
	fmt.Fprintf(&tab, "|---|---|---|---|---|---|---|---|---|---|\n")
	for _, name := range cutTableDatasets {
		d, err := LoadTSV(sharedDataset(t, name))
		if err != nil {
			t.Fatal(err)
		}
		variants := []*Dataset{d}
		if lcc, _, err := LargestComponent(d); err != nil {
			t.Fatal(err)
		} else if lcc.N() < d.N() {
			lcc.Name = name + " (LCC)"
			variants = append(variants, lcc)
		}
		for _, v := range variants {
			start := time.Now()
			m, err := PartitionMetis(v.Adj, clients, MetisOptions{}, seeded(1))
			if err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			edges := v.Adj.NNZ() / 2
			pct := func(c int) string { return fmt.Sprintf("%d (%.1f%%)", c, 100*float64(c)/float64(edges)) }
			louvain, louvainBal := "skipped (GRAPHFED_CUT_TABLE_LOUVAIN=1)", "-"
			if edges <= louvainEdgeLimit || os.Getenv("GRAPHFED_CUT_TABLE_LOUVAIN") == "1" {
				l, err := PartitionLouvain(v.Adj, clients, seeded(1))
				if err != nil {
					t.Fatal(err)
				}
				cl := EdgeCut(v.Adj, l)
				louvain, louvainBal = pct(cl), fmt.Sprintf("%.3f", PartImbalance(l, clients))
				if cm := EdgeCut(v.Adj, m); cm > cl {
					t.Errorf("%s: metis cut %d above louvain's %d", v.Name, cm, cl)
				}
			}
			r, _ := PartitionRandom(v.N(), clients, seeded(1))
			cm, cr := EdgeCut(v.Adj, m), EdgeCut(v.Adj, r)
			fmt.Fprintf(&tab, "| %s | %d | %d | %s | %.3f | %s | %s | %s | %.3f | %s |\n", v.Name, v.N(), edges,
				pct(cm), PartImbalance(m, clients), louvain, louvainBal, pct(cr), PartImbalance(r, clients),
				took.Round(time.Millisecond))
			if b := PartImbalance(m, clients); b > 1.03 {
				t.Errorf("%s: metis imbalance %.3f, want at most 1.03", v.Name, b)
			}
			if cm >= cr {
				t.Errorf("%s: metis cut %d not below random's %d", v.Name, cm, cr)
			}
		}
	}
	t.Log(tab.String())
}

// BenchmarkPartitionMetisTolokers partitions the largest shared graph
// (11,758 nodes, 519,000 edges) into 10 parts.
func BenchmarkPartitionMetisTolokers(b *testing.B) {
	d, err := LoadTSV(sharedDataset(b, "tolokers"))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := PartitionMetis(d.Adj, 10, MetisOptions{}, seeded(1)); err != nil {
			b.Fatal(err)
		}
	}
}
