package rec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"graphfed/graph"
)

// GenConfig describes a generated user–item dataset: a base graph shaped
// like real recommendation data (user degrees with a Pareto tail, item
// popularity Zipf-distributed, a share of each user's items held out as
// test interactions) plus, optionally, the structures that give sparse
// real graphs their repeated eigenvalues and separate components
// (Shapes), as spectral's property test generates them.
type GenConfig struct {
	Name         string
	Users, Items int // users and items of the base graph; the shapes add their own
	// UserTail is the Pareto tail index a of user degrees:
	// P(degree ≥ x) = (MinDegree/x)^a. Smaller is heavier.
	UserTail  float64
	MinDegree int // smallest user degree of the base graph (≥ 1)
	// MaxDegree caps a user's degree; 0 means Items/2.
	MaxDegree int
	// ItemZipf is the Zipf exponent s of item popularity: the item of
	// popularity rank r is drawn with weight (r+1)^-s (0: uniform).
	ItemZipf float64
	// TestFraction is the share of each user's items held out as test
	// interactions: ⌊TestFraction·degree⌋, at least one when the user has
	// three or more items, and never all of them.
	TestFraction float64
	Shapes       Shapes
	Seed         uint64
}

// Shapes are the pathological structures Generate can add to the base
// graph, mirroring spectral's property test. Each adds nodes of its own;
// none but DupUsers and Components has test interactions.
type Shapes struct {
	// DupUsers extra users copy a random base user's items, train and
	// test (identical rows: eigenvalue 1 repeated).
	DupUsers int
	// Stars extra users each interact with StarLeaves items of their own
	// (degree-1 items); all but DetachedStars of them also take one base
	// item, tying the star to the rest of the graph.
	Stars, StarLeaves, DetachedStars int
	// HubItems extra items each have HubLeaves users of their own (degree-1
	// users, the property test's stars); all but DetachedHubs also go to
	// one base user.
	HubItems, HubLeaves, DetachedHubs int
	// Pendants identical chains of Chain edges (hub – item – user – item …)
	// hang off one base user.
	Pendants, Chain int
	// Components extra copies of one small Pareto/Zipf graph of
	// ComponentUsers users and ComponentItems items (same tail, exponent
	// and test fraction), each a separate set of components.
	Components, ComponentUsers, ComponentItems int
	// IsolatedUsers have no items; IsolatedItems no users.
	IsolatedUsers, IsolatedItems int
}

// DefaultGenConfig is a dataset of the size of the one issue 17 reported
// (about 1,900 users and 4,500 items), with a heavy user tail and Zipf
// items, 20% of each user's items held out.
func DefaultGenConfig() GenConfig {
	return GenConfig{Name: "rec-gen", Users: 1900, Items: 4500, UserTail: 1.5, MinDegree: 8, ItemZipf: 0.8, TestFraction: 0.2, Seed: 1}
}

// genLimit bounds the node counts a config may ask for.
const genLimit = 1 << 28

