package rec

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"graphfed/graph"
)

// genCases are the generator's test configurations: the base graph at
// issue 17's size and small, and one small graph per shape.
func genCases() []struct {
	name string
	cfg  GenConfig
} {
	small := GenConfig{Name: "small", Users: 300, Items: 700, UserTail: 1.3, MinDegree: 3, ItemZipf: 0.9, TestFraction: 0.2, Seed: 4}
	with := func(name string, sh Shapes) struct {
		name string
		cfg  GenConfig
	} {
		c := small
		c.Name, c.Shapes = name, sh
		return struct {
			name string
			cfg  GenConfig
		}{name, c}
	}
	return []struct {
		name string
		cfg  GenConfig
	}{
		{"default", DefaultGenConfig()},
		{"small", small},
		{"uniform items, no test", GenConfig{Users: 50, Items: 40, UserTail: 3, MinDegree: 2, MaxDegree: 40, Seed: 2}},
		with("dup", Shapes{DupUsers: 30}),
		with("stars", Shapes{Stars: 4, StarLeaves: 120, DetachedStars: 1}),
		with("hubs", Shapes{HubItems: 3, HubLeaves: 80, DetachedHubs: 2}),
		with("pendants", Shapes{Pendants: 12, Chain: 5}),
		with("components", Shapes{Components: 4, ComponentUsers: 30, ComponentItems: 60}),
		with("isolated", Shapes{IsolatedUsers: 40, IsolatedItems: 90}),
		with("all", Shapes{DupUsers: 10, Stars: 2, StarLeaves: 50, DetachedStars: 1, HubItems: 2, HubLeaves: 40, DetachedHubs: 1,
			Pendants: 5, Chain: 4, Components: 3, ComponentUsers: 20, ComponentItems: 40, IsolatedUsers: 10, IsolatedItems: 10}),
	}
}

func TestGenerate(t *testing.T) {
	for _, tc := range genCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			d, err := Generate(c)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			wu, wi := c.Size()
			if d.Users != wu || d.Items != wi {
				t.Fatalf("%d users × %d items, Size says %d × %d", d.Users, d.Items, wu, wi)
			}
			// Deterministic; another seed gives another dataset.
			again, _ := Generate(c)
			if !reflect.DeepEqual(d, again) {
				t.Fatal("two runs of one config differ")
			}
			c2 := c
			c2.Seed++
			if other, _ := Generate(c2); reflect.DeepEqual(d.Train, other.Train) {
				t.Fatal("seeds differ, datasets equal")
			}
			// No test item is a training item of its user; the hold-out
			// leaves every user with a training item.
			for u := range d.Users {
				tr, te := d.TrainItems(u), d.TestItems(u)
				for _, i := range te {
					if _, in := slices.BinarySearch(tr, i); in {
						t.Fatalf("user %d: test item %d is also in train", u, i)
					}
				}
				if len(te) > 0 && len(tr) == 0 {
					t.Fatalf("user %d: %d test items, no training item", u, len(te))
				}
			}
			if c.TestFraction > 0 && d.NumTest() == 0 || c.TestFraction == 0 && d.NumTest() != 0 {
				t.Fatalf("test fraction %v, %d test interactions", c.TestFraction, d.NumTest())
			}
			// The base graph's user degrees are heavy-tailed.
			deg := make([]int, 0, d.Users)
			for u := range d.Users {
				if n := d.Train.Degree(u) + d.Test.Degree(u); n > 0 {
					deg = append(deg, n)
				}
			}
			slices.Sort(deg)
			med, top := deg[len(deg)/2], deg[len(deg)-1]
			if c.UserTail < 2 && top < 10*med {
				t.Errorf("degrees: max %d, median %d: tail not heavy", top, med)
			}
			checkShapes(t, c, d)
			// Round trip through the LightGCN layout.
			dir := t.TempDir()
			if err := d.WriteLightGCN(dir); err != nil {
				t.Fatal(err)
			}
			back, err := graph.LoadLightGCN(dir)
			if err != nil {
				t.Fatal(err)
			}
			back.Name = d.Name
			if !reflect.DeepEqual(normalize(d), normalize(back)) {
				t.Fatalf("round trip: %d×%d (%d, %d) back as %d×%d (%d, %d)", d.Users, d.Items, d.NumTrain(), d.NumTest(),
					back.Users, back.Items, back.NumTrain(), back.NumTest())
			}
			t.Logf("%d users, %d items, %d train, %d test; user degree median %d, max %d; %d train components",
				d.Users, d.Items, d.NumTrain(), d.NumTest(), med, top, len(trainComponents(d)))
		})
	}
}

