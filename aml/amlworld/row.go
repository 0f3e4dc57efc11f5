package amlworld

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Kinds of malformed AMLworld rows. A row error wraps exactly one of them, so
// callers can test with errors.Is.
var (
	ErrColumns   = errors.New("wrong column count")
	ErrTimestamp = errors.New("bad timestamp")
	ErrBank      = errors.New("bad bank id")
	ErrAccount   = errors.New("bad account")
	ErrAmount    = errors.New("bad amount")
	ErrCurrency  = errors.New("unknown currency")
	ErrFormat    = errors.New("unknown payment format")
	ErrLabel     = errors.New("bad laundering label")
	ErrHeader    = errors.New("bad header")
	ErrPattern   = errors.New("bad pattern block")
	ErrLine      = errors.New("bad line")
)

// TxRow is one transaction row of a *_Trans.csv or *_Patterns.txt file.
// Time is Unix seconds (UTC; the files carry minutes, so Time%60 == 0).
// Bank ids and accounts are kept as written: "010" and "10" differ.
type TxRow struct {
	Time           int64
	FromBank       string
	FromAccount    string
	ToBank         string
	ToAccount      string
	AmountReceived float64
	RecvCurrency   Currency
	AmountPaid     float64
	PayCurrency    Currency
	Format         Format
	Laundering     bool
}

// amlFields is a parsed row whose identifier fields alias the input line; the
// loader uses it to avoid allocating per row.
type amlFields struct {
	time                               int64
	fromBank, fromAcct, toBank, toAcct []byte
	amountRecv, amountPaid             float64
	recvCur, payCur                    Currency
	format                             Format
	label                              uint8
	cols                               [amlTransColumns][]byte
	scratch                            []byte
}

// ParseTxRow parses one transaction line (without its line break).
func ParseTxRow(line []byte) (TxRow, error) {
	var f amlFields
	if err := f.parse(line); err != nil {
		return TxRow{}, err
	}
	return TxRow{
		Time:           f.time,
		FromBank:       string(f.fromBank),
		FromAccount:    string(f.fromAcct),
		ToBank:         string(f.toBank),
		ToAccount:      string(f.toAcct),
		AmountReceived: f.amountRecv,
		RecvCurrency:   f.recvCur,
		AmountPaid:     f.amountPaid,
		PayCurrency:    f.payCur,
		Format:         f.format,
		Laundering:     f.label == 1,
	}, nil
}

// parse fills f from line. Errors name the column and quote the field.
func (f *amlFields) parse(line []byte) error {
	n, err := amlSplit(line, f.cols[:], &f.scratch)
	if err != nil {
		return err
	}
	if n != amlTransColumns {
		return fmt.Errorf("%w: %d columns, want %d", ErrColumns, n, amlTransColumns)
	}
	c := &f.cols
	if f.time, err = ParseTime(c[0]); err != nil {
		return err
	}
	if err := amlCheckBank(c[1]); err != nil {
		return err
	}
	if err := amlCheckAccount(c[2]); err != nil {
		return err
	}
	if err := amlCheckBank(c[3]); err != nil {
		return err
	}
	if err := amlCheckAccount(c[4]); err != nil {
		return err
	}
	f.fromBank, f.fromAcct, f.toBank, f.toAcct = c[1], c[2], c[3], c[4]
	if f.amountRecv, err = amlParseAmount(c[5]); err != nil {
		return fmt.Errorf("amount received: %w", err)
	}
	var ok bool
	if f.recvCur, ok = amlCurrencyBytes(c[6]); !ok {
		return fmt.Errorf("receiving currency: %w %q", ErrCurrency, c[6])
	}
	if f.amountPaid, err = amlParseAmount(c[7]); err != nil {
		return fmt.Errorf("amount paid: %w", err)
	}
	if f.payCur, ok = amlCurrencyBytes(c[8]); !ok {
		return fmt.Errorf("payment currency: %w %q", ErrCurrency, c[8])
	}
	if f.format, ok = amlFormatBytes(c[9]); !ok {
		return fmt.Errorf("%w %q", ErrFormat, c[9])
	}
	switch string(c[10]) {
	case "0":
		f.label = 0
	case "1":
		f.label = 1
	default:
		return fmt.Errorf("%w %q, want 0 or 1", ErrLabel, c[10])
	}
	return nil
}

