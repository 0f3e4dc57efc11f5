package runreport

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"graphfed/privacy"
)

// The PNG plots of a run directory (f1.png, epsilon.png) follow the
// report's rules: the legend in a column right of the plot, never on the
// curves, and one meaning per axis.

const (
	pngWidth   = 9 * vg.Inch
	pngPanel   = 3.6 * vg.Inch
	pngLegendW = 2.4 * vg.Inch
)

// pngPanel is one plot of a PNG, its legend beside it.
type pngPlot struct {
	p      *plot.Plot
	legend plot.Legend
}

// newPNGPlot draws series into a plot with its legend kept apart.
func newPNGPlot(title, ylabel string, log bool, ss []Series) (pngPlot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "round"
	p.Y.Label.Text = ylabel
	if log {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicker{}
	}
	p.Add(plotter.NewGrid())
	lg := plot.NewLegend()
	lg.Top, lg.Left = true, true
	drawn := 0
	for i, s := range ss {
		var pts plotter.XYs
		for j := range min(len(s.X), len(s.Y)) {
			if (Plot{Log: log}).valid(s.X[j], s.Y[j]) {
				pts = append(pts, plotter.XY{X: s.X[j], Y: s.Y[j]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return pngPlot{}, fmt.Errorf("plot %s: %w", title, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		lg.Add(s.Name, l)
		drawn++
	}
	if drawn == 0 && log {
		// An empty log axis cannot be drawn; show an empty linear plot.
		p.Y.Scale = plot.LinearScale{}
		p.Y.Tick.Marker = plot.DefaultTicks{}
	}
	return pngPlot{p: p, legend: lg}, nil
}

// savePNG stacks the plots, each with its legend in a column on its
// right, and writes them to path.
func savePNG(path string, plots []pngPlot) error {
	h := pngPanel * vg.Length(len(plots))
	img := vgimg.NewWith(vgimg.UseWH(pngWidth, h), vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	for i, pp := range plots {
		top := pngPanel * vg.Length(i)
		row := draw.Crop(dc, 0, 0, h-top-pngPanel, -top)
		pp.p.Draw(draw.Crop(row, 0, -pngLegendW, 0, 0))
		pp.legend.Draw(draw.Crop(row, pngWidth-pngLegendW+vg.Points(8), 0, 0, -vg.Points(24)))
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("runreport: plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("runreport: plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("runreport: plot: %w", err)
	}
	return nil
}

// WriteLinePNG draws series against rounds into a PNG, legend on the
// right.
func WriteLinePNG(path, title, ylabel string, ss []Series) error {
	pp, err := newPNGPlot(title, ylabel, false, ss)
	if err != nil {
		return err
	}
	return savePNG(path, []pngPlot{pp})
}

// WriteEpsilonPNG plots the audit's cumulative ε against rounds, one
// panel per meaning (epsilonPanels) on a log axis, except channels
// without a guarantee: their ε (10^11 for the model at σ1 = 1e-3) is
// left out, and the plot says so. Without claims (an audit of a ledger
// alone) every client channel counts as one meaning.
func WriteEpsilonPNG(rep privacy.Report, claims []Claim, target float64, path string) error {
	var plots []pngPlot
	for _, pn := range epsilonPanels(rep, claims, target) {
		if pn.NoGuarantee {
			continue
		}
		title := fmt.Sprintf("%s\n%s accountant, δ=%g", pn.Title, rep.Kind, rep.Delta)
		pp, err := newPNGPlot(title, pn.YLabel, true, pn.Series)
		if err != nil {
			return err
		}
		plots = append(plots, pp)
	}
	if note := noGuaranteeNote(claims); note != "" {
		if len(plots) == 0 {
			pp, err := newPNGPlot("", "ε", true, nil)
			if err != nil {
				return err
			}
			plots = append(plots, pp)
		}
		last := plots[len(plots)-1].p
		last.Title.Text += "\n" + note + " (see the audit)"
	}
	if len(plots) == 0 {
		pp, err := newPNGPlot(fmt.Sprintf("privacy spent (%s accountant, δ=%g): no releases", rep.Kind, rep.Delta), "ε", false, nil)
		if err != nil {
			return err
		}
		plots = append(plots, pp)
	}
	return savePNG(path, plots)
}

// logTicker labels a log axis as the SVG plots do: powers of ten, with 2
// and 5 between them over a short range (gonum's LogTicks labels powers
// of ten only, which leaves one label on a range of one decade).
type logTicker struct{}

// Ticks implements plot.Ticker.
func (logTicker) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi >= lo) {
		return nil
	}
	var out []plot.Tick
	for _, v := range logAxis(lo, hi).ticks {
		if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
			out = append(out, plot.Tick{Value: v, Label: tickLabel(v, true)})
		}
	}
	return out
}
