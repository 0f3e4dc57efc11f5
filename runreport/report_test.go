package runreport

import (
	"bytes"
	"context"
	"flag"
	"html"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"graphfed/privacy"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var (
	svgRe   = regexp.MustCompile(`(?s)<svg[^>]*aria-label="([^"]*)".*?</svg>`)
	styleRe = regexp.MustCompile(`(?s)<style>.*?</style>`)
	tagRe   = regexp.MustCompile(`<[^>]*>`)
	wsRe    = regexp.MustCompile(`[ \t]+`)
)

// textOf is a page's text as a reader sees it: tags dropped, each plot
// replaced by its title, blank lines removed.
func textOf(page string) string {
	page = svgRe.ReplaceAllString(page, "\n[plot: $1]\n")
	page = styleRe.ReplaceAllString(page, "")
	page = strings.NewReplacer("</tr>", "\n", "</li>", "\n", "</summary>", "\n", "</td>", " | ", "</th>", " | ", "<br>", "\n").Replace(page)
	page = html.UnescapeString(tagRe.ReplaceAllString(page, ""))
	var out []string
	for _, l := range strings.Split(page, "\n") {
		if l = strings.TrimSpace(wsRe.ReplaceAllString(l, " ")); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the page's text (go test -update rewrites it); got:\n%s", name, got)
	}
}

// TestReportGolden: the report of a real run directory (a tiny AML run,
// testdata/aml-run) states what ran, the quality, the closes, the
// traffic, the efficiency and the audit, in words that stay put.
func TestReportGolden(t *testing.T) {
	run, err := Load(context.Background(), filepath.Join("testdata", "aml-run"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, run); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	golden(t, "report.golden.txt", textOf(page))
	// Self-contained: no script, no address to fetch, a CSP that forbids
	// any fetch beyond data: images.
	for _, bad := range []string{"<script", "src=", "href=", "@import", "url(", "@font-face"} {
		if strings.Contains(page, bad) {
			t.Errorf("report holds %q", bad)
		}
	}
	if !strings.Contains(page, `content="default-src 'none'; img-src data:; style-src 'unsafe-inline'"`) {
		t.Error("report has no Content-Security-Policy")
	}
	if n := strings.Count(page, "<svg"); n < 6 {
		t.Errorf("%d plots, want quality, per client, duration, bytes and two ε panels", n)
	}
}

func TestAuditPageGolden(t *testing.T) {
	rep, err := AuditFile(context.Background(), filepath.Join("testdata", "aml-run", LedgerFile), ClaimParams{Accountant: "exact", Delta: 1e-4, NodeTarget: 8})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteAudit(&b, AuditPage{Source: "ledger.jsonl", Audit: rep, Claims: Claims(rep, ClaimParams{Accountant: "exact", Delta: 1e-4, NodeTarget: 8}), Target: 8}); err != nil {
		t.Fatal(err)
	}
	golden(t, "audit.golden.txt", textOf(b.String()))
}

// TestClaims: a channel whose ε bounds nothing is said to carry no
// meaningful guarantee, in words, and never on the axis of a guarantee.
func TestClaims(t *testing.T) {
	rep, err := AuditFile(context.Background(), filepath.Join("testdata", "aml-run", LedgerFile), ClaimParams{Accountant: "exact", Delta: 1e-4})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		p        ClaimParams
		embDP    bool
		embText  string
		panels   []string
		modelHas string
	}{
		{"target 8", ClaimParams{Delta: 1e-4, NodeTarget: 8, ModelSigma: 1e-3}, true, "emb: DP, ε ≤ 8 per node", []string{"embeddings", "WITHOUT"}, "at σ1 = 0.001"},
		{"target 1 missed", ClaimParams{Delta: 1e-4, NodeTarget: 1}, false, "MISSED", []string{"embeddings", "WITHOUT"}, "no DP guarantee (ε"},
		{"no target", ClaimParams{Delta: 1e-4}, true, "no target", []string{"embeddings", "WITHOUT"}, "no DP guarantee"},
		{"huge budget", ClaimParams{Delta: 1e-4, ClientBudget: 1e12}, true, "no target", []string{"embeddings", "with a DP"}, "model: DP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs := Claims(rep, c.p)
			if len(cs) != 2 || cs[0].Channel != privacy.ChannelEmb || cs[1].Channel != privacy.ChannelModel {
				t.Fatalf("claims %+v", cs)
			}
			if cs[0].DP != c.embDP || !strings.Contains(cs[0].Text, c.embText) || !strings.Contains(cs[1].Text, c.modelHas) {
				t.Fatalf("claims %q %q", cs[0].Text, cs[1].Text)
			}
			words := string(plainWords(cs[1], 1e-4))
			if !cs[1].DP && !strings.Contains(words, "no meaningful guarantee") {
				t.Errorf("model at ε %.3g: %s", cs[1].Epsilon, words)
			}
			ps := epsilonPanels(rep, cs, c.p.NodeTarget)
			if len(ps) != len(c.panels) {
				t.Fatalf("%d panels, want %v", len(ps), c.panels)
			}
			for i, p := range ps {
				if !strings.Contains(p.Title, c.panels[i]) {
					t.Errorf("panel %d is %q, want %q", i, p.Title, c.panels[i])
				}
			}
		})
	}
}

// TestPNGs: the PNG plots decode, are as wide as planned, and keep the
// legend column (the right-hand strip) apart: it holds ink (the legend)
// while the plot's own frame ends before it.
func TestPNGs(t *testing.T) {
	run, err := Load(context.Background(), filepath.Join("testdata", "aml-run"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	eps := filepath.Join(dir, "epsilon.png")
	if err := WriteEpsilonPNG(*run.Audit, run.Claims, 8, eps); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.png")
	if err := WriteEpsilonPNG(privacy.Report{Kind: privacy.RDP, Delta: 1e-4}, nil, 0, empty); err != nil {
		t.Fatal(err)
	}
	line := filepath.Join(dir, "f1.png")
	if err := WriteLinePNG(line, "F1", "F1", []Series{{Name: "cefedgnn", X: []float64{1, 2, 3}, Y: []float64{0.1, 0.5, 0.4}}}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{eps, empty, line} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		bnd := img.Bounds()
		legendX := int(float64(bnd.Dx()) * float64(pngWidth-pngLegendW) / float64(pngWidth))
		ink := func(x0, x1 int) int {
			n := 0
			for y := bnd.Min.Y; y < bnd.Max.Y; y++ {
				for x := x0; x < x1; x++ {
					if r, g, b, _ := img.At(x, y).RGBA(); r < 0xc000 || g < 0xc000 || b < 0xc000 {
						n++
					}
				}
			}
			return n
		}
		if path != empty && ink(legendX+4, bnd.Max.X) == 0 {
			t.Errorf("%s: no legend in the right-hand column", path)
		}
		if ink(bnd.Min.X, legendX) == 0 {
			t.Errorf("%s: blank plot", path)
		}
	}
}