// Validate checks that c describes a dataset Generate can build; an error
// names the offending field.
func (c *GenConfig) Validate() error {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("rec: gen config: %s: "+format, append([]any{field}, a...)...)
	}
	s := c.Shapes
	switch {
	case c.Users < 1 || c.Users > genLimit:
		return bad("Users", "%d, want 1..%d", c.Users, genLimit)
	case c.Items < 2 || c.Items > genLimit:
		return bad("Items", "%d, want 2..%d", c.Items, genLimit)
	case !(c.UserTail > 0 && c.UserTail <= 100):
		return bad("UserTail", "%v, want (0, 100]", c.UserTail)
	case c.MinDegree < 1 || c.MinDegree > c.Items/2:
		return bad("MinDegree", "%d, want 1..Items/2 (%d)", c.MinDegree, c.Items/2)
	case c.MaxDegree != 0 && (c.MaxDegree < c.MinDegree || c.MaxDegree > c.Items):
		return bad("MaxDegree", "%d, want 0 or MinDegree..Items (%d..%d)", c.MaxDegree, c.MinDegree, c.Items)
	case !(c.ItemZipf >= 0 && c.ItemZipf <= 10):
		return bad("ItemZipf", "%v, want [0, 10]", c.ItemZipf)
	case !(c.TestFraction >= 0 && c.TestFraction < 1):
		return bad("TestFraction", "%v, want [0, 1)", c.TestFraction)
	case s.DupUsers < 0 || s.DupUsers > genLimit:
		return bad("Shapes.DupUsers", "%d, want 0..%d", s.DupUsers, genLimit)
	case s.Stars < 0 || s.Stars > genLimit:
		return bad("Shapes.Stars", "%d, want 0..%d", s.Stars, genLimit)
	case s.Stars > 0 && (s.StarLeaves < 1 || s.StarLeaves > genLimit):
		return bad("Shapes.StarLeaves", "%d, want 1..%d with Stars", s.StarLeaves, genLimit)
	case s.DetachedStars < 0 || s.DetachedStars > s.Stars:
		return bad("Shapes.DetachedStars", "%d, want 0..Stars (%d)", s.DetachedStars, s.Stars)
	case s.HubItems < 0 || s.HubItems > genLimit:
		return bad("Shapes.HubItems", "%d, want 0..%d", s.HubItems, genLimit)
	case s.HubItems > 0 && (s.HubLeaves < 1 || s.HubLeaves > genLimit):
		return bad("Shapes.HubLeaves", "%d, want 1..%d with HubItems", s.HubLeaves, genLimit)
	case s.DetachedHubs < 0 || s.DetachedHubs > s.HubItems:
		return bad("Shapes.DetachedHubs", "%d, want 0..HubItems (%d)", s.DetachedHubs, s.HubItems)
	case s.Pendants < 0 || s.Pendants > genLimit:
		return bad("Shapes.Pendants", "%d, want 0..%d", s.Pendants, genLimit)
	case s.Pendants > 0 && (s.Chain < 1 || s.Chain > 1<<16):
		return bad("Shapes.Chain", "%d, want 1..%d with Pendants", s.Chain, 1<<16)
	case s.Components < 0 || s.Components > genLimit:
		return bad("Shapes.Components", "%d, want 0..%d", s.Components, genLimit)
	case s.Components > 0 && (s.ComponentUsers < 1 || s.ComponentUsers > genLimit):
		return bad("Shapes.ComponentUsers", "%d, want 1..%d with Components", s.ComponentUsers, genLimit)
	case s.Components > 0 && (s.ComponentItems < 2*c.MinDegree || s.ComponentItems > genLimit):
		return bad("Shapes.ComponentItems", "%d, want 2·MinDegree (%d)..%d with Components", s.ComponentItems, 2*c.MinDegree, genLimit)
	case s.IsolatedUsers < 0 || s.IsolatedUsers > genLimit:
		return bad("Shapes.IsolatedUsers", "%d, want 0..%d", s.IsolatedUsers, genLimit)
	case s.IsolatedItems < 0 || s.IsolatedItems > genLimit:
		return bad("Shapes.IsolatedItems", "%d, want 0..%d", s.IsolatedItems, genLimit)
	}
	if u, i := c.Size(); u > genLimit || i > genLimit {
		return bad("Shapes", "%d users and %d items in all, want at most %d each", u, i, genLimit)
	}
	return nil
}

// Size is the number of users and items of the dataset c generates: the
// base graph's and every shape's.
func (c *GenConfig) Size() (users, items int) {
	s := c.Shapes
	users = c.Users + s.DupUsers + s.Stars + s.HubItems*s.HubLeaves + s.Components*s.ComponentUsers + s.IsolatedUsers
	items = c.Items + s.Stars*s.StarLeaves + s.HubItems + s.Components*s.ComponentItems + s.IsolatedItems
	if s.Pendants > 0 {
		users += s.Pendants * (s.Chain / 2)
		items += s.Pendants * ((s.Chain + 1) / 2)
	}
	return users, items
}

