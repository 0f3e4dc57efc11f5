package dataget

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"graphfed/graph"
)

// maxInteractionID bounds user and item ids of an interaction list, so
// that a corrupt line cannot make the converter allocate for billions.
const maxInteractionID = 1 << 22

// convertPairs builds a recommendation dataset from two tab-separated
// interaction lists, one `user<TAB>item[<TAB>weight]` row per line with
// 1-based ids (LightGCN-PyTorch's LastFM files, which its loader shifts
// to 0-based). The weight (a play count) is dropped: the LightGCN layout
// is implicit feedback. Users and Items are the largest ids of either file.
func convertPairs(name string, train, test []byte, trainName, testName string) (*graph.Interactions, error) {
	tr, err := parsePairs(train)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", trainName, err)
	}
	te, err := parsePairs(test)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", testName, err)
	}
	users, items := 0, 0
	for _, ps := range [][][2]int32{tr, te} {
		for _, p := range ps {
			users, items = max(users, int(p[0])+1), max(items, int(p[1])+1)
		}
	}
	d := &graph.Interactions{Name: name, Users: users, Items: items,
		Train: pairsCSR(tr, users, items), Test: pairsCSR(te, users, items)}
	return d, d.Validate()
}

// parsePairs reads the rows as 0-based (user, item) pairs.
func parsePairs(b []byte) ([][2]int32, error) {
	var out [][2]int32
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("line %d: want user<TAB>item[<TAB>weight], have %d fields", i+1, len(f))
		}
		var p [2]int32
		for k := range 2 {
			v, err := strconv.Atoi(f[k])
			if err != nil || v < 1 || v > maxInteractionID {
				return nil, fmt.Errorf("line %d: id %q is not in [1,%d]", i+1, f[k], maxInteractionID)
			}
			p[k] = int32(v - 1)
		}
		if len(f) == 3 {
			if _, err := strconv.ParseFloat(f[2], 64); err != nil {
				return nil, fmt.Errorf("line %d: weight %q is not a number", i+1, f[2])
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// pairsCSR is the users×items matrix of the pairs, rows sorted, repeats
// collapsed.
func pairsCSR(ps [][2]int32, users, items int) *graph.CSR {
	s := slices.Clone(ps)
	slices.SortFunc(s, func(a, b [2]int32) int {
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		return int(a[1]) - int(b[1])
	})
	s = slices.Compact(s)
	m := &graph.CSR{Rows: users, Cols: items, RowPtr: make([]int, users+1), ColIdx: make([]int32, 0, len(s))}
	for _, p := range s {
		m.ColIdx = append(m.ColIdx, p[1])
		m.RowPtr[p[0]+1]++
	}
	for u := range users {
		m.RowPtr[u+1] += m.RowPtr[u]
	}
	return m
}
