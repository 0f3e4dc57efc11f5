package amlworld

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Account is one row of a *_accounts.csv file
// (Bank Name,Bank ID,Account Number,Entity ID,Entity Name). One entity may
// hold several accounts, at one bank or several.
type Account struct {
	BankName   string
	BankID     string
	Account    string
	EntityID   string
	EntityName string
}

// LoadAccounts reads a *_accounts.csv file; see ParseAccounts.
func LoadAccounts(path string, opt Options) ([]Account, Issues, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Issues{}, fmt.Errorf("graph: load aml accounts: %w", err)
	}
	defer f.Close()
	return ParseAccounts(f, filepath.Base(path), opt)
}

// ParseAccounts reads an accounts file: the exact AccountsHeader, then
// one account per line. Names may be RFC 4180 quoted. A row with the wrong
// column count, a bad bank id or account number, an empty entity id, or an
// account listed twice at one bank is malformed and handled by opt.Policy.
func ParseAccounts(r io.Reader, name string, opt Options) ([]Account, Issues, error) {
	const op = "graph: load aml accounts"
	l := newAMLLines(r, name, opt)
	if err := l.header(op, AccountsHeader); err != nil {
		return nil, l.issues, err
	}
	var (
		out     []Account
		cols    [5][]byte
		scratch []byte
		key     []byte
		seen    = map[string]int64{}
	)
	for {
		line, err := l.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, l.issues, fmt.Errorf("%s: %w", op, err)
		}
		if len(line) == 0 {
			continue
		}
		a, err := amlParseAccount(line, &cols, &scratch)
		if err == nil {
			key = amlKey(key[:0], []byte(a.BankID), []byte(a.Account))
			if first, dup := seen[string(key)]; dup {
				err = fmt.Errorf("%w %q at bank %q: listed again (first on line %d)", ErrAccount, a.Account, a.BankID, first)
			} else {
				seen[string(key)] = l.line
			}
		}
		if err != nil {
			if e := l.bad(err); e != nil {
				return nil, l.issues, fmt.Errorf("%s: %w", op, e)
			}
			continue
		}
		out = append(out, a)
	}
	l.done()
	return out, l.issues, nil
}

func amlParseAccount(line []byte, cols *[5][]byte, scratch *[]byte) (Account, error) {
	n, err := amlSplit(line, cols[:], scratch)
	if err != nil {
		return Account{}, err
	}
	if n != 5 {
		return Account{}, fmt.Errorf("%w: %d columns, want 5", ErrColumns, n)
	}
	if err := amlCheckBank(cols[1]); err != nil {
		return Account{}, err
	}
	if err := amlCheckAccount(cols[2]); err != nil {
		return Account{}, err
	}
	if len(bytes.TrimSpace(cols[3])) == 0 {
		return Account{}, fmt.Errorf("%w: empty entity id", ErrAccount)
	}
	return Account{
		BankName:   string(cols[0]),
		BankID:     string(cols[1]),
		Account:    string(cols[2]),
		EntityID:   string(cols[3]),
		EntityName: string(cols[4]),
	}, nil
}

// AppendAccount appends a as one accounts-file line without the line
// break, quoting a name that holds a comma or a quote. Line breaks in names
// are written as spaces (the format is one record per line).
func AppendAccount(dst []byte, a *Account) []byte {
	dst = amlAppendField(dst, a.BankName)
	dst = append(dst, ',')
	dst = append(dst, a.BankID...)
	dst = append(dst, ',')
	dst = append(dst, a.Account...)
	dst = append(dst, ',')
	dst = amlAppendField(dst, a.EntityID)
	dst = append(dst, ',')
	return amlAppendField(dst, a.EntityName)
}

func amlAppendField(dst []byte, s string) []byte {
	need := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			need = true
			break
		}
	}
	if !need {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			dst = append(dst, '"', '"')
		case '\n', '\r':
			dst = append(dst, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
