package flagval

import (
	"strings"
	"testing"
	"time"
)

func TestOptionalStaysNilUntilSet(t *testing.T) {
	var f *float64
	var i *int
	var b *bool
	var u *uint64
	var d *time.Duration
	vals := []interface {
		Set(string) error
		String() string
	}{Float(&f), Int(&i), Bool(&b), Uint(&u), Duration(&d)}
	for _, v := range vals {
		if v.String() != "" {
			t.Fatalf("%T unset shows %q", v, v.String())
		}
	}
	for k, in := range []string{"0", "0", "false", "0", "0s"} {
		if err := vals[k].Set(in); err != nil {
			t.Fatal(err)
		}
	}
	if f == nil || *f != 0 || i == nil || b == nil || *b || u == nil || d == nil {
		t.Fatal("a given zero left a field unset")
	}
	if err := Int(&i).Set("x"); err == nil {
		t.Fatal("Int accepted x")
	}
}

func TestPositiveRefusesZero(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		want    float64
	}{{"0.5", "", 0.5}, {"0", "is 0; it must be positive", 0}, {"-1", "is -1", 0}, {"NaN", "is NaN", 0}, {"+Inf", "is +Inf", 0}, {"x", "invalid syntax", 0}} {
		var v float64
		err := Positive{&v, "model σ1"}.Set(tc.in)
		switch {
		case tc.err == "" && (err != nil || v != tc.want):
			t.Errorf("%q: %v, %v", tc.in, v, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
		}
	}
}
