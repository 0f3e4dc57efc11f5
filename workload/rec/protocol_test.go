package rec

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"graphfed/graph"
)

// edgeSpread is each client's training interactions relative to the mean.
func edgeSpread(cs []Client) []float64 {
	total := 0
	for _, c := range cs {
		total += c.Data.Train.NNZ()
	}
	mean := float64(total) / float64(len(cs))
	out := make([]float64, len(cs))
	for i, c := range cs {
		out[i] = (float64(c.Data.Train.NNZ()) - mean) / mean
	}
	return out
}

// The spectral partition spreads training interactions over
// [(1−v)·E/C, (1+v)·E/C], client 0 the most and the last the fewest: the
// paper's ±20% at v = 0.2, on a generated dataset.
func TestEdgeVariationBand(t *testing.T) {
	d := genWorld(t)
	for _, tc := range []struct {
		name    string
		v       float64
		clients int
		holdout Holdout
	}{
		{"paper ±20%, 4 clients, 8:1:1", 0.2, 4, PaperHoldout(1)},
		{"±20%, 4 clients, LightGCN split", 0.2, 4, Holdout{}},
		{"±10%, 3 clients", 0.1, 3, PaperHoldout(1)},
		{"equal shares", 0, 4, PaperHoldout(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, _, err := Split(d, SplitOptions{Clients: tc.clients, EdgeVariation: tc.v, Holdout: tc.holdout, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			spread := edgeSpread(cs)
			// Rebalancing stops within 0.5% of the mean share plus one
			// user's interactions (users move whole): allow 3%.
			const tol = 0.03
			for i, s := range spread {
				want := tc.v * (1 - 2*float64(i)/float64(tc.clients-1))
				if math.Abs(s-want) > tol {
					t.Fatalf("client %d holds %+.3f of the mean share, want %+.3f (spread %v)", i, s, want, spread)
				}
				if math.Abs(s) > tc.v+tol {
					t.Fatalf("client %d outside ±%g: %+.3f", i, tc.v, s)
				}
			}
		})
	}
}

// userSets is each client's global users.
func userSets(cs []Client) [][]int32 {
	out := make([][]int32, len(cs))
	for i, c := range cs {
		out[i] = c.Users
	}
	return out
}

// Partitioning k > 0 matches clusters to targets otherwise: another
// partition, the same for the same k, and every one within the band.
func TestDistinctPartitionings(t *testing.T) {
	d := genWorld(t)
	opt := SplitOptions{Clients: 4, EdgeVariation: 0.2, Holdout: PaperHoldout(1), Seed: 1}
	var parts [][][]int32
	for k := range 3 {
		o := opt
		o.Partitioning = k
		cs, _, err := Split(d, o)
		if err != nil {
			t.Fatal(err)
		}
		again, _, _ := Split(d, o)
		if !slices.EqualFunc(userSets(cs), userSets(again), slices.Equal) {
			t.Fatalf("partitioning %d is not deterministic", k)
		}
		for i, s := range edgeSpread(cs) {
			if math.Abs(s) > 0.23 {
				t.Fatalf("partitioning %d client %d at %+.3f of the mean share", k, i, s)
			}
		}
		parts = append(parts, userSets(cs))
	}
	for k := 1; k < len(parts); k++ {
		if slices.EqualFunc(parts[0], parts[k], slices.Equal) {
			t.Fatalf("partitioning %d is partitioning 0", k)
		}
	}
	if _, _, err := Split(d, SplitOptions{Clients: 4, Partitioning: -1}); err == nil {
		t.Fatal("partitioning -1 accepted")
	}
}

// A random holdout gives every client its validation items, disjoint from
// its training and test items, and WriteClients writes them as val.txt in
// the LightGCN layout, which LoadValidation reads back.
func TestClientValidationFile(t *testing.T) {
	d := genWorld(t)
	cs, _, err := Split(d, SplitOptions{Clients: 3, EdgeVariation: 0.2, Holdout: PaperHoldout(4), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := WriteClients(out, cs); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Val == nil || c.Val.NNZ() == 0 {
			t.Fatalf("%s has no validation items", c.ID)
		}
		for u := range c.Data.Users {
			va, _ := c.Val.Row(u)
			for _, i := range va {
				if _, in := slices.BinarySearch(c.Data.TrainItems(u), i); in {
					t.Fatalf("%s user %d: validation item %d is a training item", c.ID, u, i)
				}
				if _, in := slices.BinarySearch(c.Data.TestItems(u), i); in {
					t.Fatalf("%s user %d: validation item %d is a test item", c.ID, u, i)
				}
			}
		}
		dir := filepath.Join(out, c.ID)
		raw, err := os.ReadFile(filepath.Join(dir, ValFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
		if len(lines) != c.Data.Users {
			t.Fatalf("%s: %d lines in %s, want one per user (%d)", c.ID, len(lines), ValFile, c.Data.Users)
		}
		if va, _ := c.Val.Row(0); lines[0] != strings.Join(append([]string{"0"}, itoa(va)...), " ") {
			t.Fatalf("%s: first line %q, want user 0 and its items %v", c.ID, lines[0], va)
		}
		back, err := LoadClient(dir)
		if err != nil {
			t.Fatal(err)
		}
		val, err := LoadValidation(dir, back)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(val.RowPtr, c.Val.RowPtr) || !slices.Equal(val.ColIdx, c.Val.ColIdx) {
			t.Fatalf("%s: val.txt does not read back", c.ID)
		}
		p, err := Prepare(back, PrepareOptions{Phi: 8, Seed: 1, Val: val})
		if err != nil {
			t.Fatal(err)
		}
		if p.ValItems != c.Val.NNZ() || p.Data.Val == nil {
			t.Fatalf("%s: prepared %d validation items, want %d", c.ID, p.ValItems, c.Val.NNZ())
		}
	}
	// Without a validation split no val.txt is left behind, not even a
	// stale one.
	cs2, _, err := Split(d, SplitOptions{Clients: 3, EdgeVariation: 0.2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteClients(out, cs2); err != nil {
		t.Fatal(err)
	}
	back, _ := LoadClient(filepath.Join(out, cs2[0].ID))
	if val, err := LoadValidation(filepath.Join(out, cs2[0].ID), back); err != nil || val != nil {
		t.Fatalf("validation after a LightGCN split: %v, %v", val, err)
	}
}

func itoa(v []int32) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i] = strconv.Itoa(int(x))
	}
	return out
}

func TestLoadValidationRejects(t *testing.T) {
	d := &graph.Interactions{Name: "c", Users: 2, Items: 3, Train: csr(3, []int32{0}, []int32{1}), Test: csr(3, nil, nil)}
	for _, bad := range []string{"2 0\n", "0 3\n", "0 1 1\n", "0 1\n0 2\n", "x 1\n", "0 -1\n"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ValFile), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadValidation(dir, d); err == nil || !strings.Contains(err.Error(), ValFile) {
			t.Fatalf("val.txt %q: error %v, want one naming the file", bad, err)
		}
	}
}

// The paper's protocol on Gowalla: 8:1:1 and ±20% over 4 spectral clients,
// two distinct partitionings.
func TestGowallaProtocol(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "datasets", "gowalla")
	if _, err := os.Stat(filepath.Join(dir, "train.txt")); err != nil {
		t.Skipf("Gowalla not available at %s (the shared data folder is absent): %v", dir, err)
	}
	if testing.Short() {
		t.Skip("partitions all of Gowalla")
	}
	d, err := graph.LoadLightGCN(dir)
	if err != nil {
		t.Fatal(err)
	}
	var parts [][][]int32
	for k := range 2 {
		cs, _, err := Split(d, SplitOptions{Clients: 4, EdgeVariation: 0.2, Holdout: PaperHoldout(1), Partitioning: k, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		spread := edgeSpread(cs)
		for i, want := range []float64{0.2, 0.2 / 3, -0.2 / 3, -0.2} {
			if math.Abs(spread[i]-want) > 0.01 {
				t.Fatalf("partitioning %d: spread %v, want ±20%% and ±6.7%%", k, spread)
			}
		}
		parts = append(parts, userSets(cs))
	}
	if slices.EqualFunc(parts[0], parts[1], slices.Equal) {
		t.Fatal("the two partitionings are the same")
	}
}
