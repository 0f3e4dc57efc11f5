package worldgen

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/graph"
)

// TestLearnableNotTrivial checks the design goal for laundering: no single
// column separates it (the best F1 of any one-feature rule stays low), while
// a linear model over a few local graph-structure features (degrees,
// bursts of in- and out-going payments around the row, relays) and the row's
// own columns does markedly better on the temporal test split. A GNN sees
// more than this model, so this is a floor on learnability.
func TestLearnableNotTrivial(t *testing.T) {
	// A tiny world grown to 60k accounts and 900k rows: HI's 1 in 900 rows
	// then gives about 1,000 laundering rows, ~200 in the test days.
	cfg := tinyConfig(t, HI, 21)
	cfg.Accounts, cfg.Transactions = 60_000, 900_000
	w := generate(t, cfg)
	g := w.g

	single := bestSingleFeatureF1(g)
	for name, f1 := range single {
		if f1 > 0.1 {
			t.Errorf("feature %s alone reaches F1 %.3f", name, f1)
		}
	}
	best := 0.0
	for _, f1 := range single {
		best = max(best, f1)
	}
	model := structuralModelF1(g)
	t.Logf("best single-feature F1 %.3f (%v); structural linear model test F1 %.3f", best, single, model)
	// Over seeds 21 and 101-107 the model scored 0.13-0.30 (median 0.25)
	// and the best single feature 0.040-0.051; for comparison, GIN scores
	// 0.287 on the published HI-Small.
	if model < 2*best || model < 0.1 {
		t.Fatalf("structural model F1 %.3f, best single feature %.3f: laundering is not learnable from structure", model, best)
	}
}

// bestSingleFeatureF1 returns, per feature, the best F1 of predicting
// laundering by any set of values of that one (discretised) feature.
func bestSingleFeatureF1(g *amlworld.Graph) map[string]float64 {
	usd := func(e int) float64 { return g.AmountPaid[e] * usdPerUnit[g.PayCurrency[e]] }
	features := map[string]func(e int) int{
		"format":         func(e int) int { return int(g.Format[e]) },
		"pay currency":   func(e int) int { return int(g.PayCurrency[e]) },
		"mixed currency": func(e int) int { return b2i(g.PayCurrency[e] != g.RecvCurrency[e]) },
		"cross bank":     func(e int) int { return b2i(g.CrossBank(e)) },
		"hour":           func(e int) int { return int(g.Time[e] % 86400 / 3600) },
		"usd amount":     func(e int) int { return int(math.Floor(math.Log(usd(e)) * 4)) },
		"raw amount":     func(e int) int { return int(math.Floor(math.Log(g.AmountPaid[e]) * 8)) },
	}
	pos := 0
	for _, l := range g.Label {
		pos += int(l)
	}
	out := map[string]float64{}
	for name, key := range features {
		type cell struct{ neg, pos int }
		cells := map[int]*cell{}
		for e := range g.Label {
			k := key(e)
			if cells[k] == nil {
				cells[k] = &cell{}
			}
			if g.Label[e] == 1 {
				cells[k].pos++
			} else {
				cells[k].neg++
			}
		}
		list := make([]cell, 0, len(cells))
		for _, c := range cells {
			list = append(list, *c)
		}
		// Taking values in order of precision traces the best rules.
		slices.SortFunc(list, func(a, b cell) int {
			return cmp.Compare(float64(b.pos)*float64(a.pos+a.neg), float64(a.pos)*float64(b.pos+b.neg))
		})
		tp, fp := 0, 0
		for _, c := range list {
			tp, fp = tp+c.pos, fp+c.neg
			out[name] = max(out[name], f1(tp, fp, pos-tp))
		}
	}
	return out
}

