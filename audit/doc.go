// Package audit is `graphfed audit`: recompute every ε a job spent from
// its release ledger alone, a ledger file or a job's JetStream streams,
// both read-only. Run verifies the ledger (signatures with the job's
// keyring, hash chains, the heads the aggregator reported), audits it
// with the chosen accountant at δ (at the ledger's calibrated node
// distances or the given ones), judges the privacy claims against the
// run's targets and writes the ε plot and the audit page on request.
// Nothing stored in a ledger stops an audit: junk, forgeries and
// entries out of their chain are skipped and listed in the report.
package audit
