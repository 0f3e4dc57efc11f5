package job

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestFinalScoreLogEveryTenth(t *testing.T) {
	for _, tc := range []struct {
		total, step, wantLines int
	}{
		{1000, 1, 11}, // 0/10 … 10/10
		{1000, 512, 2},
		{10, 1, 10}, // every call is a new tenth
	} {
		var buf bytes.Buffer
		f := finalScoreLog(zerolog.New(&buf))
		for done := tc.step; done < tc.total+tc.step; done += tc.step {
			f(min(done, tc.total), tc.total)
		}
		if got := strings.Count(buf.String(), "final evaluation"); got != tc.wantLines {
			t.Errorf("total %d step %d: %d lines, want %d:\n%s", tc.total, tc.step, got, tc.wantLines, buf.String())
		}
	}
}
