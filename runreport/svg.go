package runreport

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Series is one line of a plot; points whose Y is NaN (or not positive
// on a log axis) break the line.
type Series struct {
	Name string
	X, Y []float64
}

// Plot is a line chart drawn as inline SVG: one y axis, one meaning (a
// value that means something else gets a plot of its own), the legend in
// a column right of the data area, never on the curves.
type Plot struct {
	Title, XLabel, YLabel string
	Log                   bool // logarithmic y axis
	Series                []Series
	Width, Height         int // pixels; 0: 720 × 280
}

// rect is an axis-aligned box in SVG pixels.
type rect struct{ X, Y, W, H float64 }

func (r rect) overlaps(o rect) bool {
	return r.X < o.X+o.W && o.X < r.X+r.W && r.Y < o.Y+o.H && o.Y < r.Y+r.H
}

// layout is where a plot's parts go.
type layout struct {
	W, H   float64
	Data   rect // the data area, inside the axes
	Legend rect // the legend column, right of the data area
	Rows   float64
}

const (
	legendWidth = 190
	legendRow   = 18
)

// layout places the data area and, right of it, the legend; the plot
// grows in height when the legend needs more rows than fit.
func (p Plot) layout() layout {
	w, h := float64(p.Width), float64(p.Height)
	if w <= 0 {
		w = 720
	}
	if h <= 0 {
		h = 280
	}
	n := float64(len(p.Series))
	if need := 40 + n*legendRow + 10; need > h {
		h = need
	}
	const left, top, bottom, gap = 70, 30, 44, 16
	data := rect{X: left, Y: top, W: w - left - gap - legendWidth, H: h - top - bottom}
	return layout{W: w, H: h, Data: data, Rows: n,
		Legend: rect{X: data.X + data.W + gap, Y: top, W: legendWidth - 4, H: n * legendRow}}
}

// palette is Okabe–Ito's colour-blind-safe set; dashes tell apart lines
// past its length.
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

var dashes = []string{"", "6 3", "2 3", "8 3 2 3"}

// valid reports whether y can be drawn on the plot's axis.
func (p Plot) valid(x, y float64) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
		return false
	}
	return !p.Log || y > 0
}

// bounds is the data range over every drawable point; ok is false when
// there is none.
func (p Plot) bounds() (x0, x1, y0, y1 float64, ok bool) {
	x0, y0 = math.Inf(1), math.Inf(1)
	x1, y1 = math.Inf(-1), math.Inf(-1)
	for _, s := range p.Series {
		for i := range min(len(s.X), len(s.Y)) {
			if !p.valid(s.X[i], s.Y[i]) {
				continue
			}
			x0, x1 = math.Min(x0, s.X[i]), math.Max(x1, s.X[i])
			y0, y1 = math.Min(y0, s.Y[i]), math.Max(y1, s.Y[i])
			ok = true
		}
	}
	return
}

