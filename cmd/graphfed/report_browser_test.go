package main

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds the headless browser for TestReportInBrowser:
// $GRAPHFED_CHROMIUM, else Debian's chromium on the PATH.
func chromiumPath() (string, bool) {
	if p := os.Getenv("GRAPHFED_CHROMIUM"); p != "" {
		return p, true
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// TestReportInBrowser opens the report.html of a real AML run (the demo's
// code path, `sim --scenario aml --out DIR`, on a tiny world) in headless
// Chromium, served alone by a server that fails any other request, and
// checks: the page writes nothing to the console (its CSP turns any fetch
// into a console error), it requests nothing but itself, and every plot is
// drawn: each SVG's box in a full-page screenshot holds ink and the
// colours of its curves. GRAPHFED_REPORT_SCREENSHOT=FILE keeps the
// screenshot.
func TestReportInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a simulation and a browser")
	}
	exe, ok := chromiumPath()
	if !ok {
		t.Skip("no headless Chromium: install Debian's chromium package (apt-get install chromium) or set GRAPHFED_CHROMIUM")
	}
	dir := filepath.Join(t.TempDir(), "run")
	if out, err := graphfedCmd(t, "sim", "--scenario", "aml", "--size", "tiny", "--banks", "3", "--world-rows", "8000",
		"--illicit-ratio", "0.02", "--rounds", "3", "--local-epochs", "4", "--seed", "2", "--target-epsilon", "8",
		"--out", dir, "--log-level", "error").CombinedOutput(); err != nil {
		t.Fatalf("sim: %v\n%s", err, out)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var stray []string // requests for anything but the report
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/report.html" {
			mu.Lock()
			stray = append(stray, r.URL.String())
			mu.Unlock()
			http.Error(w, "the report must not fetch anything", http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil { // start the browser and its tab
		t.Fatalf("start %s: %v", exe, err)
	}

	var console, requests []string
	lctx, stopListening := context.WithCancel(bctx)
	var wg sync.WaitGroup
	msgs, reqs := chromedp.Console(lctx), chromedp.Events(lctx, network.RequestWillBeSent)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for m, err := range msgs {
			if err != nil {
				return
			}
			mu.Lock()
			console = append(console, m.String())
			mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		for ev, err := range reqs {
			if err != nil {
				return
			}
			mu.Lock()
			requests = append(requests, ev.Request.URL)
			mu.Unlock()
		}
	}()

	url := srv.URL + "/report.html"
	if err := chromedp.Do(bctx, chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	boxes, err := chromedp.Run(bctx, chromedp.Evaluate[[][4]float64](
		`Array.from(document.querySelectorAll("svg.plot")).map(e => { const r = e.getBoundingClientRect(); return [r.x + scrollX, r.y + scrollY, r.width, r.height]; })`))
	if err != nil {
		t.Fatalf("plot boxes: %v", err)
	}
	tables, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("table").length`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // let the last events arrive
	stopListening()
	wg.Wait()
	if p := os.Getenv("GRAPHFED_REPORT_SCREENSHOT"); p != "" {
		if err := os.WriteFile(p, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	if len(console) > 0 {
		t.Errorf("console messages: %q", console)
	}
	if len(stray) > 0 {
		t.Errorf("the report fetched %q", stray)
	}
	sawPage := false
	for _, r := range requests {
		switch {
		case r == url:
			sawPage = true
		case strings.HasPrefix(r, "data:"):
		default:
			t.Errorf("network request for %s", r)
		}
	}
	if !sawPage {
		t.Errorf("saw no request for the report itself among %q: the request listener heard nothing", requests)
	}
	if tables < 8 {
		t.Errorf("%d tables, want what ran, settings, clients, metrics, rounds, traffic, efficiency and the audit's", tables)
	}

	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if len(boxes) < 6 {
		t.Fatalf("%d plots on the page, want at least 6", len(boxes))
	}
	for i, b := range boxes {
		r := image.Rect(int(b[0]), int(b[1]), int(b[0]+b[2]), int(b[1]+b[3])).Intersect(img.Bounds())
		ink, colour := plotInk(img, r)
		// A drawn plot has its frame, grid, labels and curves: a few per
		// cent of its pixels are not white, and some are the curves' hues.
		if area := r.Dx() * r.Dy(); area == 0 || ink < area/100 || colour < 50 {
			t.Errorf("plot %d at %v looks blank: %d inked and %d coloured pixels of %d", i, r, ink, colour, area)
		}
	}
	t.Logf("%d plots and %d tables rendered, no console message, no request but the page; screenshot %v", len(boxes), tables, img.Bounds().Size())
}

// plotInk counts the pixels of r that are not white, and of those the
// coloured ones (not grey: the curves, not frame, grid or text).
func plotInk(img image.Image, r image.Rectangle) (ink, colour int) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			lo, hi := min(cr, cg, cb), max(cr, cg, cb)
			if hi < 0xf000 || lo < 0xf000 {
				ink++
			}
			if hi-lo > 0x3000 {
				colour++
			}
		}
	}
	return ink, colour
}
