package runreport

import (
	"encoding/xml"
	"math"
	"strconv"
	"strings"
	"testing"
)

// svgShapes parses an SVG into the coordinates of its data marks
// (polyline points and circles) and its legend swatches (lines with a
// stroke colour, outside the grid).
type svgShapes struct {
	marks     [][2]float64
	polylines int
	legend    []float64 // x of every legend swatch and label
	texts     []string
}

func parseSVG(t *testing.T, svg string) svgShapes {
	t.Helper()
	var out svgShapes
	dec := xml.NewDecoder(strings.NewReader(svg))
	inText := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
			}
			f := func(k string) float64 {
				v, err := strconv.ParseFloat(attr[k], 64)
				if err != nil {
					t.Fatalf("%s %s=%q: %v", el.Name.Local, k, attr[k], err)
				}
				return v
			}
			switch el.Name.Local {
			case "polyline":
				out.polylines++
				for _, p := range strings.Fields(attr["points"]) {
					xs, ys, _ := strings.Cut(p, ",")
					x, _ := strconv.ParseFloat(xs, 64)
					y, _ := strconv.ParseFloat(ys, 64)
					out.marks = append(out.marks, [2]float64{x, y})
				}
			case "circle":
				out.marks = append(out.marks, [2]float64{f("cx"), f("cy")})
			case "line":
				if attr["class"] == "" { // a legend swatch: grid lines have a class
					out.legend = append(out.legend, f("x1"))
				}
			case "text":
				inText = true
				if attr["class"] == "k" && !strings.Contains(attr["text-anchor"], "e") {
					// legend labels are left-anchored "k" texts
					out.legend = append(out.legend, f("x"))
				}
			}
		case xml.CharData:
			if inText {
				out.texts = append(out.texts, string(el))
			}
		case xml.EndElement:
			inText = false
		}
	}
	return out
}

// TestPlotLayout: every data mark lies inside the data area, and the
// legend lies wholly right of it, however many series there are.
func TestPlotLayout(t *testing.T) {
	for _, n := range []int{1, 3, 8, 20} {
		var ss []Series
		for i := range n {
			s := Series{Name: "a long series name number " + strconv.Itoa(i)}
			for r := 1; r <= 12; r++ {
				s.X = append(s.X, float64(r))
				s.Y = append(s.Y, float64(i*r)+0.5)
			}
			ss = append(ss, s)
		}
		for _, log := range []bool{false, true} {
			p := Plot{Title: "t", XLabel: "round", YLabel: "y", Log: log, Series: ss}
			l := p.layout()
			if l.Legend.overlaps(l.Data) {
				t.Fatalf("%d series: legend %+v overlaps the data area %+v", n, l.Legend, l.Data)
			}
			if l.Legend.Y+l.Legend.H > l.H || l.Legend.X+l.Legend.W > l.W {
				t.Fatalf("%d series: legend %+v outside the %gx%g plot", n, l.Legend, l.W, l.H)
			}
			sh := parseSVG(t, string(p.SVG()))
			if len(sh.marks) == 0 {
				t.Fatalf("%d series: nothing drawn", n)
			}
			for _, m := range sh.marks {
				if m[0] < l.Data.X-0.5 || m[0] > l.Data.X+l.Data.W+0.5 || m[1] < l.Data.Y-0.5 || m[1] > l.Data.Y+l.Data.H+0.5 {
					t.Fatalf("%d series log=%v: mark %v outside the data area %+v", n, log, m, l.Data)
				}
			}
			if len(sh.legend) < 2*n {
				t.Fatalf("%d series: %d legend items", n, len(sh.legend))
			}
			for _, x := range sh.legend {
				if x < l.Data.X+l.Data.W {
					t.Fatalf("%d series: legend item at x=%g, inside the data area ending at %g", n, x, l.Data.X+l.Data.W)
				}
			}
		}
	}
}

// TestPlotValues: NaN breaks a line, a log axis drops what it cannot
// show and spans the values it can (1e11 included), and a plot without a
// drawable point says so instead of drawing an axis of nothing.
func TestPlotValues(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name      string
		log       bool
		ys        []float64
		marks     int
		polylines int
		texts     []string // must appear among the plot's texts
	}{
		{"plain", false, []float64{0.1, 0.2, 0.3}, 3 + 3, 1, []string{"0.1", "0.3"}},
		{"NaN breaks the line", false, []float64{0.1, 0.2, nan, 0.4, 0.5}, 4 + 4, 2, nil},
		{"lone point between NaNs", false, []float64{nan, 0.2, nan}, 1, 0, nil},
		{"log drops zero and negatives", true, []float64{0, 1, 10, -3, 100}, 2 + 3, 1, []string{"1", "10", "100"}},
		{"log spans 1e11", true, []float64{2e10, 1e11, 2.4e11}, 3 + 3, 1, []string{"1e10", "1e12"}},
		{"constant", false, []float64{5, 5, 5}, 3 + 3, 1, []string{"5"}},
		{"all NaN", false, []float64{nan, nan}, 0, 0, []string{"no data"}},
		{"log all zero", true, []float64{0, 0}, 0, 0, []string{"no data"}},
		{"empty", false, nil, 0, 0, []string{"no data"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Series{Name: "s", Y: c.ys}
			for i := range c.ys {
				s.X = append(s.X, float64(i+1))
			}
			p := Plot{Title: "t", Log: c.log, Series: []Series{s}}
			svg := string(p.SVG())
			if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
				t.Fatalf("NaN or Inf in the SVG: %s", svg)
			}
			sh := parseSVG(t, svg)
			if got := len(sh.marks); got != c.marks {
				t.Errorf("%d marks (points of lines plus dots), want %d", got, c.marks)
			}
			if sh.polylines != c.polylines {
				t.Errorf("%d line segments, want %d", sh.polylines, c.polylines)
			}
			for _, w := range c.texts {
				found := false
				for _, tx := range sh.texts {
					found = found || tx == w
				}
				if !found {
					t.Errorf("no text %q among %q", w, sh.texts)
				}
			}
		})
	}
}

// TestAxes: ticks cover the range they label, and rounds get whole ticks.
func TestAxes(t *testing.T) {
	a := linearAxis(1, 12, true)
	if a.lo != 1 || a.hi != 12 {
		t.Errorf("round axis [%g, %g], want [1, 12]", a.lo, a.hi)
	}
	for _, tk := range a.ticks {
		if tk != math.Trunc(tk) || tk < 1 || tk > 12 {
			t.Errorf("round tick %g", tk)
		}
	}
	l := logAxis(3.4, 8.5)
	if l.lo != 1 || l.hi != 10 || len(l.ticks) < 4 {
		t.Errorf("log axis of [3.4, 8.5]: %+v, want [1, 10] with 2 and 5 between", l)
	}
	l = logAxis(2e10, 2.4e11)
	if l.lo != 1e10 || l.hi != 1e12 {
		t.Errorf("log axis of [2e10, 2.4e11]: %+v", l)
	}
	if got := tickLabel(2e10, true); got != "2e+10" {
		t.Errorf("tick 2e10 labelled %q", got)
	}
	if got := tickLabel(0.6000000000000001, false); got != "0.6" {
		t.Errorf("tick 0.6 labelled %q", got)
	}
}
