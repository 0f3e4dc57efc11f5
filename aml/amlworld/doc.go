// Package amlworld is the AMLworld format (Altman et al. 2023) and its
// loaders: the vocabulary of currencies, payment formats and laundering
// typologies (format.go), the transaction multigraph Graph that a
// *_Trans.csv file streams into (LoadTrans, ReadTrans), the
// *_Patterns.txt attempts and *_accounts.csv accounts (LoadPatterns,
// LoadAccounts), with strict or lenient handling of malformed rows
// (Options), the writers that produce the files byte for byte
// (AppendTxRow, AppendBegin, AppendAccount), the matching of attempts to
// transactions (MatchTypologies) and summary statistics (Stats).
//
// It also holds the one temporal split of a world: DaySplit chooses
// Multi-GNN's day boundaries (about 60/20/20 of the transactions by whole
// days), and Cutoffs, the same boundaries as instants, says which part a
// transaction falls in (Cutoffs.Of), for the world and for a bank that
// holds only its own rows alike.
//
// The graph types it builds on (graph.Split, graph.Edge) are package
// graph's; the generator is aml/worldgen, the per-bank views aml/bank.
package amlworld