// PCG stream ids of Generate's independent random streams.
const (
	streamBase  = 0x7265632d62617365 // base graph: degrees and items
	streamTest  = 0x7265632d74657374 // base graph's hold-out
	streamShape = 0x7265632d73686170 // shapes
	streamComp  = 0x7265632d636f6d70 // the repeated component
	streamPerm  = 0x7265632d7065726d // the final relabelling
)

// Generate draws the dataset c describes. The output is a pure function of
// c (its Seed included). User and item ids are shuffled at the end, so the
// shapes' nodes are spread over the id range as in real data; the largest
// item id always has an interaction, so that Items survives a round trip
// through the LightGCN layout.
func Generate(c GenConfig) (*graph.Interactions, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	name := c.Name
	if name == "" {
		name = "rec-gen"
	}
	s := c.Shapes
	maxDeg := c.MaxDegree
	if maxDeg == 0 {
		maxDeg = c.Items / 2
	}
	train, test := drawBase(c.Users, c.Items, c.UserTail, c.MinDegree, maxDeg, c.ItemZipf, c.TestFraction,
		rand.New(rand.NewPCG(c.Seed, streamBase)), rand.New(rand.NewPCG(c.Seed, streamTest)))
	items := c.Items
	rng := rand.New(rand.NewPCG(c.Seed, streamShape))
	add := func(tr, te []int32) int {
		train = append(train, tr)
		test = append(test, te)
		return len(train) - 1
	}
	for k := range s.Stars {
		row := make([]int32, 0, s.StarLeaves+1)
		for range s.StarLeaves {
			row = append(row, int32(items))
			items++
		}
		if k >= s.DetachedStars {
			row = addItem(row, int32(rng.IntN(c.Items)))
		}
		add(row, nil)
	}
	for k := range s.HubItems {
		hub := int32(items)
		items++
		for range s.HubLeaves {
			add([]int32{hub}, nil)
		}
		if k >= s.DetachedHubs {
			u := rng.IntN(c.Users)
			train[u] = addItem(train[u], hub)
		}
	}
	if s.Pendants > 0 {
		hub := rng.IntN(c.Users)
		for range s.Pendants {
			// hub – item – user – item – …: the chain's edges alternate sides.
			prev := hub
			for e := range s.Chain {
				if e%2 == 0 {
					train[prev] = addItem(train[prev], int32(items))
					items++
				} else {
					prev = add([]int32{int32(items - 1)}, nil)
				}
			}
		}
	}
	// Duplicates last among the shapes that touch base users, so that a
	// duplicate equals its original's final row.
	for range s.DupUsers {
		u := rng.IntN(c.Users)
		add(slices.Clone(train[u]), slices.Clone(test[u]))
	}
	if s.Components > 0 {
		ctr, cte := drawBase(s.ComponentUsers, s.ComponentItems, c.UserTail, c.MinDegree, s.ComponentItems/2, c.ItemZipf, c.TestFraction,
			rand.New(rand.NewPCG(c.Seed, streamComp)), rand.New(rand.NewPCG(c.Seed, streamComp+1)))
		for range s.Components {
			for u := range ctr {
				add(shift(ctr[u], items), shift(cte[u], items))
			}
			items += s.ComponentItems
		}
	}
	for range s.IsolatedUsers {
		add(nil, nil)
	}
	items += s.IsolatedItems
	if wu, wi := c.Size(); wu != len(train) || wi != items {
		return nil, fmt.Errorf("rec: generate: internal error: built %d×%d, Size says %d×%d", len(train), items, wu, wi)
	}

	// Relabel: users and items by seeded permutations, then make the
	// largest item id a used one.
	prng := rand.New(rand.NewPCG(c.Seed, streamPerm))
	userPerm := prng.Perm(len(train)) // old user -> new user
	itemPerm := prng.Perm(items)      // old item -> new item
	used := make([]bool, items)
	for u := range train {
		for _, row := range [][]int32{train[u], test[u]} {
			for _, i := range row {
				used[i] = true
			}
		}
	}
	if last := slices.Index(itemPerm, items-1); !used[last] {
		// Swap the labels of the old item labelled items-1 and of a used
		// item drawn at random.
		var cand []int
		for i, ok := range used {
			if ok {
				cand = append(cand, i)
			}
		}
		o := cand[prng.IntN(len(cand))]
		itemPerm[last], itemPerm[o] = itemPerm[o], itemPerm[last]
	}
	rows := func(src [][]int32) *graph.CSR {
		byNew := make([][]int32, len(src))
		for u, row := range src {
			r := make([]int32, len(row))
			for k, i := range row {
				r[k] = int32(itemPerm[i])
			}
			slices.Sort(r)
			byNew[userPerm[u]] = r
		}
		m := &graph.CSR{Rows: len(src), Cols: items, RowPtr: make([]int, len(src)+1)}
		for u, r := range byNew {
			m.ColIdx = append(m.ColIdx, r...)
			m.RowPtr[u+1] = len(m.ColIdx)
		}
		return m
	}
	d := &graph.Interactions{Name: name, Users: len(train), Items: items, Train: rows(train), Test: rows(test)}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("rec: generate: %w", err)
	}
	return d, nil
}

