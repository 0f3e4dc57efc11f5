package termprogress

import (
	"strings"
	"testing"
	"time"
)

// fixedClock advances one second per reading.
func fixedClock() func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time { t = t.Add(time.Second); return t }
}

func TestBarLines(t *testing.T) {
	cases := []struct {
		name    string
		tty     bool
		total   int
		updates []int
		finish  bool
		want    string
	}{
		{name: "plain prints each tenth once", total: 20, updates: []int{1, 2, 3, 20},
			want: "s [#.......................] 1/20   1.0s n\n" +
				"s [##......................] 2/20   2.0s n\n" +
				"s [########################] 20/20   4.0s n\n"},
		{name: "plain skips within a tenth", total: 100, updates: []int{1, 5, 10},
			want: "s [........................] 1/100   1.0s n\n" +
				"s [##......................] 10/100   3.0s n\n"},
		{name: "terminal redraws and ends a full bar", tty: true, total: 2, updates: []int{1, 2}, finish: true,
			want: "\r\033[Ks [############............] 1/2   1.0s n" +
				"\r\033[Ks [########################] 2/2   2.0s n\n"},
		{name: "terminal finish ends a short bar", tty: true, total: 4, updates: []int{1}, finish: true,
			want: "\r\033[Ks [######..................] 1/4   1.0s n\n"},
		{name: "over the total stays full", total: 2, updates: []int{3},
			want: "s [########################] 3/2   1.0s n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			b := Writer{W: &out, TTY: tc.tty, Now: fixedClock()}.Stage("s", tc.total)
			for _, d := range tc.updates {
				b.Update(d, "n")
			}
			if tc.finish {
				b.Finish()
			}
			if out.String() != tc.want {
				t.Errorf("got\n%q\nwant\n%q", out.String(), tc.want)
			}
		})
	}
}
