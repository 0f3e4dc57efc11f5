package worldgen

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"graphfed/aml/amlworld"
)

// Summary is what a generated world holds, counted while writing it.
type Summary struct {
	Prefix                                string
	TransPath, PatternsPath, AccountsPath string // set by Generate

	Rows           int64 // rows of the Trans file
	LaunderingRows int64 // rows labelled 1
	PatternRows    int64 // rows inside pattern blocks (all labelled 1)
	SelfTransfers  int64
	CrossBankRows  int64
	// LaunderingCrossBankRows counts laundering rows between banks;
	// PatternCrossBankRows those inside pattern blocks (the hops).
	LaunderingCrossBankRows int64
	PatternCrossBankRows    int64

	Accounts, Entities, Banks int
	BankIDs                   []string
	BankEdges                 []int64 // per bank: rows with an endpoint there

	Attempts            int
	AttemptsPerTypology [amlworld.NumTypologies]int
	RowsPerTypology     [amlworld.NumTypologies]int64
}

// Generate writes <dir>/<Prefix>_Trans.csv, _Patterns.txt and _accounts.csv.
// Each file is written under a temporary name and renamed when complete.
// progress, if not nil, is called with rows written so far and the total.
func Generate(cfg Config, dir string, progress func(done, total int64)) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("aml: generate: %w", err)
	}
	paths := [3]string{
		filepath.Join(dir, cfg.Prefix+"_Trans.csv"),
		filepath.Join(dir, cfg.Prefix+"_Patterns.txt"),
		filepath.Join(dir, cfg.Prefix+"_accounts.csv"),
	}
	var files [3]*os.File
	cleanup := func() {
		for _, f := range files {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
	}
	for i, p := range paths {
		f, err := os.Create(p + ".tmp")
		if err != nil {
			cleanup()
			return Summary{}, fmt.Errorf("aml: generate: %w", err)
		}
		files[i] = f
	}
	s, err := Write(cfg, files[0], files[1], files[2], progress)
	if err != nil {
		cleanup()
		return Summary{}, err
	}
	for i, f := range files {
		if err := f.Close(); err != nil {
			files[i] = nil
			cleanup()
			return Summary{}, fmt.Errorf("aml: generate: %w", err)
		}
		files[i] = nil
		if err := os.Rename(f.Name(), paths[i]); err != nil {
			cleanup()
			return Summary{}, fmt.Errorf("aml: generate: %w", err)
		}
	}
	s.TransPath, s.PatternsPath, s.AccountsPath = paths[0], paths[1], paths[2]
	return s, nil
}

// flushAt is the size at which the row buffer is handed to the writer.
const flushAt = 1 << 20

