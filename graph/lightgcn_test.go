package graph

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeLightGCNDir writes train and test contents into a temporary
// directory and returns it.
func writeLightGCNDir(tb testing.TB, train, test string) string {
	tb.Helper()
	dir := tb.TempDir()
	for name, body := range map[string]string{lightGCNTrain: train, lightGCNTest: test} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

func rows(m *CSR) [][]int32 {
	out := make([][]int32, m.Rows)
	for u := range out {
		c, _ := m.Row(u)
		out[u] = append([]int32{}, c...)
	}
	return out
}

func TestLoadLightGCN(t *testing.T) {
	cases := []struct {
		name         string
		train, test  string
		users, items int
		trainRows    [][]int32
		testRows     [][]int32
	}{
		{"basic", "0 0 1 2\n1 2 3\n", "0 3\n1 0\n", 2, 4,
			[][]int32{{0, 1, 2}, {2, 3}}, [][]int32{{3}, {0}}},
		{"unsorted items, tabs, CRLF, blank lines, trailing space", "1\t5 3 4 \r\n\n0 1\r\n", "\n", 2, 6,
			[][]int32{{1}, {3, 4, 5}}, [][]int32{{}, {}}},
		{"user without items and a test-only user", "0 1\n1\n", "2 0\n", 3, 2,
			[][]int32{{1}, {}, {}}, [][]int32{{}, {}, {0}}},
		{"gap in user ids", "0 0\n3 1\n", "", 4, 2,
			[][]int32{{0}, {}, {}, {1}}, [][]int32{{}, {}, {}, {}}},
		{"same user in both files", "0 0 1\n", "0 2\n", 1, 3,
			[][]int32{{0, 1}}, [][]int32{{2}}},
		{"empty files", "", "", 0, 0, [][]int32{}, [][]int32{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := LoadLightGCN(writeLightGCNDir(t, c.train, c.test))
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			if d.Users != c.users || d.Items != c.items {
				t.Errorf("%d users %d items, want %d and %d", d.Users, d.Items, c.users, c.items)
			}
			if got := rows(d.Train); !reflect.DeepEqual(got, c.trainRows) {
				t.Errorf("train rows %v, want %v", got, c.trainRows)
			}
			if got := rows(d.Test); !reflect.DeepEqual(got, c.testRows) {
				t.Errorf("test rows %v, want %v", got, c.testRows)
			}
		})
	}
}

func TestLoadLightGCNMalformed(t *testing.T) {
	cases := []struct {
		name, train, test string
		want              []string // substrings of the error
	}{
		{"non-integer item", "0 1\n1 2 x3\n", "", []string{"train.txt:2", `item "x3"`}},
		{"negative user", "0 1\n-1 2\n", "", []string{"train.txt:2", `user "-1"`}},
		{"decimal item", "", "0 1.5\n", []string{"test.txt:1", `item "1.5"`}},
		{"overflow", "0 99999999999\n", "", []string{"train.txt:1", "below 2^31"}},
		{"int32 overflow", "0 2147483648\n", "", []string{"train.txt:1", "below 2^31"}},
		{"duplicate item", "0 1 2 1\n", "", []string{"train.txt:1", "item 1 listed twice for user 0"}},
		{"user on two lines", "0 1\n1 2\n0 3\n", "", []string{"train.txt:3", "user 0 already listed on line 1"}},
		{"sparse ids", "0 1\n2000000000 2\n", "", []string{"train.txt:2", "user id 2000000000", "dense"}},
		{"sparse item ids", "0 1\n", "0 1500000000\n", []string{"test.txt:1", "item id 1500000000"}},
		{"comma separated", "0,1,2\n", "", []string{"train.txt:1", `user "0,1,2"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadLightGCN(writeLightGCNDir(t, c.train, c.test))
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "graph: load lightgcn: ") {
				t.Errorf("error %q lacks the operation prefix", err)
			}
		})
	}
}

func TestLoadLightGCNMissingFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, lightGCNTrain), []byte("0 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadLightGCN(dir)
	if err == nil || !strings.Contains(err.Error(), "test.txt") {
		t.Fatalf("missing test.txt: error %v", err)
	}
}

func TestWriteLightGCNRoundTrip(t *testing.T) {
	d, err := LoadLightGCN(writeLightGCNDir(t, "0 4 2\n2 1\n", "3 0\n0 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "copy")
	if err := d.WriteLightGCN(out); err != nil {
		t.Fatal(err)
	}
	again, err := LoadLightGCN(out)
	if err != nil {
		t.Fatal(err)
	}
	again.Name = d.Name
	if !reflect.DeepEqual(d, again) {
		t.Errorf("round trip changed the dataset:\n%+v\n%+v", d, again)
	}
	if d.NumTrain() != 3 || d.NumTest() != 2 || !reflect.DeepEqual(d.TrainItems(0), []int32{2, 4}) ||
		!reflect.DeepEqual(d.TestItems(3), []int32{0}) || len(d.TrainItems(1)) != 0 ||
		!reflect.DeepEqual(d.ItemDegrees(), []int{0, 1, 1, 0, 1}) {
		t.Errorf("accessors disagree with the file: %+v", d)
	}
}

// TestLoadLightGCNGowalla checks the shared Gowalla split against the
// counts published with it (datasets/README.md).
func TestLoadLightGCNGowalla(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "datasets", "gowalla")
	if _, err := os.Stat(filepath.Join(dir, lightGCNTrain)); err != nil {
		t.Skipf("Gowalla not available at %s (the shared data folder is absent): %v", dir, err)
	}
	d, err := LoadLightGCN(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "gowalla" || d.Users != 29858 || d.Items != 40981 || d.NumTrain() != 810128 || d.NumTest() != 217242 {
		t.Errorf("gowalla: %q %d users %d items %d train %d test, want 29858, 40981, 810128, 217242",
			d.Name, d.Users, d.Items, d.NumTrain(), d.NumTest())
	}
}
