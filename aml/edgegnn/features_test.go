package edgegnn

import (
	"math"
	"testing"

	"graphfed/aml/amlworld"
	"graphfed/gnn"
)

// featureGraph is three transactions among three accounts at two banks.
func featureGraph() *amlworld.Graph {
	g := amlworld.NewGraph("features")
	const day = 86400
	thursday := int64(0) // 1970-01-01 was a Thursday: day of week 0 here
	rows := []amlworld.TxRow{
		{Time: thursday + 6*3600, FromBank: "010", FromAccount: "A", ToBank: "010", ToAccount: "A",
			AmountPaid: math.E - 1, PayCurrency: amlworld.Euro, AmountReceived: math.E - 1, RecvCurrency: amlworld.Euro,
			Format: amlworld.FormatCash},
		{Time: thursday + 3*day + 18*3600, FromBank: "010", FromAccount: "A", ToBank: "20", ToAccount: "B",
			AmountPaid: 100, PayCurrency: amlworld.USDollar, AmountReceived: 90, RecvCurrency: amlworld.Yen,
			Format: amlworld.FormatWire, Laundering: true},
		{Time: thursday + 4*day, FromBank: "20", FromAccount: "B", ToBank: "010", ToAccount: "C",
			AmountPaid: 0, PayCurrency: amlworld.Bitcoin, AmountReceived: 0, RecvCurrency: amlworld.Bitcoin,
			Format: amlworld.FormatBitcoin},
	}
	for i := range rows {
		g.AddRow(&rows[i])
	}
	return g
}

func TestEdgeFeatures(t *testing.T) {
	g := featureGraph()
	x := EdgeFeatures(g, nil)
	if x.Rows != 3 || x.Cols != EdgeFeatureDim || EdgeFeatureDim != 47 {
		t.Fatalf("features %v, dim %d", x, EdgeFeatureDim)
	}
	span := float64(g.Time[2] - g.Time[0])
	tau := 2 * math.Pi
	for _, c := range []struct {
		name   string
		e, col int
		want   float64
	}{
		{"log paid", 0, EdgeColLogPaid, 0.1},
		{"log received", 1, EdgeColLogRecv, math.Log1p(90) / 10},
		{"pay currency", 0, EdgeColPayCurrency + int(amlworld.Euro), 1},
		{"pay currency off", 0, EdgeColPayCurrency, 0},
		{"receiving currency", 1, EdgeColRecvCurrency + int(amlworld.Yen), 1},
		{"format", 1, EdgeColFormat + int(amlworld.FormatWire), 1},
		{"hour sin", 0, EdgeColHourSin, 1},
		{"hour cos", 1, EdgeColHourCos, math.Cos(tau * 0.75)},
		{"week sin", 1, EdgeColWeekSin, math.Sin(tau * 3 / 7)},
		{"week cos", 0, EdgeColWeekCos, 1},
		{"same currency", 0, EdgeColSameCurr, 1},
		{"mixed currency", 1, EdgeColSameCurr, 0},
		{"self", 0, EdgeColSelf, 1},
		{"not self", 1, EdgeColSelf, 0},
		{"cross bank", 1, EdgeColCrossBank, 1},
		{"same bank", 0, EdgeColCrossBank, 0},
		{"time first", 0, EdgeColTime, 0},
		{"time", 1, EdgeColTime, float64(g.Time[1]-g.Time[0]) / span},
		{"time last", 2, EdgeColTime, 1},
	} {
		if got := float64(x.At(c.e, c.col)); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s: edge %d column %d = %v, want %v", c.name, c.e, c.col, got, c.want)
		}
	}
	// Exactly three one-hot ones per row; batch rows equal full rows.
	for e := range 3 {
		ones := 0
		for c := EdgeColPayCurrency; c < EdgeColHourSin; c++ {
			ones += int(x.At(e, c))
		}
		if ones != 3 {
			t.Errorf("edge %d: %d one-hot ones", e, ones)
		}
	}
	part := NewFeaturizer(g).Features([]int32{2, 1})
	for j := range EdgeFeatureDim {
		if part.At(0, j) != x.At(2, j) || part.At(1, j) != x.At(1, j) {
			t.Fatalf("batch features differ at column %d", j)
		}
	}
	f := NewFeaturizer(g)
	f.SetTimeRange(g.Time[0], g.Time[0]+int64(2*span))
	if got := f.Features([]int32{2}).At(0, EdgeColTime); got != 0.5 {
		t.Errorf("time over a doubled range = %v, want 0.5", got)
	}
}

