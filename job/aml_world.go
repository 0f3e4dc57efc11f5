package job

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"graphfed/aml/amlworld"
	"graphfed/aml/worldgen"
)

// AMLWorld is the transactions an AML job runs on: an AMLworld file
// (Trans), or a world generated from the shape fields into Dir.
type AMLWorld struct {
	// Trans is an AMLworld *_Trans.csv (generated or downloaded) to run
	// on; its banks are the job's. Accounts is its accounts file (""
	// : <name>_accounts.csv beside Trans, if present).
	Trans, Accounts string
	// The shape of a generated world; with Trans, each must be unset (the
	// world is the file's). Size "": demo; Banks 0: DefaultAMLBanks;
	// Rows, NumAccounts, IllicitRatio 0: the size's preset.
	Size         string
	Banks        int
	Rows         int
	NumAccounts  int
	IllicitRatio float64
	// Dir is where a generated world is written ("": a temporary
	// directory, removed when the job ends).
	Dir string
}

// DefaultAMLBanks is a generated world's banks unless told: with many
// banks a bank sees little of a foreign account's activity, which is what
// CE-FedGNN's exchange adds.
const DefaultAMLBanks = 24

// DefaultAMLSize is a generated world's size unless told: the demo world
// (30k accounts, 300k rows, 1 in 100 laundering).
const DefaultAMLSize = "demo"

// loadedWorld is what world returns.
type loadedWorld struct {
	graph    *amlworld.Graph
	accounts []amlworld.Account // nil without an accounts file
	dataset  string             // the report's name for it
	trans    string             // the transactions file (typology patterns sit beside it)
	cleanup  func()
}

// world loads Trans, or generates the world seeded with seed.
func (w AMLWorld) world(seed uint64, p Progress, log zerolog.Logger) (loadedWorld, error) {
	nop := func() {}
	if w.Trans != "" {
		g, accts, err := w.load(p, log)
		return loadedWorld{graph: g, accounts: accts, dataset: w.Trans, trans: w.Trans, cleanup: nop}, err
	}
	if w.Accounts != "" {
		return loadedWorld{}, errors.New("--accounts needs --trans: an accounts file is read beside its transactions file")
	}
	name := w.Size
	if name == "" {
		name = DefaultAMLSize
	}
	size, err := worldgen.ParseSize(name)
	if err != nil {
		return loadedWorld{}, err
	}
	cfg, err := worldgen.Preset(size, worldgen.HI, seed)
	if err != nil {
		return loadedWorld{}, err
	}
	cfg.Banks = DefaultAMLBanks
	if w.Banks > 0 {
		cfg.Banks = w.Banks
	}
	if w.Rows > 0 {
		cfg.Transactions = int64(w.Rows)
	}
	if w.NumAccounts > 0 {
		cfg.Accounts = w.NumAccounts
	}
	if w.IllicitRatio > 0 {
		cfg.IllicitRatio = w.IllicitRatio
	}
	dir, cleanup := w.Dir, nop
	if dir == "" {
		if dir, err = os.MkdirTemp("", "graphfed-aml-"); err != nil {
			return loadedWorld{}, err
		}
		cleanup = func() { os.RemoveAll(dir) }
	}
	bar := p.Stage("gen aml", int(cfg.Transactions))
	sum, err := worldgen.Generate(cfg, dir, func(done, _ int64) { bar.Update(int(done), "rows") })
	bar.Finish()
	if err != nil {
		cleanup()
		return loadedWorld{}, err
	}
	g, _, err := amlworld.LoadTrans(sum.TransPath, amlworld.Options{})
	if err != nil {
		cleanup()
		return loadedWorld{}, err
	}
	return loadedWorld{graph: g, dataset: "aml-" + name, trans: sum.TransPath, cleanup: cleanup}, nil
}

// load reads Trans and its accounts. The world's shape comes from the
// file, so the fields that shape a generated world are refused rather than
// silently ignored. Malformed rows fail the run with their line (graph's
// strict policy): a model trained on a silently thinned file would not be
// the file's.
func (w AMLWorld) load(p Progress, log zerolog.Logger) (*amlworld.Graph, []amlworld.Account, error) {
	for _, f := range []struct {
		flag string
		set  bool
	}{{"banks", w.Banks != 0}, {"size", w.Size != ""}, {"world-rows", w.Rows != 0},
		{"world-accounts", w.NumAccounts != 0}, {"illicit-ratio", w.IllicitRatio != 0}} {
		if f.set {
			return nil, nil, fmt.Errorf("--%s shapes a generated world; with --trans the world is the file's", f.flag)
		}
	}
	st, err := os.Stat(w.Trans)
	if err != nil {
		return nil, nil, fmt.Errorf("--trans: %w", err)
	}
	bar := p.Stage("load "+filepath.Base(w.Trans), int(st.Size()))
	g, iss, err := amlworld.LoadTrans(w.Trans, amlworld.Options{Progress: func(done, _ int64) { bar.Update(int(done), "bytes") }})
	bar.Finish()
	if err != nil {
		return nil, nil, fmt.Errorf("--trans: %w", err)
	}
	LogAMLIssues(log, iss)
	if g.NumEdges() == 0 {
		return nil, nil, fmt.Errorf("--trans %s: no transactions", w.Trans)
	}
	if g.NumBanks() < 2 {
		return nil, nil, fmt.Errorf("--trans %s: %d bank, a federated job needs at least 2", w.Trans, g.NumBanks())
	}
	path := w.Accounts
	if path == "" {
		sib, err := amlworld.SiblingPath(w.Trans, "accounts")
		if err != nil {
			return g, nil, nil // a file named otherwise has no siblings
		}
		if _, err := os.Stat(sib); errors.Is(err, fs.ErrNotExist) {
			return g, nil, nil
		} else if err != nil {
			return nil, nil, fmt.Errorf("--accounts: %w", err)
		}
		path = sib
	}
	accts, iss, err := amlworld.LoadAccounts(path, amlworld.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("--accounts: %w", err)
	}
	LogAMLIssues(log, iss)
	return g, accts, nil
}

// LogAMLIssues logs the malformed lines a loader skipped.
func LogAMLIssues(log zerolog.Logger, iss amlworld.Issues) {
	if iss.Count == 0 {
		return
	}
	for _, e := range iss.First {
		log.Warn().Str("file", e.File).Int64("line", e.Line).Msg(e.Err.Error())
	}
	log.Warn().Int64("skipped", iss.Count).Int("shown", len(iss.First)).Msg("malformed lines skipped")
}
