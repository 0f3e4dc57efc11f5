// Package bank cuts an AML world into what each bank sees, and writes and
// reads those per-bank views as directories of AMLworld files.
//
// A bank's view (View) holds only the rows with an endpoint among the
// bank's accounts, as a graph of its own: other banks' accounts appear in it
// as bank id and account number, nothing else. Accounts are named across
// banks by GlobalID, a hash of bank id and account number that every bank
// computes alike without seeing the others' data. All banks share the
// world's temporal split (its day cut-offs), written beside each bank's
// rows in split.json.
//
// Write writes one directory per bank (`graphfed split aml`), Load reads
// one back, and SplitWorld makes the same views of a world in memory.
package bank