func TestNodeFeatures(t *testing.T) {
	g := featureGraph()
	idx, err := NewGraphIndex(g, []int32{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	days := VisibleDays(g, []int32{0, 1})
	if want := 3.5; days != want {
		t.Fatalf("visible days %v, want %v", days, want)
	}
	if all := VisibleDays(g, nil); all != 4-0.25 {
		t.Fatalf("all days %v", all)
	}
	x := NodeFeatures(idx, days)
	l := func(c float64) float64 { return math.Log1p(c / days) }
	// Account A: self-transfer (in 1, out 1) and A→B (out 1).
	for _, c := range []struct {
		node, col int
		want      float64
	}{
		{0, NodeColOne, 1}, {0, NodeColInDegree, l(1)}, {0, NodeColOutDegree, l(2)},
		{0, NodeColInPartners, l(1)}, {0, NodeColOutPartners, l(2)},
		{1, NodeColInDegree, l(1)}, {1, NodeColOutDegree, 0}, // B→C is not visible
		{2, NodeColOne, 1}, {2, NodeColInDegree, 0},
	} {
		if got := float64(x.At(c.node, c.col)); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("node %d column %d = %v, want %v", c.node, c.col, got, c.want)
		}
	}
}

func TestScoreEdges(t *testing.T) {
	// Rows predict 1, 1, 0, 0, 1 (arg-max) for labels 1, 0, 1, 0, 1.
	logits := gnn.NewFrom(5, 2, []float32{0, 1, -1, 2, 3, 0, 1, 0, 0, 5})
	s := ScoreEdges(logits, []int32{1, 0, 1, 0, 1})
	if s.TP != 2 || s.FP != 1 || s.FN != 1 || s.TN != 1 || s.Count != 5 {
		t.Fatalf("counts %+v", s)
	}
	for name, c := range map[string][2]float64{
		"f1": {s.F1, 2.0 / 3}, "precision": {s.Precision, 2.0 / 3}, "recall": {s.Recall, 2.0 / 3}, "acc": {s.Acc, 0.6},
	} {
		if math.Abs(c[0]-c[1]) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
	if z := ScoreEdges(gnn.New(0, 2), nil); z.F1 != 0 || z.Count != 0 {
		t.Errorf("empty scores %+v", z)
	}
	if none := ScoreEdges(gnn.NewFrom(1, 2, []float32{1, 0}), []int32{1}); none.F1 != 0 || none.FN != 1 {
		t.Errorf("no true positive: %+v", none)
	}
}

func TestEdgeClassWeights(t *testing.T) {
	labels := make([]uint8, 1000)
	labels[3], labels[500] = 1, 1
	for _, c := range []struct {
		name   string
		labels []uint8
		limit  float64
		want   float32
	}{
		{"capped", labels, 10, 10},
		{"uncapped", labels, 0, 499},
		{"below cap", labels, 1000, 499},
		{"no positives", make([]uint8, 5), 7, 7},
		{"no positives uncapped", make([]uint8, 5), 0, 1},
		{"only positives", []uint8{1, 1}, 5, 1},
	} {
		w := ClassWeights(c.labels, c.limit)
		if len(w) != 2 || w[0] != 1 || w[1] != c.want {
			t.Errorf("%s: %v, want [1 %v]", c.name, w, c.want)
		}
	}
}
