// Package termprogress draws the job library's progress stages
// (job.Progress) for a person watching: a one-line bar redrawn in place on
// a terminal, and a plain line every tenth of the way elsewhere (CI logs,
// pipes), where carriage returns would pile up.
package termprogress

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

// Stderr draws on the process's stderr, as a bar when it is a terminal.
// The zero value is ready, so a command can hand out Stderr{} as its
// job.Progress.
type Stderr struct{}

// Stage opens the bar of one stage of total steps on stderr.
func (Stderr) Stage(name string, total int) job.Bar {
	return Writer{W: os.Stderr, TTY: isatty.IsTerminal(os.Stderr.Fd()), Now: time.Now}.Stage(name, total)
}

// Writer draws stages on W: redrawn in place when TTY, plain lines
// otherwise. Now is the clock of the elapsed time shown (time.Now when
// nil).
type Writer struct {
	W   io.Writer
	TTY bool
	Now func() time.Time
}

// Stage opens the bar of one stage of total steps.
func (w Writer) Stage(name string, total int) job.Bar {
	if w.Now == nil {
		w.Now = time.Now
	}
	return &bar{out: w, label: name, total: total, start: w.Now(), last: -1}
}

// bar is one stage; the job library may update it from several
// goroutines.
type bar struct {
	mu    sync.Mutex
	out   Writer
	total int
	label string
	start time.Time
	last  int  // the tenth last printed as a plain line, -1 before it
	open  bool // a terminal line is drawn and not yet ended
}

// barWidth is the number of cells of the drawn bar.
const barWidth = 24

// Update shows done of total with a short note.
func (b *bar) Update(done int, note string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	frac := float64(done) / float64(max(b.total, 1))
	filled := min(max(int(frac*barWidth), 0), barWidth)
	line := fmt.Sprintf("%s [%s%s] %d/%d %5.1fs %s", b.label, strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled),
		done, b.total, b.out.Now().Sub(b.start).Seconds(), note)
	if b.out.TTY {
		fmt.Fprintf(b.out.W, "\r\033[K%s", line)
		b.open = done < b.total
		if !b.open {
			fmt.Fprintln(b.out.W)
		}
		return
	}
	step := max(b.total/10, 1)
	if done/step != b.last || done >= b.total {
		b.last = done / step
		fmt.Fprintln(b.out.W, line)
	}
}

// Finish ends the bar's line on a terminal when the stage stopped short
// of its total (a full bar ended its own line).
func (b *bar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		fmt.Fprintln(b.out.W)
		b.open = false
	}
}
