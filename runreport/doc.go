// Package runreport reads a run directory (summary.json, rounds.csv,
// clients.csv, ledger.jsonl) and writes report.html: one self-contained
// page, inline CSS and SVG, no script, no font and no URL outside the
// file, that a run's operators can open in a browser and send on. It also
// holds the run directory's file formats (Summary, WriteRounds,
// WriteClientRounds), the plain-words privacy claims per channel (Claims)
// and the PNG plots beside them.
package runreport
