package job

import (
	"math"
	"testing"

	"github.com/rs/zerolog"
)

func TestInProcessConns(t *testing.T) {
	for _, tt := range []struct {
		mode, url string
		parties   int
		want      bool
		fails     bool
	}{
		{"tcp", "", math.MaxInt32, false, false},
		{"in-process", "", 3, true, false},
		{"in-process", "nats://x:4222", 3, false, true},
		{"auto", "", 3, false, false},
		{"", "", 3, false, false},
		{"auto", "", math.MaxInt32, true, false}, // more sockets than any open-file limit
		{"auto", "nats://x:4222", math.MaxInt32, false, false},
		{"pipes", "", 3, false, true},
	} {
		got, err := InProcessConns(tt.mode, tt.url, tt.parties, zerolog.Nop())
		if got != tt.want || (err != nil) != tt.fails {
			t.Errorf("InProcessConns(%q, %q, %d) = %v, %v; want %v, error %v", tt.mode, tt.url, tt.parties, got, err, tt.want, tt.fails)
		}
	}
}
