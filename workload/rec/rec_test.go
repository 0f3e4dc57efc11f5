package rec

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"graphfed/graph"
)

// csr builds an implicit-feedback matrix from rows of column ids.
func csr(cols int, rows ...[]int32) *graph.CSR {
	m := &graph.CSR{Rows: len(rows), Cols: cols, RowPtr: make([]int, len(rows)+1)}
	for u, r := range rows {
		m.ColIdx = append(m.ColIdx, r...)
		m.RowPtr[u+1] = len(m.ColIdx)
	}
	return m
}

// world: users 0 and 2 share items 0–2, user 1 and 3 items 3–5, user 4 has
// no training items; user 0 holds out item 4 (not in a catalog of users
// 0 and 2 alone) and item 2.
func world() *graph.Interactions {
	return &graph.Interactions{Name: "w", Users: 5, Items: 6,
		Train: csr(6, []int32{0, 1}, []int32{3, 4}, []int32{1, 2}, []int32{4, 5}, nil),
		Test:  csr(6, []int32{2, 4}, []int32{5}, []int32{0}, []int32{3}, []int32{1})}
}

func TestSplitRandom(t *testing.T) {
	cs, st, err := Split(world(), SplitOptions{Clients: 2, Partition: PartitionRandom, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st.NoTrainUsers != 1 {
		t.Fatalf("%d users without training items, want 1", st.NoTrainUsers)
	}
	var users []int32
	train := 0
	for i, c := range cs {
		if c.ID != ClientID(i) || c.Data.Users != len(c.Users) || c.Data.Items != len(c.Items) {
			t.Fatalf("client %d: %+v", i, c)
		}
		users = append(users, c.Users...)
		train += c.Data.Train.NNZ()
		// Local ids map back to the same interactions.
		for k, u := range c.Users {
			row, _ := c.Data.Train.Row(k)
			var global []int32
			for _, j := range row {
				global = append(global, c.Items[j])
			}
			want, _ := world().Train.Row(int(u))
			if !slices.Equal(global, want) {
				t.Fatalf("%s user %d: items %v, want %v", c.ID, u, global, want)
			}
		}
	}
	slices.Sort(users)
	if !slices.Equal(users, []int32{0, 1, 2, 3}) || train != 8 {
		t.Fatalf("users %v with %d training interactions, want 0..3 with 8", users, train)
	}
}

// A held-out item outside the client's catalog cannot be ranked by it.
func TestSplitDropsUnrankableTestItems(t *testing.T) {
	d := world()
	train := d.Train
	c := extract(d, nil, train, []int32{0, 2}, "c")
	if c.TestDropped != 1 || !slices.Equal(c.Items, []int32{0, 1, 2}) {
		t.Fatalf("dropped %d, catalog %v; want 1 dropped (item 4), catalog 0..2", c.TestDropped, c.Items)
	}
	if got, _ := c.Data.Test.Row(0); !slices.Equal(got, []int32{2}) {
		t.Fatalf("user 0 holds out %v, want local item 2", got)
	}
}

func TestSplitRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  SplitOptions
		want string
	}{
		{"no clients", SplitOptions{Clients: 0}, "0 clients"},
		{"unknown partition", SplitOptions{Clients: 2, Partition: "louvain"}, `partition "louvain"`},
		{"a client without users", SplitOptions{Clients: 9, Partition: PartitionRandom}, "has no users"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Split(world(), tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// What an agent prepares from the directory WriteClients wrote is what
// the simulation prepares from the split in memory, bit for bit.
func TestPrepareFromDirectoryMatchesMemory(t *testing.T) {
	cs, _, err := Split(world(), SplitOptions{Clients: 2, Partition: PartitionRandom, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteClients(dir, cs); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		d, err := LoadClient(filepath.Join(dir, c.ID))
		if err != nil {
			t.Fatal(err)
		}
		mem, err := Prepare(c.Data, PrepareOptions{Phi: 4, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		disk, err := Prepare(d, PrepareOptions{Phi: 4, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(mem, disk) {
			t.Fatalf("%s: prepared from disk %+v, from memory %+v", c.ID, disk, mem)
		}
		if n := mem.Data.Nodes(); mem.Vectors.Rows != n || mem.Vectors.Cols != min(4, n) || len(mem.Kernel) != mem.Vectors.Cols {
			t.Fatalf("%s: %d nodes, eigenvectors %dx%d, kernel %d", c.ID, n, mem.Vectors.Rows, mem.Vectors.Cols, len(mem.Kernel))
		}
	}
}

func TestPrepareRefuses(t *testing.T) {
	if _, err := Prepare(world(), PrepareOptions{Phi: 0}); err == nil || !strings.Contains(err.Error(), "phi 0") {
		t.Fatalf("phi 0: error %v", err)
	}
	// A held-out item among the user's training items is left out.
	d := world()
	d.Test = csr(6, []int32{0, 2}, nil, nil, nil, nil)
	p, err := Prepare(d, PrepareOptions{Phi: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p.TestDropped != 1 || p.TestItems != 1 || !slices.Equal(p.Data.Test[0], []int32{2}) {
		t.Fatalf("dropped %d, kept %d: %v", p.TestDropped, p.TestItems, p.Data.Test[0])
	}
}
