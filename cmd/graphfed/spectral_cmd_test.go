package main

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"graphfed/graph"
	"graphfed/spectral"
)

// runSpectralCmd runs `graphfed spectral <args> --json` in process and
// returns the JSON report from the last stdout line.
func runSpectralCmd(t *testing.T, args ...string) (Report, error) {
	t.Helper()
	g := &globalFlags{logLevel: "error", json: true}
	root := &cobra.Command{Use: "graphfed", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().BoolVar(&g.json, "json", true, "")
	root.AddCommand(newSpectralCmd(g))
	root.SetArgs(append([]string{"spectral"}, append(args, "--json")...))
	return executeForReport(t, root)
}

func TestSpectralEigLightGCN(t *testing.T) {
	r, err := spectral.GNMK(60, 80, 900, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	d := &graph.Interactions{Users: 60, Items: 80, Train: r, Test: &graph.CSR{Rows: 60, Cols: 80, RowPtr: make([]int, 61)}}
	dir := filepath.Join(t.TempDir(), "toy")
	if err := d.WriteLightGCN(dir); err != nil {
		t.Fatal(err)
	}
	rep, err := runSpectralCmd(t, "eig", "--lightgcn", dir, "--phi", "8", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Metrics
	if rep.Command != "spectral eig" || rep.Dataset != "toy" || rep.Seed != 3 || rep.Seconds <= 0 {
		t.Errorf("report %+v", rep)
	}
	for k, want := range map[string]float64{"phi": 8, "nodes": 140, "nnz": 1800} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	for _, k := range []string{"lambda_min", "lambda_max", "max_residual", "restarts", "iterations", "matvecs", "components", "orthogonality"} {
		if _, ok := m[k]; !ok {
			t.Errorf("metric %s missing", k)
		}
	}
	lo, hi, res := m["lambda_min"].(float64), m["lambda_max"].(float64), m["max_residual"].(float64)
	if lo != 0 || !(hi > 0 && hi < 2) || !(res <= 1e-8) {
		t.Errorf("λ in [%v, %v], max residual %v", lo, hi, res)
	}
}

func TestSpectralEigDataset(t *testing.T) {
	dir := filepath.Join("..", "..", "graph", "testdata", "tsv", "tiny")
	rep, err := runSpectralCmd(t, "eig", "--dataset", dir, "--phi", "3", "--tol", "1e-12")
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Metrics
	if m["phi"] != 3.0 || m["tol"] != 1e-12 || !(m["max_residual"].(float64) <= 1e-8) {
		t.Errorf("metrics %v", m)
	}
}

func TestSpectralEigErrors(t *testing.T) {
	dir := filepath.Join("..", "..", "graph", "testdata", "tsv", "tiny")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eig", "--phi", "3"}, "exactly one of"},
		{[]string{"eig", "--phi", "3", "--dataset", dir, "--lightgcn", dir}, "exactly one of"},
		{[]string{"eig", "--dataset", dir}, "--phi 0"},
		{[]string{"eig", "--dataset", dir, "--phi", "2", "--tol", "0"}, "--tol 0"},
		{[]string{"eig", "--lightgcn", filepath.Join(t.TempDir(), "absent"), "--phi", "2"}, "train.txt"},
		{[]string{"eig", "--dataset", dir, "--phi", "100000"}, "phi 100000"},
	} {
		_, err := runSpectralCmd(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "spectral eig: ") {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}
