package bus

import (
	"context"
	"errors"
	"testing"
)

// flakyFlush fails its first fails flushes, as a busy server's would time
// out.
type flakyFlush struct {
	Transport
	fails, calls int
}

func (f *flakyFlush) Flush(context.Context) error {
	f.calls++
	if f.calls <= f.fails {
		return context.DeadlineExceeded
	}
	return nil
}

func TestAwaitSubscriptions(t *testing.T) {
	for _, tt := range []struct {
		name    string
		fails   int
		cancel  bool
		wantErr bool
	}{
		{"confirmed at once", 0, false, false},
		{"after three timeouts", 3, false, false},
		{"until the context ends", 1 << 30, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := &flakyFlush{fails: tt.fails}
			slow := 0
			err := AwaitSubscriptions(ctx, f, func(error) {
				if slow++; tt.cancel && slow == 5 {
					cancel()
				}
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if !tt.cancel && (slow != tt.fails || f.calls != tt.fails+1) {
				t.Fatalf("%d timeouts reported and %d flushes, want %d and %d", slow, f.calls, tt.fails, tt.fails+1)
			}
			if tt.cancel && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err %v, want the last flush's", err)
			}
		})
	}
}
