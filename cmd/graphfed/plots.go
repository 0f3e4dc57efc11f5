package main

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// series is one line of a plot.
type series struct {
	name string
	xs   []float64
	ys   []float64
}

// writeLinePlot draws series against rounds into a PNG.
func writeLinePlot(path, title, ylabel string, ss []series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "round"
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	palette := []color.RGBA{{0xd6, 0x27, 0x28, 0xff}, {0x1f, 0x77, 0xb4, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xff, 0x7f, 0x0e, 0xff}}
	for i, s := range ss {
		pts := make(plotter.XYs, len(s.xs))
		for j := range s.xs {
			pts[j].X, pts[j].Y = s.xs[j], s.ys[j]
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Legend.Top = true
	if err := p.Save(8*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// pooledF1 is the minority-class F1 over the union of the clients' scored
// transactions, from their true-positive, false-positive and false-negative
// counts (prefix "test_" or "val_"): every transaction is scored once, by
// its sending bank.
func pooledF1(scores map[string]map[string]float64, prefix string) (f1, precision, recall float64) {
	var tp, fp, fn float64
	for _, sc := range scores {
		tp += sc[prefix+"tp"]
		fp += sc[prefix+"fp"]
		fn += sc[prefix+"fn"]
	}
	if tp == 0 {
		return 0, 0, 0
	}
	precision, recall = tp/(tp+fp), tp/(tp+fn)
	return 2 * tp / (2*tp + fp + fn), precision, recall
}
