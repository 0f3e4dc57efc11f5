package bank

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"graphfed/aml/amlworld"
)

// SplitOptions configures Write.
type SplitOptions struct {
	Trans string // the world's <name>_Trans.csv
	// Accounts and Patterns are the world's accounts and patterns files;
	// empty means the sibling of Trans (<name>_accounts.csv,
	// <name>_Patterns.txt) when it exists, and none otherwise.
	Accounts, Patterns string
	Out                string // one directory bank-<id> per bank is written here
	// Policy handles malformed rows of the world's files; rows the lenient
	// policy skips reach no bank.
	Policy amlworld.Policy
}

// Files is what Write wrote for one bank.
type Files struct {
	Bank     string `json:"bank"`
	Dir      string `json:"dir"`
	Rows     int    `json:"rows"`     // transactions with an endpoint at the bank
	Home     int    `json:"home"`     // of those, sent by the bank
	Accounts int    `json:"accounts"` // rows of its accounts file
	Attempts int    `json:"attempts"` // laundering attempts with a row it sees
}

// SplitSummary is what Write did.
type SplitSummary struct {
	Name    string           `json:"name"`
	Rows    int              `json:"rows"`    // the world's transactions
	Skipped int64            `json:"skipped"` // malformed rows skipped (lenient policy)
	Cut     amlworld.Cutoffs `json:"split"`
	Banks   []Files          `json:"banks"` // in the world's bank order
	// AccountsWithoutRows counts accounts of banks that have no transaction,
	// and so no directory.
	AccountsWithoutRows int `json:"accounts_without_rows,omitempty"`
}

// SplitFile is the name of a bank directory's split description.
const SplitFile = "split.json"

// bankMeta is the content of split.json.
type bankMeta struct {
	Format int              `json:"format"` // 1
	Name   string           `json:"name"`   // dataset prefix: the files are <name>_Trans.csv etc.
	Bank   string           `json:"bank"`   // the bank's id as written
	Rows   int              `json:"rows"`   // rows of <name>_Trans.csv, checked on load
	Split  amlworld.Cutoffs `json:"split"`  // the world's temporal split
}

// bankDirName is the directory of bank id under an output directory.
func bankDirName(bank string) string { return ClientID(bank) }

// flushAtBytes bounds the rows Write buffers before appending them to
// the banks' files: a world may have thousands of banks, too many files to
// keep open at once.
const flushAtBytes = 32 << 20

// Write writes one directory per bank of the world opt.Trans, in
// AMLworld format, holding what that bank sees: <name>_Trans.csv with every
// row that has an endpoint at the bank (the published header, rows copied
// as written, in the world's order), <name>_accounts.csv with its own
// accounts when the world has an accounts file, <name>_Patterns.txt with
// the rows it sees of each laundering attempt when the world has a patterns
// file, and split.json with the world's temporal split. Other banks'
// accounts appear only as the bank id and account number of a row's
// endpoint. Load reads such a directory back.
func Write(opt SplitOptions) (SplitSummary, error) {
	const op = "aml: write banks"
	if opt.Trans == "" || opt.Out == "" {
		return SplitSummary{}, fmt.Errorf("%s: need the Trans file and an output directory", op)
	}
	w, issues, err := amlworld.LoadTrans(opt.Trans, amlworld.Options{Policy: opt.Policy})
	if err != nil {
		return SplitSummary{}, fmt.Errorf("%s: %w", op, err)
	}
	sum := SplitSummary{Name: w.Name, Rows: w.NumEdges(), Skipped: issues.Count, Cut: amlworld.CutoffsOf(w)}
	sum.Banks = make([]Files, w.NumBanks())
	for b, id := range w.BankIDs {
		dir := filepath.Join(opt.Out, bankDirName(id))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return sum, fmt.Errorf("%s: %w", op, err)
		}
		// A directory reused from an earlier split must not keep accounts
		// or patterns this world does not have: Load would read them.
		for _, kind := range []string{"_accounts.csv", "_Patterns.txt"} {
			if err := os.Remove(filepath.Join(dir, w.Name+kind)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return sum, fmt.Errorf("%s: %w", op, err)
			}
		}
		sum.Banks[b] = Files{Bank: id, Dir: dir}
	}
	if err := writeBankRows(w, opt.Trans, &sum); err != nil {
		return sum, fmt.Errorf("%s: %w", op, err)
	}
	accounts, err := sibling(opt.Accounts, opt.Trans, "accounts")
	if err != nil {
		return sum, fmt.Errorf("%s: %w", op, err)
	}
	if accounts != "" {
		if err := writeBankAccounts(w, accounts, opt.Policy, &sum); err != nil {
			return sum, fmt.Errorf("%s: %w", op, err)
		}
	}
	patterns, err := sibling(opt.Patterns, opt.Trans, "Patterns")
	if err != nil {
		return sum, fmt.Errorf("%s: %w", op, err)
	}
	if patterns != "" {
		if err := writeBankPatterns(w, patterns, opt.Policy, &sum); err != nil {
			return sum, fmt.Errorf("%s: %w", op, err)
		}
	}
	for _, bf := range sum.Banks {
		meta := bankMeta{Format: 1, Name: w.Name, Bank: bf.Bank, Rows: bf.Rows, Split: sum.Cut}
		data, err := json.MarshalIndent(meta, "", "  ")
		if err != nil {
			return sum, fmt.Errorf("%s: %w", op, err)
		}
		if err := os.WriteFile(filepath.Join(bf.Dir, SplitFile), append(data, '\n'), 0o644); err != nil {
			return sum, fmt.Errorf("%s: %w", op, err)
		}
	}
	return sum, nil
}

