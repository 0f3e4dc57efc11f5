package amlworld

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func amlSeedLines(f *testing.F, file string) {
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		f.Add([]byte(l))
	}
}

// FuzzParseTxRow: the row parser never panics, every error wraps a kind,
// and what it accepts survives format → parse → format unchanged.
func FuzzParseTxRow(f *testing.F) {
	amlSeedLines(f, "Edges_Trans.csv")
	amlSeedLines(f, "Bad_Trans.csv")
	f.Add([]byte(`"2022/09/01 00:20",1,A,2,B,1,"Euro",1,Euro,Cash,0`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseTxRow(line)
		if err != nil {
			if !amlKnownKind(err) {
				t.Fatalf("error of unknown kind: %v", err)
			}
			return
		}
		once := AppendTxRow(nil, &r)
		r2, err := ParseTxRow(once)
		if err != nil {
			t.Fatalf("%q accepted but its rewrite %q is not: %v", line, once, err)
		}
		if twice := AppendTxRow(nil, &r2); !bytes.Equal(once, twice) {
			t.Fatalf("rewrite not stable:\n%s\n%s", once, twice)
		}
	})
}

// FuzzReadAMLTrans: the streaming loader never panics; leniently, every
// non-blank line after the header is either an edge or an issue.
func FuzzReadAMLTrans(f *testing.F) {
	for _, name := range []string{"Edges_Trans.csv", "Bad_Trans.csv"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, iss, err := ReadTrans(bytes.NewReader(data), "f_Trans.csv", Options{Policy: Lenient, MaxIssues: 3})
		if err != nil {
			if !errors.Is(err, ErrHeader) {
				t.Fatalf("lenient load failed: %v", err)
			}
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
		if len(iss.First) > 3 || int64(len(iss.First)) > iss.Count {
			t.Fatalf("issues %d kept of %d", len(iss.First), iss.Count)
		}
		lines := int64(0)
		for i, l := range bytes.Split(data, []byte("\n")) {
			if i > 0 && len(bytes.TrimSuffix(l, []byte("\r"))) > 0 {
				lines++
			}
		}
		if int64(g.NumEdges())+iss.Count != lines {
			t.Fatalf("%d edges + %d issues != %d lines", g.NumEdges(), iss.Count, lines)
		}
		_ = g.Stats()
		s := g.TemporalSplit()
		_ = g.EdgeSplits(&s)
	})
}

// FuzzParseAMLPatterns: the patterns parser never panics under either
// policy, and leniently every kept row is a laundering-format row.
func FuzzParseAMLPatterns(f *testing.F) {
	for _, name := range []string{"Edges_Patterns.txt", "Bad_Patterns.txt"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		at, iss, err := ParsePatterns(bytes.NewReader(data), "f_Patterns.txt", Options{Policy: Lenient})
		if err != nil {
			t.Fatalf("lenient parse failed: %v", err)
		}
		for _, e := range iss.First {
			if !amlKnownKind(e) || e.Line < 1 {
				t.Fatalf("issue %v", e)
			}
		}
		for _, a := range at {
			if a.Type >= NumTypologies || a.Line < 1 {
				t.Fatalf("attempt %+v", a)
			}
		}
		at2, _, err := ParsePatterns(bytes.NewReader(data), "f_Patterns.txt", Options{})
		if err == nil && (iss.Count != 0 || len(at2) != len(at)) {
			t.Fatalf("strict accepted what lenient flagged: %d issues", iss.Count)
		}
		if err != nil && iss.Count == 0 {
			t.Fatalf("strict failed where lenient saw no issue: %v", err)
		}
	})
}

// FuzzParseAMLAccounts: the accounts parser never panics, and what it
// accepts is written back to a line it parses to the same account.
func FuzzParseAMLAccounts(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("testdata", "Edges_accounts.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(AccountsHeader + "\nA,1,2\n\"x\"\"\",1,2,3,\"a,b\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		acc, iss, err := ParseAccounts(bytes.NewReader(data), "f_accounts.csv", Options{Policy: Lenient})
		if err != nil {
			if !errors.Is(err, ErrHeader) {
				t.Fatalf("lenient parse failed: %v", err)
			}
			return
		}
		for _, e := range iss.First {
			if !amlKnownKind(e) {
				t.Fatalf("issue %v", e)
			}
		}
		var buf []byte
		buf = append(buf, AccountsHeader...)
		for i := range acc {
			buf = append(buf, '\n')
			buf = AppendAccount(buf, &acc[i])
		}
		back, iss2, err := ParseAccounts(bytes.NewReader(buf), "g_accounts.csv", Options{})
		if err != nil || iss2.Count != 0 || len(back) != len(acc) {
			t.Fatalf("rewrite of %d accounts: %v", len(acc), err)
		}
		for i := range acc {
			a, b := acc[i], back[i]
			clean := func(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }
			a.BankName, a.EntityID, a.EntityName = clean(a.BankName), clean(a.EntityID), clean(a.EntityName)
			if a != b {
				t.Fatalf("account %d: %+v became %+v", i, a, b)
			}
		}
	})
}

func amlKnownKind(err error) bool {
	for _, k := range []error{ErrColumns, ErrTimestamp, ErrBank, ErrAccount, ErrAmount,
		ErrCurrency, ErrFormat, ErrLabel, ErrHeader, ErrPattern, ErrLine} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}
