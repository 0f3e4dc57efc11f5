package bus

import (
	"strings"
	"testing"
)

func TestJobSizePayloadLimit(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name    string
		s       JobSize
		want    int
		wantErr string
	}{
		{"a tiny model gets the floor", JobSize{Params: 5}, MinMaxPayload, ""},
		{"keys' defaults", DefaultJobSize(), 21 * mib, ""},
		// 8 MiB of vectors + 64 KiB, a quarter more: 10.08 MiB, so 11.
		{"a million parameters", JobSize{Params: 1 << 20}, 11 * mib, ""},
		{"embeddings dominate", JobSize{Params: 1000, EmbRows: 100000, EmbDim: 64}, 32 * mib, ""},
		{"a kernel dominates", JobSize{Params: 10, KernelValues: 2 << 20}, 11 * mib, ""},
		{"over the ceiling", JobSize{Params: 8 << 20}, 0, "ceiling"},
		{"overflowing counts", JobSize{EmbRows: 1 << 30, EmbDim: 1 << 30}, 0, "ceiling"},
		{"negative", JobSize{Params: -1}, 0, "negative"},
		{"rows without a dimension", JobSize{EmbRows: 10}, 0, "together"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.s.PayloadLimit()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("PayloadLimit() = %d, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("PayloadLimit() = %d, %v; want %d", got, err, tc.want)
			}
			if got < tc.s.LargestMessage() || got%mib != 0 {
				t.Fatalf("limit %d does not fit the largest message %d in whole MiB", got, tc.s.LargestMessage())
			}
		})
	}
}

func TestMaxPendingFor(t *testing.T) {
	if got := MaxPendingFor(1<<20, 5); got != DefaultMaxPayload {
		t.Fatalf("small job: max_pending %d, want the 64 MiB floor", got)
	}
	if got := MaxPendingFor(21<<20, 5); got != 2*5*21<<20 {
		t.Fatalf("max_pending %d, want two payloads per party", got)
	}
}