// sibling resolves an optional companion file: given as is, else the
// sibling of trans of that kind if it exists, else none ("").
func sibling(given, trans, kind string) (string, error) {
	if given != "" {
		return given, nil
	}
	p, err := amlworld.SiblingPath(trans, kind)
	if err != nil {
		return "", nil // a Trans file named otherwise has no siblings
	}
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	return p, nil
}

// writeBankRows copies every row of the Trans file, as written, to the
// files of the banks of its endpoints. Row k of the file (blank and
// skipped lines aside) is edge k of w, which gives its banks; the copy
// checks that it is.
func writeBankRows(w *amlworld.Graph, trans string, sum *SplitSummary) error {
	paths := make([]string, len(sum.Banks))
	for b, bf := range sum.Banks {
		paths[b] = filepath.Join(bf.Dir, w.Name+"_Trans.csv")
		if err := os.WriteFile(paths[b], []byte(amlworld.TransHeader+"\n"), 0o644); err != nil {
			return err
		}
	}
	f, err := os.Open(trans)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([][]byte, len(sum.Banks))
	buffered := 0
	flush := func() error {
		for b, rows := range buf {
			if len(rows) == 0 {
				continue
			}
			if err := appendFile(paths[b], rows); err != nil {
				return err
			}
			buf[b] = rows[:0]
		}
		buffered = 0
		return nil
	}
	r := bufio.NewReaderSize(f, 1<<20)
	var line []byte
	k := 0
	for n := 0; ; n++ {
		line, err = readLine(r, line[:0])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", trans, err)
		}
		if n == 0 {
			continue // the header, which the load checked
		}
		if len(line) == 0 {
			continue
		}
		row, err := amlworld.ParseTxRow(line)
		if err != nil {
			continue // skipped by the load's lenient policy (a strict load failed)
		}
		if k >= w.NumEdges() {
			return fmt.Errorf("%s:%d: more rows than the load read", trans, n+1)
		}
		bs, bd := w.AccountBank[w.Src[k]], w.AccountBank[w.Dst[k]]
		if row.Time != w.Time[k] || row.FromBank != w.BankIDs[bs] || row.ToBank != w.BankIDs[bd] {
			return fmt.Errorf("%s:%d: row differs from the load's row %d", trans, n+1, k)
		}
		for _, b := range []int32{bs, bd} {
			buf[b] = append(append(buf[b], line...), '\n')
			buffered += len(line) + 1
			sum.Banks[b].Rows++
			if bd == bs {
				break
			}
		}
		sum.Banks[bs].Home++
		k++
		if buffered >= flushAtBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if k != w.NumEdges() {
		return fmt.Errorf("%s: %d rows, the load read %d", trans, k, w.NumEdges())
	}
	return flush()
}

// readLine reads one line into dst without its "\n" or "\r\n", however
// long.
func readLine(r *bufio.Reader, dst []byte) ([]byte, error) {
	for {
		b, err := r.ReadSlice('\n')
		dst = append(dst, b...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (!errors.Is(err, io.EOF) || len(dst) == 0) {
			return dst, err
		}
		dst = bytes.TrimSuffix(dst, []byte{'\n'})
		return bytes.TrimSuffix(dst, []byte{'\r'}), nil
	}
}

func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeBankAccounts writes each bank's own rows of the accounts file.
func writeBankAccounts(w *amlworld.Graph, path string, policy amlworld.Policy, sum *SplitSummary) error {
	accts, _, err := amlworld.LoadAccounts(path, amlworld.Options{Policy: policy})
	if err != nil {
		return err
	}
	out := make([][]byte, len(sum.Banks))
	for b := range out {
		out[b] = []byte(amlworld.AccountsHeader + "\n")
	}
	for i := range accts {
		b, ok := w.Bank(accts[i].BankID)
		if !ok {
			sum.AccountsWithoutRows++
			continue
		}
		out[b] = append(amlworld.AppendAccount(out[b], &accts[i]), '\n')
		sum.Banks[b].Accounts++
	}
	for b, bf := range sum.Banks {
		if err := os.WriteFile(filepath.Join(bf.Dir, w.Name+"_accounts.csv"), out[b], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeBankPatterns writes, for each bank, every laundering attempt with a
// row it sees, holding those rows only.
func writeBankPatterns(w *amlworld.Graph, path string, policy amlworld.Policy, sum *SplitSummary) error {
	attempts, _, err := amlworld.LoadPatterns(path, amlworld.Options{Policy: policy})
	if err != nil {
		return err
	}
	out := make([][]byte, len(sum.Banks))
	for _, a := range attempts {
		var seen []int32 // banks with a row of this attempt
		for i := range a.Rows {
			r := &a.Rows[i]
			for _, id := range []string{r.FromBank, r.ToBank} {
				b, ok := w.Bank(id)
				if !ok {
					continue // a bank without rows has no directory
				}
				if !slices.Contains(seen, b) {
					out[b] = append(amlworld.AppendBegin(out[b], a.Type, a.Detail), '\n')
					seen = append(seen, b)
				}
				out[b] = append(amlworld.AppendTxRow(out[b], r), '\n')
				if r.ToBank == r.FromBank {
					break
				}
			}
		}
		for _, b := range seen {
			out[b] = append(append(amlworld.AppendEnd(out[b], a.Type), '\n'), '\n')
			sum.Banks[b].Attempts++
		}
	}
	for b, bf := range sum.Banks {
		if err := os.WriteFile(filepath.Join(bf.Dir, w.Name+"_Patterns.txt"), out[b], 0o644); err != nil {
			return err
		}
	}
	return nil
}
