package amlworld

import "fmt"

// AMLworld timestamps are "YYYY/MM/DD HH:MM" in an unnamed zone; graphfed
// reads them as UTC and stores Unix seconds. The conversions below are the
// proleptic Gregorian civil-date algorithms (H. Hinnant, "chrono-compatible
// low-level date algorithms"): no time.Time, no allocation, which matters at
// five million rows.

// amlDaysFromCivil is the number of days from 1970-01-01 to y-m-d.
func amlDaysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// amlCivilFromDays inverts amlDaysFromCivil.
func amlCivilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func amlDaysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// ParseTime parses "YYYY/MM/DD HH:MM" (years 1000–9999) into Unix seconds.
func ParseTime(b []byte) (int64, error) {
	if len(b) != 16 || b[4] != '/' || b[7] != '/' || b[10] != ' ' || b[13] != ':' {
		return 0, fmt.Errorf("%w %q: want YYYY/MM/DD HH:MM", ErrTimestamp, b)
	}
	var v [5]int64
	spans := [5][2]int{{0, 4}, {5, 7}, {8, 10}, {11, 13}, {14, 16}}
	for k, s := range spans {
		for i := s[0]; i < s[1]; i++ {
			ch := b[i]
			if ch < '0' || ch > '9' {
				return 0, fmt.Errorf("%w %q: want YYYY/MM/DD HH:MM", ErrTimestamp, b)
			}
			v[k] = v[k]*10 + int64(ch-'0')
		}
	}
	y, mo, d, h, mi := v[0], v[1], v[2], v[3], v[4]
	if y < 1000 || mo < 1 || mo > 12 || d < 1 || d > amlDaysInMonth(y, mo) || h > 23 || mi > 59 {
		return 0, fmt.Errorf("%w %q: out of range", ErrTimestamp, b)
	}
	return amlDaysFromCivil(y, mo, d)*86400 + h*3600 + mi*60, nil
}

// AppendTime appends Unix seconds t as "YYYY/MM/DD HH:MM" (seconds are
// truncated; t must fall in years 1000–9999 to read back).
func AppendTime(dst []byte, t int64) []byte {
	days := t / 86400
	sec := t % 86400
	if sec < 0 {
		days--
		sec += 86400
	}
	y, m, d := amlCivilFromDays(days)
	h, mi := sec/3600, sec%3600/60
	dst = append(dst,
		byte('0'+y/1000%10), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '/',
		byte('0'+m/10), byte('0'+m%10), '/',
		byte('0'+d/10), byte('0'+d%10), ' ',
		byte('0'+h/10), byte('0'+h%10), ':',
		byte('0'+mi/10), byte('0'+mi%10))
	return dst
}

// Day is the UTC calendar day of Unix seconds t, as days since 1970-01-01.
func Day(t int64) int64 {
	d := t / 86400
	if t%86400 < 0 {
		d--
	}
	return d
}
