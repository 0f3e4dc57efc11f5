package privacy

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// WritePNG plots the report's cumulative ε against rounds, one line per
// channel (its worst client) and per node percentile (the worst node at
// ρ_q), on a logarithmic ε axis, and saves it to path (the format follows
// the extension: .png, .svg, .pdf).
func WritePNG(r Report, path string) error { return WritePNGWith(r, path, PlotOptions{}) }

// PlotOptions tune WritePNGWith.
type PlotOptions struct {
	// Omit leaves these channels out: a channel whose ε (10^11 for a model
	// at σ1 = 1e-3) is no guarantee would squash the node curves on one
	// axis. Note, if set, is added to the title (say what was left out).
	Omit []Channel
	Note string
}

// WritePNGWith is WritePNG with options.
func WritePNGWith(r Report, path string, opt PlotOptions) error {
	const op = "plot"
	p := plot.New()
	p.Title.Text = fmt.Sprintf("privacy spent (%s accountant, δ=%g)", r.Kind, r.Delta)
	if opt.Note != "" {
		p.Title.Text += "\n" + opt.Note
	}
	p.X.Label.Text = "round"
	p.Y.Label.Text = "ε (cumulative)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = false // bottom right: below the steep curves

	type series struct {
		name string
		pts  plotter.XYs
	}
	var all []series
	var channels []Channel
	for ch := range r.ChannelMax {
		if !slices.Contains(opt.Omit, ch) {
			channels = append(channels, ch)
		}
	}
	slices.Sort(channels)
	for _, ch := range channels {
		s := series{name: string(ch) + " (worst client)"}
		for _, rd := range r.Rounds {
			if e, ok := rd.Channels[ch]; ok && e > 0 {
				s.pts = append(s.pts, plotter.XY{X: float64(rd.Round), Y: e})
			}
		}
		all = append(all, s)
	}
	for i, pc := range r.Percentiles {
		s := series{name: fmt.Sprintf("node p%g (ρ=%.3f)", pc.Q, pc.Rho)}
		for _, rd := range r.Rounds {
			if i < len(rd.Nodes) && rd.Nodes[i] > 0 {
				s.pts = append(s.pts, plotter.XY{X: float64(rd.Round), Y: rd.Nodes[i]})
			}
		}
		all = append(all, s)
	}
	drawn := 0
	for i, s := range all {
		if len(s.pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(s.pts)
		if err != nil {
			return wrapErr(op, ErrInvalid, s.name, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.name, l)
		drawn++
	}
	if drawn == 0 {
		// An empty log axis cannot be drawn; show an empty linear plot.
		p.Y.Scale = plot.LinearScale{}
		p.Y.Tick.Marker = plot.DefaultTicks{}
	}
	p.Add(plotter.NewGrid())
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return wrapErr(op, ErrInvalid, path, err)
	}
	return nil
}