// SVG draws the plot.
func (p Plot) SVG() template.HTML {
	l := p.layout()
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="%s">`,
		l.W, l.H, l.W, l.H, esc(p.Title))
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="#fff"/>`, l.W, l.H)
	fmt.Fprintf(&b, `<text x="%g" y="18" class="t">%s</text>`, l.Data.X, esc(p.Title))
	d := l.Data
	fmt.Fprintf(&b, `<text x="%g" y="%g" class="a" text-anchor="middle">%s</text>`, d.X+d.W/2, l.H-6, esc(p.XLabel))
	fmt.Fprintf(&b, `<text transform="translate(14 %g) rotate(-90)" class="a" text-anchor="middle">%s</text>`, d.Y+d.H/2, esc(p.YLabel))
	x0, x1, y0, y1, ok := p.bounds()
	if !ok {
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" class="frame"/>`, d.X, d.Y, d.W, d.H)
		fmt.Fprintf(&b, `<text x="%g" y="%g" class="a" text-anchor="middle">no data</text></svg>`, d.X+d.W/2, d.Y+d.H/2)
		return template.HTML(b.String())
	}
	xs := linearAxis(x0, x1, true)
	var ys axis
	if p.Log {
		ys = logAxis(y0, y1)
	} else {
		ys = linearAxis(y0, y1, false)
	}
	px := func(x float64) float64 { return d.X + d.W*(x-xs.lo)/(xs.hi-xs.lo) }
	py := func(y float64) float64 {
		if p.Log {
			return d.Y + d.H*(1-(math.Log10(y)-math.Log10(ys.lo))/(math.Log10(ys.hi)-math.Log10(ys.lo)))
		}
		return d.Y + d.H*(1-(y-ys.lo)/(ys.hi-ys.lo))
	}
	for _, t := range ys.ticks {
		y := py(t)
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" class="grid"/>`, d.X, y, d.X+d.W, y)
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" class="k" text-anchor="end">%s</text>`, d.X-5, y+4, tickLabel(t, p.Log))
	}
	for _, t := range xs.ticks {
		x := px(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" class="grid"/>`, x, d.Y, x, d.Y+d.H)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" class="k" text-anchor="middle">%s</text>`, x, d.Y+d.H+15, tickLabel(t, false))
	}
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" class="frame"/>`, d.X, d.Y, d.W, d.H)
	for i, s := range p.Series {
		color, dash := palette[i%len(palette)], dashes[(i/len(palette))%len(dashes)]
		var seg []string
		flush := func() {
			if len(seg) > 1 {
				fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`, strings.Join(seg, " "), color, dash)
			}
			seg = seg[:0]
		}
		for j := range min(len(s.X), len(s.Y)) {
			if !p.valid(s.X[j], s.Y[j]) {
				flush()
				continue
			}
			x, y := px(s.X[j]), py(s.Y[j])
			seg = append(seg, fmt.Sprintf("%.1f,%.1f", x, y))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`, x, y, color)
		}
		flush()
		ly := l.Legend.Y + float64(i)*legendRow + legendRow/2
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`,
			l.Legend.X, ly, l.Legend.X+22, ly, color, dash)
		fmt.Fprintf(&b, `<text x="%g" y="%g" class="k">%s</text>`, l.Legend.X+28, ly+4, esc(clip(s.Name, 28)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// axis is a range and its tick values.
type axis struct {
	lo, hi float64
	ticks  []float64
}

// linearAxis rounds [lo, hi] out to ticks at 1, 2 or 5 × 10^k; integer
// keeps ticks whole (rounds).
func linearAxis(lo, hi float64, integer bool) axis {
	if hi-lo < 1e-12*math.Max(1, math.Abs(hi)) {
		pad := math.Max(math.Abs(lo)*0.05, 0.5)
		if integer {
			pad = 1
		}
		lo, hi = lo-pad, hi+pad
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if integer && step < 1 {
		step = 1
	}
	a := axis{lo: math.Floor(lo/step) * step, hi: math.Ceil(hi/step) * step}
	if integer { // rounds: the axis spans the rounds run, ticks inside it
		a.lo, a.hi = lo, hi
	}
	for t := math.Ceil(a.lo/step) * step; t <= a.hi+step*1e-9; t += step {
		a.ticks = append(a.ticks, math.Round(t/step)*step)
	}
	return a
}

// logAxis rounds [lo, hi] (both > 0) out to powers of ten, with 2 and 5
// between them when the range spans fewer than three decades.
func logAxis(lo, hi float64) axis {
	e0, e1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if e1 <= e0 {
		e1 = e0 + 1
	}
	a := axis{lo: math.Pow(10, e0), hi: math.Pow(10, e1)}
	for e := e0; e <= e1; e++ {
		a.ticks = append(a.ticks, math.Pow(10, e))
		if e1-e0 < 3 && e < e1 {
			a.ticks = append(a.ticks, 2*math.Pow(10, e), 5*math.Pow(10, e))
		}
	}
	return a
}

func tickLabel(v float64, log bool) string {
	av := math.Abs(v)
	if e := math.Log10(av); log && (av >= 1e5 || av < 1e-3) && math.Abs(e-math.Round(e)) < 1e-9 {
		return "1e" + strconv.Itoa(int(math.Round(e)))
	}
	if av != 0 && (av >= 1e6 || av < 1e-3) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

func esc(s string) string { return html.EscapeString(s) }

// clip shortens a legend name to n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