// Write generates the world of cfg and writes its three files to the given
// writers (no buffering is needed: rows are batched into 1 MiB writes).
func Write(cfg Config, trans, patterns, accounts io.Writer, progress func(done, total int64)) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	w := newWorld(cfg)
	attempts, extra := w.launder(cfg.Transactions)
	s := Summary{
		Prefix:    cfg.Prefix,
		Accounts:  len(w.acctBank),
		Entities:  len(w.entStart) - 1,
		Banks:     cfg.Banks,
		BankIDs:   append([]string(nil), w.bankIDs...),
		BankEdges: make([]int64, cfg.Banks),
		Attempts:  len(attempts),
	}
	var buf []byte
	flush := func(dst io.Writer, force bool) error {
		if len(buf) >= flushAt || force && len(buf) > 0 {
			if _, err := dst.Write(buf); err != nil {
				return fmt.Errorf("aml: write: %w", err)
			}
			buf = buf[:0]
		}
		return nil
	}

	// Patterns, and the laundering rows by day.
	launderByDay := make([][]txn, cfg.Days)
	day := func(t int64) int { return int((t - cfg.Start) / 86400) }
	for _, a := range attempts {
		s.AttemptsPerTypology[a.typ]++
		s.RowsPerTypology[a.typ] += int64(len(a.rows))
		buf = amlworld.AppendBegin(buf, a.typ, a.detail)
		buf = append(buf, '\n')
		for i := range a.rows {
			x := &a.rows[i]
			s.PatternRows++
			if w.acctBank[x.src] != w.acctBank[x.dst] {
				s.PatternCrossBankRows++
			}
			buf = w.appendRow(buf, x)
			launderByDay[day(x.t)] = append(launderByDay[day(x.t)], *x)
		}
		buf = amlworld.AppendEnd(buf, a.typ)
		buf = append(buf, '\n', '\n')
		if err := flush(patterns, false); err != nil {
			return Summary{}, err
		}
	}
	if err := flush(patterns, true); err != nil {
		return Summary{}, err
	}
	for _, x := range extra {
		launderByDay[day(x.t)] = append(launderByDay[day(x.t)], x)
	}

	// Accounts.
	buf = append(buf, amlworld.AccountsHeader...)
	buf = append(buf, '\n')
	for e := int32(0); int(e) < s.Entities; e++ {
		rec := amlworld.Account{EntityID: w.entityID(e), EntityName: w.entityName(e)}
		for a := w.entStart[e]; a < w.entStart[e+1]; a++ {
			b := w.acctBank[a]
			rec.BankName, rec.BankID, rec.Account = w.bankNames[b], w.bankIDs[b], w.acctNum[a]
			buf = amlworld.AppendAccount(buf, &rec)
			buf = append(buf, '\n')
		}
		if err := flush(accounts, false); err != nil {
			return Summary{}, err
		}
	}
	if err := flush(accounts, true); err != nil {
		return Summary{}, err
	}

	// Transactions, day by day: normal rows and that day's laundering rows,
	// sorted by minute.
	var launderRows int64
	dayWeight := make([]float64, cfg.Days)
	for d := range launderByDay {
		launderRows += int64(len(launderByDay[d]))
		dayWeight[d] = 1
		if wd := ((cfg.Start/86400+int64(d))%7 + 11) % 7; wd == 0 || wd == 6 { // Sunday, Saturday
			dayWeight[d] = 0.85
		}
	}
	normal := largestRemainder(max(0, cfg.Transactions-launderRows), dayWeight)
	buf = append(buf, amlworld.TransHeader...)
	buf = append(buf, '\n')
	var rows, sorted []txn
	var lastReport int64
	for d := 0; d < cfg.Days; d++ {
		self := int64(float64(normal[d]+int64(len(launderByDay[d])))*cfg.SelfTransferShare + 0.5)
		rows = w.normalDay(d, normal[d], min(self, normal[d]), rows[:0])
		rows = append(rows, launderByDay[d]...)
		sorted = byMinute(rows, cfg.Start+int64(d)*86400, sorted)
		for i := range sorted {
			x := &sorted[i]
			s.count(w, x)
			buf = w.appendRow(buf, x)
			if len(buf) >= flushAt {
				if err := flush(trans, false); err != nil {
					return Summary{}, err
				}
				if progress != nil && s.Rows-lastReport >= 1<<16 {
					progress(s.Rows, cfg.Transactions)
					lastReport = s.Rows
				}
			}
		}
	}
	if err := flush(trans, true); err != nil {
		return Summary{}, err
	}
	if progress != nil {
		progress(s.Rows, s.Rows)
	}
	return s, nil
}

// count adds one Trans row to the summary.
func (s *Summary) count(w *world, x *txn) {
	s.Rows++
	a, b := w.acctBank[x.src], w.acctBank[x.dst]
	s.BankEdges[a]++
	if a != b {
		s.BankEdges[b]++
		s.CrossBankRows++
	}
	if x.src == x.dst {
		s.SelfTransfers++
	}
	if x.label == 1 {
		s.LaunderingRows++
		if a != b {
			s.LaunderingCrossBankRows++
		}
	}
}

// appendRow formats x as a CSV line with its line break.
func (w *world) appendRow(dst []byte, x *txn) []byte {
	fb, tb := w.acctBank[x.src], w.acctBank[x.dst]
	r := amlworld.TxRow{
		Time:     x.t,
		FromBank: w.bankIDs[fb], FromAccount: w.acctNum[x.src],
		ToBank: w.bankIDs[tb], ToAccount: w.acctNum[x.dst],
		AmountReceived: x.recv, RecvCurrency: x.rc,
		AmountPaid: x.paid, PayCurrency: x.pc,
		Format:     x.format,
		Laundering: x.label == 1,
	}
	dst = amlworld.AppendTxRow(dst, &r)
	return append(dst, '\n')
}

// byMinute counting-sorts one day's rows (all in [day0, day0+86400)) by
// minute, keeping generation order within a minute, into out.
func byMinute(rows []txn, day0 int64, out []txn) []txn {
	var start [1441]int
	for i := range rows {
		start[(rows[i].t-day0)/60+1]++
	}
	for m := 1; m <= 1440; m++ {
		start[m] += start[m-1]
	}
	if cap(out) < len(rows) {
		out = make([]txn, len(rows), len(rows)+len(rows)/8)
	}
	out = out[:len(rows)]
	for i := range rows {
		m := (rows[i].t - day0) / 60
		out[start[m]] = rows[i]
		start[m]++
	}
	return out
}
