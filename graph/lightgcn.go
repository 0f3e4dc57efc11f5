package graph

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Interactions is a user–item recommendation dataset: an implicit-feedback
// bipartite graph split into training and test interactions. Users and
// items are separate id spaces, 0..Users-1 and 0..Items-1.
//
// Train and Test are Users×Items unweighted CSR matrices (Val nil): row u
// lists the items user u interacted with, in increasing order and without
// repeats, so Train.Row(u) is user u's sorted training item list. A user
// may have no items in either split.
type Interactions struct {
	Name         string
	Users, Items int
	Train, Test  *CSR
}

// The LightGCN layout (He et al. 2020, used for Gowalla, Yelp2018 and
// Amazon-Book): a directory with train.txt and test.txt, one user per line,
// `user item item …`, ids from 0, fields separated by spaces or tabs.
const (
	lightGCNTrain = "train.txt"
	lightGCNTest  = "test.txt"
)

// LoadLightGCN reads dir/train.txt and dir/test.txt. A line is a user id
// followed by zero or more item ids; blank lines are skipped. Users is one
// more than the largest user id of either file and Items one more than the
// largest item id, as the LightGCN reference code counts them. A malformed
// line (a field that is not a non-negative integer below 2^31, an item
// listed twice, a user listed on two lines of one file) is an error naming
// the file and line.
//
// Ids must be dense: an id far beyond the number of ids read (more than
// twice that number plus 65,536) is rejected, so that a corrupt file
// cannot make the loader allocate gigabytes.
func LoadLightGCN(dir string) (*Interactions, error) {
	var files [2]io.Reader
	for k, name := range []string{lightGCNTrain, lightGCNTest} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("graph: load lightgcn: %w", err)
		}
		defer f.Close()
		files[k] = f
	}
	d, err := parseLightGCN(files[0], files[1], filepath.Join(dir, lightGCNTrain), filepath.Join(dir, lightGCNTest))
	if err != nil {
		return nil, err
	}
	d.Name = filepath.Base(filepath.Clean(dir))
	return d, nil
}

// lightGCNFile is one parsed file: per line, the user and its items.
type lightGCNFile struct {
	users   []int32
	rowPtr  []int // items of line k are items[rowPtr[k]:rowPtr[k+1]]
	items   []int32
	maxUser int32
	maxItem int32
	// lines of the largest ids, for the density error
	maxUserLine, maxItemLine int
}

// parseLightGCN parses the two files; trainName and testName label errors.
func parseLightGCN(train, test io.Reader, trainName, testName string) (*Interactions, error) {
	tr, err := readLightGCN(train, trainName)
	if err != nil {
		return nil, err
	}
	te, err := readLightGCN(test, testName)
	if err != nil {
		return nil, err
	}
	users := int(max(tr.maxUser, te.maxUser)) + 1
	items := int(max(tr.maxItem, te.maxItem)) + 1
	for _, f := range []struct {
		kind       string
		space, ids int
		name       string
		line       int
	}{
		{"user", users, len(tr.users) + len(te.users), pickName(tr.maxUser >= te.maxUser, trainName, testName), pickLine(tr.maxUser >= te.maxUser, tr.maxUserLine, te.maxUserLine)},
		{"item", items, len(tr.items) + len(te.items), pickName(tr.maxItem >= te.maxItem, trainName, testName), pickLine(tr.maxItem >= te.maxItem, tr.maxItemLine, te.maxItemLine)},
	} {
		if f.space > 2*f.ids+1<<16 {
			return nil, fmt.Errorf("graph: load lightgcn: %s:%d: %s id %d is far beyond the %d %s ids read; ids must be dense (0..n-1)",
				f.name, f.line, f.kind, f.space-1, f.ids, f.kind)
		}
	}
	d := &Interactions{Users: users, Items: items, Train: tr.csr(users, items), Test: te.csr(users, items)}
	return d, nil
}

func pickName(first bool, a, b string) string {
	if first {
		return a
	}
	return b
}

func pickLine(first bool, a, b int) int {
	if first {
		return a
	}
	return b
}

// readLightGCN reads one file line by line.
func readLightGCN(r io.Reader, name string) (*lightGCNFile, error) {
	f := &lightGCNFile{rowPtr: []int{0}, maxUser: -1, maxItem: -1}
	seen := map[int32]int{} // user → line, to reject a user listed twice
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		start := len(f.items)
		user, err := parseLightGCNLine(sc.Bytes(), &f.items)
		if err != nil {
			return nil, fmt.Errorf("graph: load lightgcn: %s:%d: %w", name, lineNo, err)
		}
		if user < 0 { // blank line
			continue
		}
		if first, dup := seen[user]; dup {
			return nil, fmt.Errorf("graph: load lightgcn: %s:%d: user %d already listed on line %d", name, lineNo, user, first)
		}
		seen[user] = lineNo
		row := f.items[start:]
		slices.Sort(row)
		for k := 1; k < len(row); k++ {
			if row[k] == row[k-1] {
				return nil, fmt.Errorf("graph: load lightgcn: %s:%d: item %d listed twice for user %d", name, lineNo, row[k], user)
			}
		}
		if user > f.maxUser {
			f.maxUser, f.maxUserLine = user, lineNo
		}
		if len(row) > 0 && row[len(row)-1] > f.maxItem {
			f.maxItem, f.maxItemLine = row[len(row)-1], lineNo
		}
		f.users = append(f.users, user)
		f.rowPtr = append(f.rowPtr, len(f.items))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("graph: load lightgcn: %s:%d: %w", name, lineNo+1, err)
	}
	return f, nil
}

