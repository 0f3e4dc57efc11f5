package operator

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestRequireCredentials(t *testing.T) {
	for _, tc := range []struct {
		name           string
		have, insecure bool
		err, warn      string
	}{
		{name: "credentials", have: true},
		{name: "refused", err: "graphfed keys --job"},
		{name: "insecure", insecure: true, warn: "*** WARNING: INSECURE ***"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warn bytes.Buffer
			err := RequireCredentials("agent", tc.have, tc.insecure, "--creds SEED", &warn, zerolog.Nop())
			if (err != nil) != (tc.err != "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one containing %q", err, tc.err)
			}
			if !strings.Contains(warn.String(), tc.warn) || tc.warn == "" && warn.Len() > 0 {
				t.Errorf("warned %q, want %q", warn.String(), tc.warn)
			}
		})
	}
}
