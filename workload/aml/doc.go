// Package aml prepares anti-money-laundering jobs: it generates synthetic
// worlds, cuts a world into what each bank sees, and writes and reads
// those per-bank views as directories of AMLworld files.
//
// The generator makes synthetic anti-money-laundering worlds and
// writes them in the published AMLworld format (Altman et al. 2023): the
// files <Prefix>_Trans.csv, <Prefix>_Patterns.txt and <Prefix>_accounts.csv
// that graph.LoadAMLTrans, graph.LoadAMLPatterns and graph.LoadAMLAccounts
// read (DESIGN.md, "AML world").
//
// A world is B banks of different sizes holding the accounts of individuals
// and companies. Normal behaviour is salaries, recurring bills, purchases,
// business-to-business payments, person-to-person transfers, transfers
// between an entity's own accounts and self-transfers (about 12% of rows),
// in 15 currencies and 7 payment formats, with amounts from cents to
// millions. Laundering attempts follow the 8 AMLworld typologies and hop
// across banks. They are meant to be learnable from graph structure (fans,
// cycles, bursts in time) but not from any single column: launderers also
// transact normally, and amounts, formats, hours and currencies of
// laundering rows are skewed, never disjoint, from normal ones.
//
// Output is a pure function of Config (the seed included): every random
// stream is a PCG seeded from Config.Seed and a fixed stream number.
//
// A bank's view (BankView) holds only the rows with an endpoint among the
// bank's accounts, as a graph of its own: other banks' accounts appear in it
// as bank id and account number, nothing else. Accounts are named across
// banks by GlobalID, a hash of bank id and account number that every bank
// computes alike without seeing the others' data. All banks share the
// world's temporal split (its day cut-offs), written beside each bank's
// rows in split.json.
package aml