// parseLightGCNLine appends the line's items to items and returns its user,
// or -1 for a blank line. On error nothing is appended.
func parseLightGCNLine(line []byte, items *[]int32) (int32, error) {
	user := int32(-1)
	start := len(*items)
	for field := 0; ; field++ {
		for len(line) > 0 && isLightGCNSpace(line[0]) {
			line = line[1:]
		}
		if len(line) == 0 {
			return user, nil
		}
		end := 0
		for end < len(line) && !isLightGCNSpace(line[end]) {
			end++
		}
		id, err := parseLightGCNID(line[:end])
		if err != nil {
			*items = (*items)[:start]
			kind := "item"
			if field == 0 {
				kind = "user"
			}
			return -1, fmt.Errorf("%s %w", kind, err)
		}
		if field == 0 {
			user = id
		} else {
			*items = append(*items, id)
		}
		line = line[end:]
	}
}

func isLightGCNSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

var errLightGCNID = errors.New("is not a non-negative integer below 2^31")

// parseLightGCNID parses a decimal id without sign.
func parseLightGCNID(b []byte) (int32, error) {
	if len(b) == 0 || len(b) > 10 {
		return 0, fmt.Errorf("%q %w", truncate(b), errLightGCNID)
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q %w", truncate(b), errLightGCNID)
		}
		v = v*10 + int64(c-'0')
	}
	if v > math.MaxInt32 {
		return 0, fmt.Errorf("%q %w", truncate(b), errLightGCNID)
	}
	return int32(v), nil
}

// truncate shortens a field quoted in an error message.
func truncate(b []byte) string {
	if len(b) > 24 {
		return string(b[:24]) + "…"
	}
	return string(b)
}

// csr assembles the users×items matrix; rows are already sorted and unique.
func (f *lightGCNFile) csr(users, items int) *CSR {
	rowPtr := make([]int, users+1)
	for k, u := range f.users {
		rowPtr[u+1] = f.rowPtr[k+1] - f.rowPtr[k]
	}
	for u := 0; u < users; u++ {
		rowPtr[u+1] += rowPtr[u]
	}
	col := make([]int32, len(f.items))
	for k, u := range f.users {
		copy(col[rowPtr[u]:], f.items[f.rowPtr[k]:f.rowPtr[k+1]])
	}
	return &CSR{Rows: users, Cols: items, RowPtr: rowPtr, ColIdx: col}
}

// NumTrain and NumTest count the interactions of each split.
func (d *Interactions) NumTrain() int { return d.Train.NNZ() }

// NumTest counts the test interactions.
func (d *Interactions) NumTest() int { return d.Test.NNZ() }

// TrainItems returns user u's training items, sorted; the slice aliases
// the matrix.
func (d *Interactions) TrainItems(u int) []int32 { c, _ := d.Train.Row(u); return c }

// TestItems returns user u's test items, sorted; the slice aliases the
// matrix.
func (d *Interactions) TestItems(u int) []int32 { c, _ := d.Test.Row(u); return c }

// ItemDegrees returns, per item, its number of training interactions (its
// popularity; a user's is Train.Degree(u)).
func (d *Interactions) ItemDegrees() []int {
	deg := make([]int, d.Items)
	for _, i := range d.Train.ColIdx {
		deg[i]++
	}
	return deg
}

// Validate checks that both splits are valid unweighted Users×Items
// matrices.
func (d *Interactions) Validate() error {
	for _, s := range []struct {
		name string
		m    *CSR
	}{{"train", d.Train}, {"test", d.Test}} {
		if s.m == nil {
			return fmt.Errorf("graph: interactions %q: missing %s matrix", d.Name, s.name)
		}
		if s.m.Rows != d.Users || s.m.Cols != d.Items {
			return fmt.Errorf("graph: interactions %q: %s matrix is %dx%d, want %dx%d", d.Name, s.name, s.m.Rows, s.m.Cols, d.Users, d.Items)
		}
		if s.m.Val != nil {
			return fmt.Errorf("graph: interactions %q: %s matrix is weighted, want implicit feedback", d.Name, s.name)
		}
		if err := s.m.Validate(); err != nil {
			return fmt.Errorf("graph: interactions %q: %s: %w", d.Name, s.name, err)
		}
	}
	return nil
}

// WriteLightGCN writes d as dir/train.txt and dir/test.txt, one line per
// user (a user without items gets a line with its id alone, so that Users
// survives a round trip), creating dir if needed.
func (d *Interactions) WriteLightGCN(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("graph: write lightgcn: %w", err)
	}
	for _, s := range []struct {
		name string
		m    *CSR
	}{{lightGCNTrain, d.Train}, {lightGCNTest, d.Test}} {
		if err := writeLightGCNFile(filepath.Join(dir, s.name), s.m); err != nil {
			return fmt.Errorf("graph: write lightgcn: %w", err)
		}
	}
	return nil
}

func writeLightGCNFile(path string, m *CSR) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var sb strings.Builder
	for u := 0; u < m.Rows; u++ {
		sb.Reset()
		sb.WriteString(strconv.Itoa(u))
		cols, _ := m.Row(u)
		for _, c := range cols {
			sb.WriteByte(' ')
			sb.WriteString(strconv.Itoa(int(c)))
		}
		sb.WriteByte('\n')
		if _, err := w.WriteString(sb.String()); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
