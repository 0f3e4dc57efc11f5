// Package operator is the NATS server operator's tooling for a job, what
// `graphfed keys`, `graphfed keys ledger` and `graphfed server` run.
//
// WriteKeys makes a deployment offline on one trusted machine: an NKey
// seed per party and one for the ledger administrator, the job's keyring,
// and nats-server configurations (a single server, or one per cluster
// node) sized to the job's largest message, optionally with mutual TLS
// (generated, or the operator's own certificates). Everything is rendered
// and checked before anything is written, and nothing is overwritten.
//
// CreateLedgerStreams is the ledger administrator's one-time setup of a
// job's append-only ledger streams; StartServer runs the embedded
// nats-server from such a configuration and refuses to run open unless
// told to. Results carry WriteText (the commands' human lines) and
// Metrics (their --json metrics), so a command only binds and prints.
package operator
