package amlworld

import (
	"fmt"

	"graphfed/graph"
)

// Cutoffs is a world's temporal split as instants, so that a bank holding
// only its own rows applies the world's split (computed from every row's
// day, DaySplit) and not one of its own. First and Last are the
// world's earliest and latest transaction: the job-wide time range of the
// learner's time feature.
type Cutoffs struct {
	Origin   int64 `json:"origin"`    // Unix seconds: midnight UTC starting the world's first day
	TrainEnd int64 `json:"train_end"` // Unix seconds: the first validation instant
	ValEnd   int64 `json:"val_end"`   // Unix seconds: the first test instant
	First    int64 `json:"first"`     // Unix seconds: the world's earliest transaction
	Last     int64 `json:"last"`      // Unix seconds: the world's latest transaction
}

// CutoffsOf computes w's Multi-GNN day split (Graph.TemporalSplit) as
// instants. An empty world has zero cut-offs.
func CutoffsOf(w *Graph) Cutoffs {
	if w.NumEdges() == 0 {
		return Cutoffs{}
	}
	ds := w.TemporalSplit()
	c := ds.cutoffs()
	c.First, c.Last = w.Time[0], w.Time[0]
	for _, t := range w.Time {
		c.First, c.Last = min(c.First, t), max(c.Last, t)
	}
	return c
}

// Of is the split of a transaction at Unix time t, the one definition of
// the temporal split: days [0, i) of DaySplit train, [i, j) validation,
// the rest test. Day k of the world covers [Origin + 86400k, Origin +
// 86400(k+1)), so t falls before day i exactly when t < Origin + 86400i
// (TestCutoffsOfDays checks it against the day index).
func (c Cutoffs) Of(t int64) graph.Split {
	switch {
	case t < c.TrainEnd:
		return graph.SplitTrain
	case t < c.ValEnd:
		return graph.SplitVal
	}
	return graph.SplitTest
}

// Validate checks the cut-offs are whole days after the origin, in order,
// and the time range is not reversed.
func (c Cutoffs) Validate() error {
	if c.TrainEnd < c.Origin || c.ValEnd < c.TrainEnd {
		return fmt.Errorf("aml: cut-offs: origin %d, train end %d, validation end %d out of order", c.Origin, c.TrainEnd, c.ValEnd)
	}
	if (c.TrainEnd-c.Origin)%86400 != 0 || (c.ValEnd-c.Origin)%86400 != 0 {
		return fmt.Errorf("aml: cut-offs: train end %d or validation end %d not whole days after origin %d", c.TrainEnd, c.ValEnd, c.Origin)
	}
	if c.Last < c.First {
		return fmt.Errorf("aml: cut-offs: time range [%d, %d] reversed", c.First, c.Last)
	}
	return nil
}
