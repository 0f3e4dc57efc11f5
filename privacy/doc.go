// Package privacy is graphfed's privacy gate: everything an agent sends that
// was computed from its private data passes through here first.
//
// The package has five parts, each in its own files:
//
//   - Mechanism (mechanism.go, noise.go): L2 clipping of every released row to
//     norm C (embeddings are normalized to the unit sphere, C = 1) and
//     Gaussian noise N(0, σ²I) drawn from a ChaCha8 CSPRNG seeded from
//     crypto/rand. A fixed seed exists for reproducible simulation only; every
//     ledger entry written under it is marked Seeded (non-private).
//
//   - Accountants (accountant.go, rdp.go, exact.go, normal.go): a pure,
//     deterministic state machine without I/O, in the style of etcd's raft.
//     It consumes ledger entries and tracks, per node (embeddings) and per
//     client channel (model, grad, margin), the one sufficient statistic of
//     a composition of Gaussian mechanisms, Σ ρ²/σ_i², from which both the
//     RDP accountant (Opacus' orders, reproduces CE-FedGNN Table 6) and the
//     exact composed-Gaussian accountant compute ε(δ).
//
//   - Ledger (ledger.go, fileledger.go, memledger.go): one append-only entry
//     per release, durable before the release is published. FileLedger is a
//     fsynced JSON-lines file (ReadOnlyLedger reads one for audits);
//     MemLedger is the in-memory double. The bus package implements a
//     JetStream ledger against the same interface; package ledgertest is
//     the conformance suite every implementation should pass.
//
//   - Gate (gate.go, released.go): validates, clips, checks the budget,
//     charges the accountant, appends the ledger entry, then adds noise and
//     returns a Released value. Released has no exported constructor, so a
//     sensitive value that skipped the gate cannot be published.
//
//   - Calibration and audit (calibrate.go, knn.go, audit.go, report.go,
//     plot.go): the metric-DP distance ρ as percentiles of k-th nearest
//     neighbour distances among released embeddings, recorded in the
//     ledger as calibration entries, and an audit that recomputes every ε
//     from the ledger alone, as tables and as a plot against rounds.
//
//   - Secure aggregation (secagg_record.go, audit_secagg.go): a bank's
//     record of each round of secure aggregation its update went into
//     (cohort, threshold, encoding, its neighbours), appended by
//     Gate.RecordSecAgg before the masked input goes out, and the audit's
//     account of it: per bank the rounds recorded, per channel the rounds
//     the aggregator saw only in a sum of at least t banks. No ε changes.
//
//   - Targets (target.go): SigmaForEpsilon inverts the accountants (the σ
//     that spends a target ε over R releases at distance ρ), and a node
//     budget with Budget.NodeQ is held at the ρ measured just before each
//     release instead of a planned one; Gate.NodeSigma chooses σ0 from the
//     budget left at that ρ. target.go documents the choice of ρ and its
//     caveat (ρ is a non-privatized statistic of the embeddings).
//
// Threat model (CE-FedGNN §3.3): honest-but-curious parties see every message
// including which nodes were released in each round; no amplification by
// subsampling is claimed.
//
// The package imports no other graphfed package.
package privacy