// drawBase draws users×items rows: Pareto degrees from min to max, items
// by Zipf weight without repeats, then the hold-out from a second stream.
// Rows are sorted.
func drawBase(users, items int, tail float64, minDeg, maxDeg int, zipf, frac float64, rng, hold *rand.Rand) (train, test [][]int32) {
	cum := make([]float64, items)
	total := 0.0
	for i := range cum {
		total += math.Pow(float64(i+1), -zipf)
		cum[i] = total
	}
	// mark[i] == stamp: item i already drawn for the current user.
	mark := make([]int32, items)
	train = make([][]int32, users)
	test = make([][]int32, users)
	for u := range users {
		stamp := int32(u + 1)
		d := int(float64(minDeg) / math.Pow(1-rng.Float64(), 1/tail))
		if d < minDeg || d > maxDeg { // the cap, and overflow of a huge draw
			d = maxDeg
		}
		row := make([]int32, 0, d)
		for tries := 0; len(row) < d && tries < 8*d; tries++ {
			i, _ := slices.BinarySearch(cum, rng.Float64()*total)
			i = min(i, items-1)
			if mark[i] != stamp {
				mark[i] = stamp
				row = append(row, int32(i))
			}
		}
		if len(row) < d {
			// Rejection stalls when the popular items are taken: finish
			// with weighted sampling without replacement (Efraimidis–
			// Spirakis keys) over the items not drawn yet.
			row = topKeys(row, d, cum, mark, stamp, rng)
		}
		hold.Shuffle(len(row), func(a, b int) { row[a], row[b] = row[b], row[a] })
		nt := int(frac * float64(d))
		if nt == 0 && d >= 3 && frac > 0 {
			nt = 1
		}
		nt = min(nt, d-1)
		te, tr := row[:nt:nt], row[nt:]
		slices.Sort(tr)
		slices.Sort(te)
		if len(te) == 0 {
			te = nil
		}
		train[u], test[u] = tr, te
	}
	return train, test
}

// topKeys completes row to d items: each item not yet drawn gets the key
// log(U)/w (w its weight) and the largest keys win.
func topKeys(row []int32, d int, cum []float64, mark []int32, stamp int32, rng *rand.Rand) []int32 {
	type kv struct {
		key float64
		i   int32
	}
	var cand []kv
	prev := 0.0
	for i, c := range cum {
		w := c - prev
		prev = c
		if mark[i] == stamp {
			continue
		}
		cand = append(cand, kv{math.Log(1-rng.Float64()) / w, int32(i)})
	}
	slices.SortFunc(cand, func(a, b kv) int {
		switch {
		case a.key > b.key:
			return -1
		case a.key < b.key:
			return 1
		}
		return int(a.i - b.i)
	})
	for _, c := range cand[:d-len(row)] {
		mark[c.i] = stamp
		row = append(row, c.i)
	}
	return row
}

