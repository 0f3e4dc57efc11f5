package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"graphfed/graph"
	"graphfed/job"
	"graphfed/workload/rec"
)

// `graphfed split rec` and `graphfed sim --lightgcn` build identical
// clients for the same options (--split, --split-seed, --partitioning,
// --partition-seed, --clients, --edge-variation): the directories split
// rec writes hold the clients sim's flags cut.
func TestSplitRecAndSimBuildSameClients(t *testing.T) {
	dir := t.TempDir()
	c := rec.DefaultGenConfig()
	c.Users, c.Items = 400, 700
	d, err := rec.Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteLightGCN(dir); err != nil {
		t.Fatal(err)
	}
	opts := []string{"--clients", "3", "--split", "random:0.8,0.1,0.1", "--split-seed", "4", "--partitioning", "1",
		"--partition-seed", "2", "--edge-variation", "0.15"}
	out := filepath.Join(t.TempDir(), "clients")
	rep, err := runSplitCmd(t, append([]string{"split", "rec", "--lightgcn", dir, "--out", out}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Clients != 3 || rep.Metrics["split"] != "random:0.8,0.1,0.1" {
		t.Fatalf("split rec report %+v", rep)
	}
	var s simFlags
	cmd := &cobra.Command{Use: "sim"}
	s.register(cmd)
	if err := cmd.ParseFlags(append([]string{"--lightgcn", dir, "--seed", "9"}, opts...)); err != nil {
		t.Fatal(err)
	}
	// The fields runSim binds into the job's RecSpec that shape the clients.
	spec := job.RecSpec{Dir: s.lightgcn, Clients: s.clients, EdgeVariation: s.edgeVariation, MaxUsers: s.maxUsers,
		Seed: s.seed, Protocol: s.recProtocol()}
	split, err := job.RecSplitOptions(spec)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := rec.Split(d, split)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range want {
		cdir := filepath.Join(out, cl.ID)
		got, err := rec.LoadClient(cdir)
		if err != nil {
			t.Fatal(err)
		}
		val, err := rec.LoadValidation(cdir, got)
		if err != nil || val == nil {
			t.Fatalf("%s: no validation split (%v)", cl.ID, err)
		}
		for _, m := range [][2]*graph.CSR{{got.Train, cl.Data.Train}, {got.Test, cl.Data.Test}, {val, cl.Val}} {
			if !slices.Equal(m[0].RowPtr, m[1].RowPtr) || !slices.Equal(m[0].ColIdx, m[1].ColIdx) {
				t.Fatalf("%s: split rec and sim --lightgcn cut different clients", cl.ID)
			}
		}
	}
	for _, bad := range [][]string{{"--split", "random:0.8,0.1"}, {"--split", "public"}} {
		if _, err := runSplitCmd(t, append([]string{"split", "rec", "--lightgcn", dir, "--out", out}, bad...)...); err == nil {
			t.Fatalf("split rec %v accepted", bad)
		}
	}
}
