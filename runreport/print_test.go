package runreport

import (
	"strings"
	"testing"
)

func TestSummaryPrint(t *testing.T) {
	cases := []struct {
		name   string
		s      Summary
		asJSON bool
		want   string
	}{
		{name: "json without metrics has an empty object", s: Summary{Command: "keys", Seconds: 0.5}, asJSON: true,
			want: `{"command":"keys","seed":0,"seconds":0.5,"metrics":{}}` + "\n"},
		{name: "json keeps metrics and comm", s: Summary{Command: "sim", Seed: 3, Metrics: map[string]any{"f1": 0.5},
			Comm: &Comm{Bytes: 10, Messages: 2}}, asJSON: true,
			want: `{"command":"sim","seed":3,"seconds":0,"metrics":{"f1":0.5},"comm":{"bytes":10,"messages":2}}` + "\n"},
		{name: "text", s: Summary{Command: "sim", Seconds: 1.234, Metrics: map[string]any{"f1": 0.5},
			Comm: &Comm{Bytes: 10, Messages: 2}, Privacy: map[string]any{"epsilon": 1.5}},
			want: "sim done in 1.23s\n  f1                 0.5\n  comm               10 bytes in 2 messages\n  privacy.epsilon    1.5\n"},
		{name: "text without metrics", s: Summary{Command: "report"},
			want: "report done in 0.00s\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := tc.s.Print(&b, tc.asJSON); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}