func f1(tp, fp, fn int) float64 {
	if tp == 0 {
		return 0
	}
	return 2 * float64(tp) / float64(2*tp+fp+fn)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// structuralModelF1 fits a class-balanced logistic regression on the
// training days and returns its test F1 at the threshold that is best on
// the validation days.
func structuralModelF1(g *amlworld.Graph) float64 {
	X := localFeatures(g)
	sp := g.TemporalSplit()
	split := g.EdgeSplits(&sp)
	// Train on every laundering row of the training days and a tenth of the
	// others: the loss is class-balanced, so this changes little but time.
	var train []int
	r := rand.New(rand.NewPCG(5, 6))
	for e, s := range split {
		if s == graph.SplitTrain && (g.Label[e] == 1 || r.IntN(10) == 0) {
			train = append(train, e)
		}
	}
	standardize(X, train)
	wt := fitLogistic(X, g.Label, train)
	score := func(s graph.Split) ([]float64, []uint8) {
		var sc []float64
		var y []uint8
		for e := range X {
			if split[e] == s {
				sc, y = append(sc, dot(wt, X[e])), append(y, g.Label[e])
			}
		}
		return sc, y
	}
	// Sweep the validation scores from the top: each prefix is a threshold.
	vs, vy := score(graph.SplitVal)
	order := make([]int, len(vs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(vs[b], vs[a]) })
	threshold, best := math.Inf(1), -1.0
	tp, fp, pos := 0, 0, countPos(vy)
	for _, i := range order {
		if vy[i] == 1 {
			tp++
		} else {
			fp++
		}
		if f := f1(tp, fp, pos-tp); f > best {
			threshold, best = vs[i], f
		}
	}
	ts, ty := score(graph.SplitTest)
	return f1At(ts, ty, threshold)
}

// standardize scales every feature but the leading constant to zero mean
// and unit variance over the rows in rows.
func standardize(X [][]float64, rows []int) {
	d := len(X[0])
	for k := 1; k < d; k++ {
		var m, v float64
		for _, e := range rows {
			m += X[e][k]
		}
		m /= float64(len(rows))
		for _, e := range rows {
			v += (X[e][k] - m) * (X[e][k] - m)
		}
		sd := math.Sqrt(v / float64(len(rows)))
		if sd == 0 {
			sd = 1
		}
		for e := range X {
			X[e][k] = (X[e][k] - m) / sd
		}
	}
}

// fitLogistic minimises the class-balanced logistic loss (both classes
// weigh half) with full-batch Adam; deterministic.
func fitLogistic(X [][]float64, y []uint8, rows []int) []float64 {
	d := len(X[0])
	w := make([]float64, d)
	m, v, grad := make([]float64, d), make([]float64, d), make([]float64, d)
	pos := 0
	for _, e := range rows {
		pos += int(y[e])
	}
	cw := [2]float64{0.5 / float64(len(rows)-pos), 0.5 / float64(max(pos, 1))}
	const lr, b1, b2 = 0.05, 0.9, 0.999
	for it := 1; it <= 300; it++ {
		clear(grad)
		for _, e := range rows {
			p := 1 / (1 + math.Exp(-dot(w, X[e])))
			c := cw[y[e]] * (p - float64(y[e]))
			for k, x := range X[e] {
				grad[k] += c * x
			}
		}
		for k := range w {
			m[k] = b1*m[k] + (1-b1)*grad[k]
			v[k] = b2*v[k] + (1-b2)*grad[k]*grad[k]
			mh := m[k] / (1 - math.Pow(b1, float64(it)))
			vh := v[k] / (1 - math.Pow(b2, float64(it)))
			w[k] -= lr * mh / (math.Sqrt(vh) + 1e-8)
		}
	}
	return w
}

func f1At(sc []float64, y []uint8, th float64) float64 {
	tp, fp, fn := 0, 0, 0
	for i, s := range sc {
		switch {
		case s >= th && y[i] == 1:
			tp++
		case s >= th:
			fp++
		case y[i] == 1:
			fn++
		}
	}
	return f1(tp, fp, fn)
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func countPos(l []uint8) int {
	n := 0
	for _, x := range l {
		n += int(x)
	}
	return n
}

// localFeatures describes each row by its own columns and by its
// endpoints' activity: degrees, payments out of the sender and into the
// receiver within ±2 h and ±24 h, money received by the sender in the 6 h
// before, and money sent on by the receiver in the 6 h after.
func localFeatures(g *amlworld.Graph) [][]float64 {
	n := g.NumAccounts()
	out := make([][]int32, n)
	in := make([][]int32, n)
	for e := range g.Src {
		out[g.Src[e]] = append(out[g.Src[e]], int32(e))
		in[g.Dst[e]] = append(in[g.Dst[e]], int32(e))
	}
	// Rows are in time order, so each list is too: count by binary search.
	within := func(list []int32, t, lo, hi int64) float64 {
		first := func(x int64) int {
			i, _ := slices.BinarySearchFunc(list, x, func(f int32, x int64) int { return cmp.Compare(g.Time[f], x) })
			return i
		}
		return math.Log1p(float64(first(t+hi+1) - first(t+lo)))
	}
	X := make([][]float64, g.NumEdges())
	for e := range X {
		u, v, t := g.Src[e], g.Dst[e], g.Time[e]
		usd := g.AmountPaid[e] * usdPerUnit[g.PayCurrency[e]]
		x := []float64{1,
			math.Log1p(float64(len(out[u])+len(in[u]))) / 3, math.Log1p(float64(len(out[v])+len(in[v]))) / 3,
			within(out[u], t, -7200, 7200), within(in[v], t, -7200, 7200),
			within(out[u], t, -86400, 86400), within(in[v], t, -86400, 86400),
			within(in[u], t, -6*3600, 0), within(out[v], t, 0, 6*3600),
			math.Log1p(usd) / 5, float64(b2i(usd >= 0.8*reportThreshold && usd < reportThreshold)),
			float64(b2i(g.PayCurrency[e] != g.RecvCurrency[e])), float64(b2i(g.CrossBank(e))), float64(b2i(u == v)),
			math.Sin(float64(t%86400) / 86400 * 2 * math.Pi), math.Cos(float64(t%86400) / 86400 * 2 * math.Pi),
		}
		for f := 0; f < amlworld.NumFormats; f++ {
			x = append(x, float64(b2i(int(g.Format[e]) == f)))
		}
		X[e] = x
	}
	return X
}