// normalize makes empty column slices comparable whatever their capacity.
func normalize(d *graph.Interactions) *graph.Interactions {
	c := *d
	for _, m := range []**graph.CSR{&c.Train, &c.Test} {
		x := **m
		if len(x.ColIdx) == 0 {
			x.ColIdx = nil
		}
		*m = &x
	}
	return &c
}

// checkShapes checks that each shape of c left its mark on d.
func checkShapes(t *testing.T, c GenConfig, d *graph.Interactions) {
	t.Helper()
	s := c.Shapes
	itemDeg := d.ItemDegrees()
	testDeg := make([]int, d.Items)
	for _, i := range d.Test.ColIdx {
		testDeg[i]++
	}
	count := func(pred func(u int) bool) int {
		n := 0
		for u := range d.Users {
			if pred(u) {
				n++
			}
		}
		return n
	}
	if s.DupUsers > 0 {
		seen := map[string]bool{}
		dups := count(func(u int) bool {
			k := fmt.Sprint(d.TrainItems(u))
			dup := seen[k] && d.Train.Degree(u) > 0
			seen[k] = true
			return dup
		})
		if dups < s.DupUsers {
			t.Errorf("%d duplicated users, want at least %d", dups, s.DupUsers)
		}
	}
	if s.Stars > 0 {
		stars := count(func(u int) bool {
			own := 0
			for _, i := range d.TrainItems(u) {
				if itemDeg[i] == 1 && testDeg[i] == 0 {
					own++
				}
			}
			return own >= s.StarLeaves
		})
		if stars < s.Stars {
			t.Errorf("%d star users, want at least %d", stars, s.Stars)
		}
	}
	if s.HubItems > 0 {
		leaves := make([]int, d.Items)
		for u := range d.Users {
			if tr := d.TrainItems(u); len(tr) == 1 && d.Test.Degree(u) == 0 {
				leaves[tr[0]]++
			}
		}
		hubs := 0
		for _, n := range leaves {
			if n >= s.HubLeaves {
				hubs++
			}
		}
		if hubs < s.HubItems {
			t.Errorf("%d hub items, want at least %d", hubs, s.HubItems)
		}
	}
	if s.Pendants > 0 {
		// Every chain ends in a node of degree 1; the hub user carries
		// Pendants chain starts.
		hub := 0
		for u := range d.Users {
			hub = max(hub, d.Train.Degree(u))
		}
		if hub < s.Pendants {
			t.Errorf("largest user degree %d < %d pendants", hub, s.Pendants)
		}
	}
	if s.Components > 0 || s.DetachedStars > 0 || s.DetachedHubs > 0 {
		sizes := trainComponents(d)
		if want := 1 + s.Components + s.DetachedStars + s.DetachedHubs; len(sizes) < want {
			t.Errorf("%d train components, want at least %d", len(sizes), want)
		}
	}
	if s.IsolatedUsers > 0 {
		if n := count(func(u int) bool { return d.Train.Degree(u)+d.Test.Degree(u) == 0 }); n < s.IsolatedUsers {
			t.Errorf("%d users without items, want at least %d", n, s.IsolatedUsers)
		}
	}
	if s.IsolatedItems > 0 {
		n := 0
		for i := range d.Items {
			if itemDeg[i]+testDeg[i] == 0 {
				n++
			}
		}
		if n < s.IsolatedItems {
			t.Errorf("%d items without users, want at least %d", n, s.IsolatedItems)
		}
	}
}

