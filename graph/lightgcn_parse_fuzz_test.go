package graph

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// FuzzParseLightGCN checks the LightGCN parser against an independent
// reading of the format (FuzzLoadLightGCN, in lightgcn_fuzz_test.go, checks
// the loader's round trip through files). Run it with
//
//	go test ./graph -run XXX -fuzz '^FuzzParseLightGCN$' -fuzztime 10m -parallel 1

// refLightGCNFile is an independent reading of one LightGCN file, straight
// from the format's description: per user its sorted items.
type refLightGCNFile struct {
	rows             map[int32][]int32
	maxUser, maxItem int32
	users, items     int // ids read
}

func refReadLightGCN(data []byte) (*refLightGCNFile, bool) {
	f := &refLightGCNFile{rows: map[int32][]int32{}, maxUser: -1, maxItem: -1}
	isSpace := func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' }
	lines := bytes.Split(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	if len(data) == 0 {
		lines = nil
	}
	for _, line := range lines {
		fields := bytes.FieldsFunc(line, isSpace)
		if len(fields) == 0 {
			continue
		}
		var ids []int32
		for _, fl := range fields {
			if len(fl) > 10 {
				return nil, false
			}
			v, err := strconv.ParseUint(string(fl), 10, 64)
			if err != nil || v > math.MaxInt32 || fl[0] == '+' {
				return nil, false
			}
			ids = append(ids, int32(v))
		}
		user, items := ids[0], slices.Clone(ids[1:])
		if _, dup := f.rows[user]; dup {
			return nil, false
		}
		slices.Sort(items)
		if len(slices.Compact(slices.Clone(items))) != len(items) {
			return nil, false
		}
		f.rows[user] = items
		f.maxUser = max(f.maxUser, user)
		for _, it := range items {
			f.maxItem = max(f.maxItem, it)
		}
		f.users++
		f.items += len(items)
	}
	return f, true
}

// refCSR is the users×items matrix of a reference file.
func (f *refLightGCNFile) csr(users, items int) *CSR {
	m := &CSR{Rows: users, Cols: items, RowPtr: make([]int, users+1), ColIdx: []int32{}}
	for u := 0; u < users; u++ {
		m.ColIdx = append(m.ColIdx, f.rows[int32(u)]...)
		m.RowPtr[u+1] = len(m.ColIdx)
	}
	return m
}

func sameCSR(a, b *CSR) bool {
	return a.Rows == b.Rows && a.Cols == b.Cols && slices.Equal(a.RowPtr, b.RowPtr) &&
		slices.Equal(a.ColIdx, b.ColIdx) && a.Val == nil && b.Val == nil
}

// renderLightGCN writes a matrix in the layout WriteLightGCN documents.
func renderLightGCN(m *CSR) []byte {
	var b []byte
	for u := 0; u < m.Rows; u++ {
		b = strconv.AppendInt(b, int64(u), 10)
		cols, _ := m.Row(u)
		for _, c := range cols {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(c), 10)
		}
		b = append(b, '\n')
	}
	return b
}

// FuzzParseLightGCN: the LightGCN parser never panics and agrees with an
// independent reading of the format: it accepts exactly the files whose
// every field is a decimal id below 2^31, with no user twice in a file, no
// item twice for a user and dense ids, and then yields the same matrices.
// What it accepts is a valid dataset that survives WriteLightGCN and
// LoadLightGCN unchanged.
func FuzzParseLightGCN(f *testing.F) {
	f.Add([]byte("0 0 1 2\n1 2 3\n2\n"), []byte("0 3\n1 0\n"))
	f.Add([]byte("0\t1\t2\r\n\n 1  0 \n"), []byte(""))
	f.Add([]byte("0 1 1\n"), []byte("0 2\n"))
	f.Add([]byte("0 1\n0 2\n"), []byte("1 1\n"))
	f.Add([]byte("0 2147483647\n"), []byte("0 +1\n"))
	f.Add([]byte("70000\n"), []byte("0 -1\n"))
	f.Add([]byte("0 01 0002\n3"), []byte("4294967296 1\n"))
	if dir := filepath.Join("..", "..", "shared", "datasets", "gowalla"); true {
		// The head of the real Gowalla split.
		var head [2][]byte
		for k, name := range []string{lightGCNTrain, lightGCNTest} {
			if fh, err := os.Open(filepath.Join(dir, name)); err == nil {
				sc := bufio.NewScanner(fh)
				sc.Buffer(nil, maxLineBytes)
				for i := 0; i < 4 && sc.Scan(); i++ {
					head[k] = append(append(head[k], sc.Bytes()...), '\n')
				}
				fh.Close()
			}
		}
		if head[0] != nil && head[1] != nil {
			f.Add(head[0], head[1])
		}
	}
	f.Fuzz(func(t *testing.T, train, test []byte) {
		d, err := parseLightGCN(bytes.NewReader(train), bytes.NewReader(test), "train.txt", "test.txt")
		rtr, ok1 := refReadLightGCN(train)
		rte, ok2 := refReadLightGCN(test)
		ok := ok1 && ok2
		var users, items int
		if ok {
			users = int(max(rtr.maxUser, rte.maxUser)) + 1
			items = int(max(rtr.maxItem, rte.maxItem)) + 1
			ok = users <= 2*(rtr.users+rte.users)+1<<16 && items <= 2*(rtr.items+rte.items)+1<<16
		}
		if (err == nil) != ok {
			t.Fatalf("parser error %v, reference accepts: %v", err, ok)
		}
		if err != nil {
			return
		}
		if d.Users != users || d.Items != items {
			t.Fatalf("%d users %d items, want %d %d", d.Users, d.Items, users, items)
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("parsed an invalid dataset: %v", err)
		}
		if !sameCSR(d.Train, rtr.csr(users, items)) || !sameCSR(d.Test, rte.csr(users, items)) {
			t.Fatalf("matrices differ from the reference reading")
		}
		if d.NumTrain() != rtr.items || d.NumTest() != rte.items {
			t.Fatalf("%d/%d interactions, want %d/%d", d.NumTrain(), d.NumTest(), rtr.items, rte.items)
		}
		// Round trip in memory, and through the files for small datasets.
		back, err := parseLightGCN(bytes.NewReader(renderLightGCN(d.Train)), bytes.NewReader(renderLightGCN(d.Test)), "a", "b")
		if err != nil || back.Users != d.Users || back.Items != d.Items || !sameCSR(back.Train, d.Train) || !sameCSR(back.Test, d.Test) {
			t.Fatalf("rendered dataset does not read back the same: %v", err)
		}
		if d.Users <= 256 {
			dir := filepath.Join(t.TempDir(), "ds")
			if err := d.WriteLightGCN(dir); err != nil {
				t.Fatal(err)
			}
			back, err := LoadLightGCN(dir)
			if err != nil {
				t.Fatalf("written dataset does not load: %v", err)
			}
			d.Name = back.Name
			if !reflect.DeepEqual(back, d) {
				t.Fatalf("write/load round trip changed the dataset")
			}
		}
	})
}
