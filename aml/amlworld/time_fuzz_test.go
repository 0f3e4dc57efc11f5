package amlworld

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// FuzzParseAMLTime: the timestamp parser never panics, fails only with
// ErrTimestamp, accepts exactly the canonical "YYYY/MM/DD HH:MM" form of
// a real minute in years 1000–9999 (time.Parse agrees), and AppendTime
// writes any such instant back to the same bytes.
//
// Run it with
//
//	go test ./aml/amlworld -run XXX -fuzz '^FuzzParseAMLTime$' -fuzztime 10m -parallel 1
func FuzzParseAMLTime(f *testing.F) {
	for _, s := range []string{"2022/09/01 00:20", "2023/02/29 00:20", "2024/02/29 23:59", "1000/01/01 00:00", "9999/12/31 23:59",
		"0999/12/31 23:59", "2022/13/01 00:00", "2022/09/01 24:00", "2022-09-01 00:20", "2022/09/01 00:20:00", "+022/09/01 00:20", ""} {
		f.Add([]byte(s), int64(1661991600))
	}
	f.Add([]byte("1900/02/29 00:00"), int64(-30610224000))
	f.Add([]byte("2000/02/29 12:34"), int64(253402300799))
	f.Fuzz(func(t *testing.T, b []byte, sec int64) {
		ts, err := ParseTime(b)
		ref, rerr := time.Parse("2006/01/02 15:04", string(b))
		refOK := rerr == nil && len(b) == 16 && ref.Year() >= 1000 && bytes.Equal([]byte(ref.Format("2006/01/02 15:04")), b)
		if (err == nil) != refOK {
			t.Fatalf("%q: ParseAMLTime error %v, time.Parse %v", b, err, rerr)
		}
		if err != nil {
			if !errors.Is(err, ErrTimestamp) {
				t.Fatalf("%q: error of another kind: %v", b, err)
			}
		} else {
			if ts != ref.Unix() {
				t.Fatalf("%q: %d, time.Parse says %d", b, ts, ref.Unix())
			}
			if got := AppendTime(nil, ts); !bytes.Equal(got, b) {
				t.Fatalf("%q parsed to %d, written back as %q", b, ts, got)
			}
			wantDay := ref.Unix() / 86400
			if ref.Unix()%86400 < 0 {
				wantDay-- // floor, not truncation, before 1970
			}
			if day := Day(ts); day != wantDay || ts-day*86400 < 0 || ts-day*86400 >= 86400 {
				t.Fatalf("%q: day %d", b, day)
			}
		}
		// Any instant of years 1000–9999 writes to a timestamp that parses
		// back to its minute.
		const lo, hi = -30610224000, 253402300799 // 1000-01-01, 9999-12-31 23:59:59
		if sec < lo || sec > hi {
			return
		}
		s := AppendTime(nil, sec)
		back, err := ParseTime(s)
		if want := sec - ((sec%60)+60)%60; err != nil || back != want {
			t.Fatalf("%d written as %q, read back as %d (%v), want %d", sec, s, back, err, want)
		}
		if want := time.Unix(sec, 0).UTC().Format("2006/01/02 15:04"); string(s) != want {
			t.Fatalf("%d written as %q, want %q", sec, s, want)
		}
	})
}
