package rec

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"graphfed/graph"
)

// ValFile is a client directory's validation split, beside train.txt and
// test.txt and in their layout (one line per user, `user item item …`,
// local ids). The LightGCN layout has none: it is written only when the
// split has one (a random holdout with a positive validation share).
const ValFile = "val.txt"

// WriteClients writes each client to out/<client id> in the LightGCN layout
// (train.txt, test.txt and, with a validation split, val.txt; local ids),
// creating the directories.
func WriteClients(out string, clients []Client) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("rec: write clients: %w", err)
	}
	for _, c := range clients {
		dir := filepath.Join(out, c.ID)
		if err := c.Data.WriteLightGCN(dir); err != nil {
			return fmt.Errorf("rec: write client %s: %w", c.ID, err)
		}
		path := filepath.Join(dir, ValFile)
		if c.Val == nil {
			// A stale val.txt of an earlier split must not be read as this one's.
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("rec: write client %s: %w", c.ID, err)
			}
			continue
		}
		if err := writeRows(path, c.Val); err != nil {
			return fmt.Errorf("rec: write client %s: %w", c.ID, err)
		}
	}
	return nil
}

// writeRows writes m in the LightGCN layout, every user on a line.
func writeRows(path string, m *graph.CSR) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var b []byte
	for u := range m.Rows {
		b = strconv.AppendInt(b[:0], int64(u), 10)
		cols, _ := m.Row(u)
		for _, c := range cols {
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(c), 10)
		}
		b = append(b, '\n')
		if _, err := w.Write(b); err != nil {
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

// LoadClient reads a client directory WriteClients wrote (or any LightGCN
// directory holding one client's data in local ids).
func LoadClient(dir string) (*graph.Interactions, error) {
	d, err := graph.LoadLightGCN(dir)
	if err != nil {
		return nil, fmt.Errorf("rec: load client: %w", err)
	}
	return d, nil
}

// LoadValidation reads dir's val.txt for a client d (LoadClient's): nil
// when the directory has none. Users and items must be d's.
func LoadValidation(dir string, d *graph.Interactions) (*graph.CSR, error) {
	path := filepath.Join(dir, ValFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rec: load validation: %w", err)
	}
	rows := make([][]int32, d.Users)
	seen := make([]bool, d.Users)
	for n, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		bad := func(what string) error { return fmt.Errorf("rec: load validation: %s:%d: %s", path, n+1, what) }
		u, err := strconv.Atoi(f[0])
		if err != nil || u < 0 || u >= d.Users || seen[u] {
			return nil, bad(fmt.Sprintf("user %q is not a new id below %d", f[0], d.Users))
		}
		seen[u] = true
		for _, s := range f[1:] {
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= d.Items {
				return nil, bad(fmt.Sprintf("item %q is not an id below %d", s, d.Items))
			}
			rows[u] = append(rows[u], int32(i))
		}
		slices.Sort(rows[u])
		if len(slices.Compact(slices.Clone(rows[u]))) != len(rows[u]) {
			return nil, bad("an item listed twice")
		}
	}
	m := &graph.CSR{Rows: d.Users, Cols: d.Items, RowPtr: make([]int, d.Users+1)}
	for u, r := range rows {
		m.ColIdx = append(m.ColIdx, r...)
		m.RowPtr[u+1] = len(m.ColIdx)
	}
	return m, nil
}