// addItem adds item i to a row kept sorted, if absent.
func addItem(row []int32, i int32) []int32 {
	k, found := slices.BinarySearch(row, i)
	if found {
		return row
	}
	return slices.Insert(row, k, i)
}

// shift returns row with off added to every item.
func shift(row []int32, off int) []int32 {
	if row == nil {
		return nil
	}
	out := make([]int32, len(row))
	for k, i := range row {
		out[k] = i + int32(off)
	}
	return out
}

// ShapeNames lists the shapes ParseShapes accepts, with their defaults.
func ShapeNames() []string {
	return []string{"dup=30", "stars=4:200", "detached-stars=1", "hubs=4:200", "detached-hubs=1",
		"pendants=10:5", "components=4:40x80", "isolated-users=50", "isolated-items=200"}
}

// ParseShapes reads a comma-separated list of shapes into sh, e.g.
// "dup=30,stars=4:200,pendants=10:5,components=4:40x80". A shape without a
// value takes its default (ShapeNames); "all" sets every shape to its
// default; "none" or "" sets none. The forms are dup=N, stars=N:LEAVES,
// detached-stars=N, hubs=N:LEAVES, detached-hubs=N, pendants=N:CHAIN,
// components=N:USERSxITEMS, isolated-users=N, isolated-items=N.
func ParseShapes(list string, sh *Shapes) error {
	list = strings.TrimSpace(list)
	if list == "" || list == "none" {
		return nil
	}
	defaults := map[string]string{}
	for _, s := range ShapeNames() {
		k, v, _ := strings.Cut(s, "=")
		defaults[k] = v
	}
	var items []string
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "all" {
			items = append(items, ShapeNames()...)
			continue
		}
		items = append(items, f)
	}
	for _, f := range items {
		name, val, hasVal := strings.Cut(f, "=")
		def, ok := defaults[name]
		if !ok {
			return fmt.Errorf("rec: shapes: unknown shape %q (want %s)", name, strings.Join(ShapeNames(), ", "))
		}
		if !hasVal {
			val = def
		}
		nums, err := shapeInts(val, strings.Count(def, ":")+strings.Count(def, "x")+1)
		if err != nil {
			return fmt.Errorf("rec: shapes: %s=%s: %w (want the form %s=%s)", name, val, err, name, def)
		}
		switch name {
		case "dup":
			sh.DupUsers = nums[0]
		case "stars":
			sh.Stars, sh.StarLeaves = nums[0], nums[1]
		case "detached-stars":
			sh.DetachedStars = nums[0]
		case "hubs":
			sh.HubItems, sh.HubLeaves = nums[0], nums[1]
		case "detached-hubs":
			sh.DetachedHubs = nums[0]
		case "pendants":
			sh.Pendants, sh.Chain = nums[0], nums[1]
		case "components":
			sh.Components, sh.ComponentUsers, sh.ComponentItems = nums[0], nums[1], nums[2]
		case "isolated-users":
			sh.IsolatedUsers = nums[0]
		case "isolated-items":
			sh.IsolatedItems = nums[0]
		}
	}
	return nil
}

// shapeInts parses want non-negative integers separated by ':' or 'x'.
func shapeInts(val string, want int) ([]int, error) {
	fields := strings.FieldsFunc(val, func(r rune) bool { return r == ':' || r == 'x' })
	if len(fields) != want || strings.HasSuffix(val, ":") || strings.HasSuffix(val, "x") {
		return nil, fmt.Errorf("%d numbers, want %d", len(fields), want)
	}
	out := make([]int, want)
	for k, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || n > genLimit {
			return nil, fmt.Errorf("%q is not an integer in 0..%d", f, genLimit)
		}
		out[k] = n
	}
	return out, nil
}
