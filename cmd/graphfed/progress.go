package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"graphfed/job"
)

// progress draws a one-line bar on a terminal, redrawn in place, and falls
// back to a plain line every tenth of the way when stderr is not a terminal
// (CI logs, pipes).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	total int
	label string
	start time.Time
	last  int
}

func newProgress(label string, total int) *progress {
	return &progress{w: os.Stderr, tty: isatty.IsTerminal(os.Stderr.Fd()), total: total, label: label, start: time.Now(), last: -1}
}

// update shows done of total with a short status text.
func (p *progress) update(done int, status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	frac := float64(done) / float64(max(p.total, 1))
	bar := 24
	filled := int(frac * float64(bar))
	line := fmt.Sprintf("%s [%s%s] %d/%d %5.1fs %s", p.label, strings.Repeat("#", filled), strings.Repeat(".", bar-filled),
		done, p.total, time.Since(p.start).Seconds(), status)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		if done >= p.total {
			fmt.Fprintln(p.w)
		}
		return
	}
	step := max(p.total/10, 1)
	if done/step != p.last || done >= p.total {
		p.last = done / step
		fmt.Fprintln(p.w, line)
	}
}

// finish ends the bar's line on a terminal.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.last >= 0 {
		fmt.Fprintln(p.w)
	}
}

// humanBytes formats a byte count for progress lines.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// cmdProgress draws the job library's stages as terminal bars.
type cmdProgress struct{}

func (cmdProgress) Stage(name string, total int) job.Bar {
	return progressBar{newProgress(name, total)}
}

// progressBar is a progress as a job.Bar.
type progressBar struct{ p *progress }

func (b progressBar) Update(done int, note string) { b.p.update(done, note) }
func (b progressBar) Finish()                      { b.p.finish() }
