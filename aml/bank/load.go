package bank

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"graphfed/aml/amlworld"
)

// Load rebuilds a bank's view from a directory Write wrote, and
// from nothing else: split.json names the bank, the dataset and the
// world's split; <name>_Trans.csv holds the bank's rows, and
// <name>_accounts.csv, if present, its accounts. The view equals the one
// SplitWorld makes of the whole world for that bank: the same rows in the
// same order, hence the same local accounts, splits and global ids.
func Load(dir string) (*View, error) {
	const op = "aml: load bank"
	data, err := os.ReadFile(filepath.Join(dir, SplitFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	var meta bankMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", op, filepath.Join(dir, SplitFile), err)
	}
	if meta.Format != 1 || meta.Bank == "" || meta.Name == "" {
		return nil, fmt.Errorf("%s: %s: format %d, bank %q, name %q (want format 1 and both names)",
			op, filepath.Join(dir, SplitFile), meta.Format, meta.Bank, meta.Name)
	}
	if filepath.Base(meta.Name) != meta.Name {
		return nil, fmt.Errorf("%s: %s: dataset name %q is a path", op, filepath.Join(dir, SplitFile), meta.Name)
	}
	g, _, err := amlworld.LoadTrans(filepath.Join(dir, meta.Name+"_Trans.csv"), amlworld.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if g.NumEdges() != meta.Rows {
		return nil, fmt.Errorf("%s: %s: %d rows, split.json says %d", op, dir, g.NumEdges(), meta.Rows)
	}
	var accounts []amlworld.Account
	path := filepath.Join(dir, meta.Name+"_accounts.csv")
	if _, err := os.Stat(path); err == nil {
		if accounts, _, err = amlworld.LoadAccounts(path, amlworld.Options{}); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	v, err := NewView(meta.Bank, g, meta.Split, accounts)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", op, dir, err)
	}
	return v, nil
}