// amlSplit splits a comma-separated line into dst and returns the number of
// fields (which may exceed len(dst); extra fields are counted, not stored).
// Lines without a double quote are split in place. Quoted fields (RFC 4180,
// "" for a quote) are unquoted into *scratch, which the fields then alias.
func amlSplit(line []byte, dst [][]byte, scratch *[]byte) (int, error) {
	if bytes.IndexByte(line, '"') < 0 {
		n := 0
		for {
			i := bytes.IndexByte(line, ',')
			if n < len(dst) {
				if i < 0 {
					dst[n] = line
				} else {
					dst[n] = line[:i]
				}
			}
			n++
			if i < 0 {
				return n, nil
			}
			line = line[i+1:]
		}
	}
	buf := (*scratch)[:0]
	type span struct{ lo, hi int }
	var spans [16]span
	n := 0
	i := 0
	for {
		lo := len(buf)
		if i < len(line) && line[i] == '"' {
			i++
			for {
				if i >= len(line) {
					return 0, fmt.Errorf("%w: unterminated quoted field", ErrLine)
				}
				if line[i] == '"' {
					if i+1 < len(line) && line[i+1] == '"' {
						buf = append(buf, '"')
						i += 2
						continue
					}
					i++
					break
				}
				buf = append(buf, line[i])
				i++
			}
			if i < len(line) && line[i] != ',' {
				return 0, fmt.Errorf("%w: text after closing quote", ErrLine)
			}
		} else {
			for i < len(line) && line[i] != ',' {
				if line[i] == '"' {
					return 0, fmt.Errorf("%w: quote inside unquoted field", ErrLine)
				}
				buf = append(buf, line[i])
				i++
			}
		}
		if n < len(spans) {
			spans[n] = span{lo, len(buf)}
		}
		n++
		if i >= len(line) {
			break
		}
		i++ // the comma
	}
	*scratch = buf
	for k := 0; k < n && k < len(dst) && k < len(spans); k++ {
		dst[k] = buf[spans[k].lo:spans[k].hi:spans[k].hi]
	}
	return n, nil
}

// amlCharClass classifies bytes for the id checks: bit 1 letters and
// digits, bit 2 '-' and '_'.
var amlCharClass = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = 1
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c], t[c+'a'-'A'] = 1, 1
	}
	t['-'], t['_'] = 2, 2
	return t
}()

// amlCheckBank accepts 1–32 ASCII letters, digits, '-' or '_'. Bank ids are
// strings: leading zeros are significant.
func amlCheckBank(b []byte) error {
	if len(b) == 0 || len(b) > 32 {
		return fmt.Errorf("%w %q: want 1-32 characters", ErrBank, b)
	}
	for _, ch := range b {
		if amlCharClass[ch] == 0 {
			return fmt.Errorf("%w %q: character %q", ErrBank, b, ch)
		}
	}
	return nil
}

// amlCheckAccount accepts 1–64 ASCII letters or digits (the published files
// and the generator write 9 upper-case hexadecimal characters).
func amlCheckAccount(b []byte) error {
	if len(b) == 0 || len(b) > 64 {
		return fmt.Errorf("%w %q: want 1-64 characters", ErrAccount, b)
	}
	for _, ch := range b {
		if amlCharClass[ch] != 1 {
			return fmt.Errorf("%w %q: character %q", ErrAccount, b, ch)
		}
	}
	return nil
}

// amlPow10 holds the exactly representable powers of ten.
var amlPow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// amlParseAmount parses a non-negative decimal amount. Plain "digits[.digits]"
// with at most 15 significant digits takes an exact fast path (one correctly
// rounded division); anything else goes through strconv.ParseFloat. Negative,
// infinite and NaN amounts are errors.
func amlParseAmount(b []byte) (float64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("%w: empty", ErrAmount)
	}
	if b[0] == '-' {
		return 0, fmt.Errorf("%w %q: negative", ErrAmount, b)
	}
	var mant uint64
	digits, frac, dot := 0, 0, false
	fast := true
	for _, ch := range b {
		switch {
		case ch >= '0' && ch <= '9':
			if mant != 0 || ch != '0' {
				digits++
			}
			mant = mant*10 + uint64(ch-'0')
			if dot {
				frac++
			}
		case ch == '.' && !dot:
			dot = true
		default:
			fast = false
		}
		if !fast || digits > 15 || frac > 22 {
			fast = false
			break
		}
	}
	if fast && len(b) > 0 && !(dot && len(b) == 1) {
		return float64(mant) / amlPow10[frac], nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%w %q", ErrAmount, b)
	}
	if v < 0 || math.Signbit(v) {
		return 0, fmt.Errorf("%w %q: negative", ErrAmount, b)
	}
	return v, nil
}

// AppendTxRow appends r as one CSV line without the line break, in the
// published layout: amounts with 2 decimals (Bitcoin 6), label 0 or 1.
// Amounts must be finite and non-negative, and bank ids and accounts valid,
// for the line to parse back.
func AppendTxRow(dst []byte, r *TxRow) []byte {
	dst = AppendTime(dst, r.Time)
	dst = append(dst, ',')
	dst = append(dst, r.FromBank...)
	dst = append(dst, ',')
	dst = append(dst, r.FromAccount...)
	dst = append(dst, ',')
	dst = append(dst, r.ToBank...)
	dst = append(dst, ',')
	dst = append(dst, r.ToAccount...)
	dst = append(dst, ',')
	dst = strconv.AppendFloat(dst, r.AmountReceived, 'f', r.RecvCurrency.Decimals(), 64)
	dst = append(dst, ',')
	dst = append(dst, r.RecvCurrency.String()...)
	dst = append(dst, ',')
	dst = strconv.AppendFloat(dst, r.AmountPaid, 'f', r.PayCurrency.Decimals(), 64)
	dst = append(dst, ',')
	dst = append(dst, r.PayCurrency.String()...)
	dst = append(dst, ',')
	dst = append(dst, r.Format.String()...)
	if r.Laundering {
		return append(dst, ",1"...)
	}
	return append(dst, ",0"...)
}