// trainComponents returns the node counts of the training graph's
// connected components with at least one edge.
func trainComponents(d *graph.Interactions) []int {
	// Union–find over users 0..U-1 and items U..U+I-1.
	parent := make([]int, d.Users+d.Items)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for u := range d.Users {
		for _, i := range d.TrainItems(u) {
			a, b := find(u), find(d.Users+int(i))
			if a != b {
				parent[a] = b
			}
		}
	}
	size := map[int]int{}
	itemDeg := d.ItemDegrees()
	for x := range parent {
		if x < d.Users && d.Train.Degree(x) == 0 || x >= d.Users && itemDeg[x-d.Users] == 0 {
			continue
		}
		size[find(x)]++
	}
	var out []int
	for _, n := range size {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func TestGenerateRepeatedComponents(t *testing.T) {
	c := GenConfig{Users: 100, Items: 200, UserTail: 1.5, MinDegree: 3, ItemZipf: 0.8, TestFraction: 0.2, Seed: 7,
		Shapes: Shapes{Components: 5, ComponentUsers: 12, ComponentItems: 30}}
	d, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	// Each of the copies contributes the same multiset of component sizes.
	count := map[int]int{}
	for _, n := range trainComponents(d) {
		count[n]++
	}
	repeated := 0
	for _, k := range count {
		if k >= c.Shapes.Components {
			repeated += k
		}
	}
	if repeated < c.Shapes.Components {
		t.Fatalf("component sizes %v: no size repeated %d times", count, c.Shapes.Components)
	}
}

func TestGenConfigValidate(t *testing.T) {
	cases := []struct {
		field string
		edit  func(*GenConfig)
	}{
		{"Users", func(c *GenConfig) { c.Users = 0 }},
		{"Items", func(c *GenConfig) { c.Items = 1 }},
		{"UserTail", func(c *GenConfig) { c.UserTail = 0 }},
		{"MinDegree", func(c *GenConfig) { c.MinDegree = 0 }},
		{"MinDegree", func(c *GenConfig) { c.MinDegree = c.Items }},
		{"MaxDegree", func(c *GenConfig) { c.MaxDegree = c.MinDegree - 1 }},
		{"ItemZipf", func(c *GenConfig) { c.ItemZipf = -1 }},
		{"TestFraction", func(c *GenConfig) { c.TestFraction = 1 }},
		{"Shapes.DupUsers", func(c *GenConfig) { c.Shapes.DupUsers = -1 }},
		{"Shapes.StarLeaves", func(c *GenConfig) { c.Shapes.Stars = 2 }},
		{"Shapes.DetachedStars", func(c *GenConfig) { c.Shapes.DetachedStars = 1 }},
		{"Shapes.HubLeaves", func(c *GenConfig) { c.Shapes.HubItems = 1 }},
		{"Shapes.DetachedHubs", func(c *GenConfig) { c.Shapes.DetachedHubs = 1 }},
		{"Shapes.Chain", func(c *GenConfig) { c.Shapes.Pendants = 3 }},
		{"Shapes.ComponentUsers", func(c *GenConfig) { c.Shapes.Components = 2; c.Shapes.ComponentItems = 50 }},
		{"Shapes.ComponentItems", func(c *GenConfig) { c.Shapes.Components = 2; c.Shapes.ComponentUsers = 5 }},
		{"Shapes.IsolatedUsers", func(c *GenConfig) { c.Shapes.IsolatedUsers = -2 }},
		{"Shapes.IsolatedItems", func(c *GenConfig) { c.Shapes.IsolatedItems = -2 }},
		{"Shapes", func(c *GenConfig) { c.Shapes.IsolatedItems = genLimit }},
	}
	for _, tc := range cases {
		c := DefaultGenConfig()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%s: error %v", tc.field, err)
		}
		if _, gerr := Generate(c); gerr == nil {
			t.Errorf("%s: Generate accepted an invalid config", tc.field)
		}
	}
	def := DefaultGenConfig()
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestParseShapes(t *testing.T) {
	var sh Shapes
	if err := ParseShapes("dup=3, stars=2:10,detached-stars,pendants,components=2:5x12,isolated-items=7", &sh); err != nil {
		t.Fatal(err)
	}
	want := Shapes{DupUsers: 3, Stars: 2, StarLeaves: 10, DetachedStars: 1, Pendants: 10, Chain: 5,
		Components: 2, ComponentUsers: 5, ComponentItems: 12, IsolatedItems: 7}
	if sh != want {
		t.Fatalf("got %+v, want %+v", sh, want)
	}
	var all Shapes
	if err := ParseShapes("all", &all); err != nil {
		t.Fatal(err)
	}
	c := DefaultGenConfig()
	c.Shapes = all
	if err := c.Validate(); err != nil || all.HubItems == 0 || all.IsolatedUsers == 0 {
		t.Fatalf("all: %+v: %v", all, err)
	}
	for _, bad := range []string{"bogus", "stars=3", "dup=x", "components=1:2", "dup=-1", "pendants=1:"} {
		var s Shapes
		if err := ParseShapes(bad, &s); err == nil {
			t.Errorf("%q accepted: %+v", bad, s)
		}
	}
}
