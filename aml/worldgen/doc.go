// Package worldgen generates synthetic anti-money-laundering worlds and
// writes them in the published AMLworld format (Altman et al. 2023): the
// files <Prefix>_Trans.csv, <Prefix>_Patterns.txt and <Prefix>_accounts.csv
// that amlworld.LoadTrans, amlworld.LoadPatterns and amlworld.LoadAccounts
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
// Package aml/bank cuts a world into what each bank sees and writes and
// reads those views; package aml/amlworld is the format and its loaders.
package worldgen
