package bus

import (
	"errors"
	"testing"
	"time"
)

func TestRunID(t *testing.T) {
	t0 := time.Unix(1700000000, 123)
	a, err := NewRunID(t0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRunID(t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := RunStart(a); !ok || !got.Equal(t0) {
		t.Fatalf("RunStart(%q) = %v, %v; want %v", a, got, ok, t0)
	}
	same, _ := NewRunID(t0)
	for _, tc := range []struct {
		name string
		x, y string
		want bool
	}{
		{"later", b, a, true},
		{"earlier", a, b, false},
		{"same start", same, a, false},
		{"over empty", a, "", true},
		{"over malformed", a, "x-y", true},
		{"malformed never later", "zzzzzzzzzzzzzzzz-0000000000000000", a, false},
		{"empty never later", "", a, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RunLater(tc.x, tc.y); got != tc.want {
				t.Fatalf("RunLater(%q, %q) = %v, want %v", tc.x, tc.y, got, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "-", "0123-4567", "0000000000000001-zzzzzzzzzzzzzzzz", "ffffffffffffffff-0000000000000000"} {
		if _, ok := RunStart(bad); ok {
			t.Fatalf("RunStart(%q) accepted", bad)
		}
	}
}

func TestValidatorRejectCounts(t *testing.T) {
	v := NewValidator(Schema{Job: "j"})
	err := v.Reject(&RejectError{Reason: ReasonReplay, Err: errors.New("old run")})
	if ReasonOf(err) != ReasonReplay || v.Rejects()[ReasonReplay] != 1 {
		t.Fatalf("reject %v counted %v", err, v.Rejects())
	}
}

func FuzzRunStart(f *testing.F) {
	f.Add("0000000000000001-0123456789abcdef")
	f.Add("")
	f.Fuzz(func(t *testing.T, id string) {
		if ts, ok := RunStart(id); ok && !RunLater(id, "") {
			t.Fatalf("well-formed %q (start %v) is not later than no run", id, ts)
		}
	})
}
