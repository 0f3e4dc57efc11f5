package scenarios

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/nats-io/nats.go/jetstream"

	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/privacy"
)

// rewrittenLedgerScenario: after a secure job, the audit must flag every
// way of altering the record of what was released.
//
//   - On the server (append-only: nothing can be deleted or edited), bank
//     client-0 stores, with its own key, a rewritten seq 2 (a 100 times
//     larger σ, properly signed) and a replay of its seq 1: both out of
//     chain, and client-0's claim unverified.
//   - In a copy of the ledger as a file (what `graphfed audit --ledger`
//     reads: an export, or a file ledger), an entry rewritten in place, an
//     entry removed and two entries swapped: each is a forgery, a gap or a
//     broken link at its line, and the untouched copy audits clean.
func rewrittenLedgerScenario() Scenario {
	const name = "rewritten-ledger-entry"
	return Scenario{
		Name: name,
		Doc:  "a rewritten, replayed, removed or reordered ledger entry (on the server and in a ledger file) is flagged by the audit",
		Run: func(ctx context.Context, o ScenarioOptions) (Outcome, error) {
			lj, err := runLedgerJob(ctx, "ledger-rewrite", o)
			if err != nil {
				return fail(name, InvNoProgress, "job: %v", err), nil
			}
			defer lj.job.Close()
			return rewriteLedger(ctx, name, lj)
		},
	}
}

func rewriteLedger(ctx context.Context, name string, lj *ledgerJob) (Outcome, error) {
	local := lj.job.Local()
	job, attacker := local.Job(), deploy.ClientID(0)
	rd, err := local.LedgerReading(ctx)
	if err != nil {
		return fail(name, InvLedgerBlocked, "clean read: %v", err), nil
	}
	if len(rd.Rejected) > 0 || len(rd.Breaks) > 0 {
		return fail(name, InvTamperUnseen, "the untouched ledger reads with rejects %v and breaks %v", rd.Rejected, rd.Breaks), nil
	}
	var mine []privacy.Entry
	for _, e := range rd.Entries {
		if e.Client == attacker {
			mine = append(mine, e)
		}
	}
	if len(mine) < 3 {
		return fail(name, InvNoProgress, "%s has %d entries, want 3 or more", attacker, len(mine)), nil
	}

	// The file copy first, from the clean reading.
	dir, err := os.MkdirTemp("", "graphfed-rewrite-")
	if err != nil {
		return Outcome{}, err
	}
	defer os.RemoveAll(dir)
	metrics := map[string]float64{}
	if out := fileTampering(ctx, name, dir, local.Keyring(), rd.Entries, metrics); out != nil {
		return *out, nil
	}

	// Then the server.
	signer, err := bus.LoadSigner(attacker, local.Creds(attacker))
	if err != nil {
		return Outcome{}, err
	}
	rewritten := mine[1]
	rewritten.Sigma *= 100
	reData, err := signedEntry(rewritten, rewritten.Prev, signer)
	if err != nil {
		return Outcome{}, err
	}
	replay, err := privacy.EncodeEntry(mine[0])
	if err != nil {
		return Outcome{}, err
	}
	nc, _, err := lj.bankConn(attacker)
	if err != nil {
		return Outcome{}, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return Outcome{}, err
	}
	want := map[uint64]privacy.RejectReason{}
	for _, data := range [][]byte{reData, replay} {
		ack, err := js.Publish(ctx, bus.LedgerSubject(job, attacker), data)
		if err != nil {
			return fail(name, InvNoProgress, "%s could not publish on its ledger subject: %v", attacker, err), nil
		}
		want[ack.Sequence] = privacy.RejectOutOfChain
	}
	rep, err := lj.audit(ctx)
	if err != nil {
		return fail(name, InvLedgerBlocked, "audit: %v", err), nil
	}
	if bad := checkRejected(rep.Integrity.Rejected, want); bad != "" {
		return fail(name, InvTamperUnseen, "server: %s", bad), nil
	}
	if !slices.Equal(rep.Integrity.Unverified, []string{job + "/" + attacker}) {
		return fail(name, InvTamperUnseen, "server: claim unverified for %v, want %s only", rep.Integrity.Unverified, attacker), nil
	}
	metrics["server_flagged"] = float64(len(rep.Integrity.Rejected))
	return Outcome{Name: name, Metrics: metrics}, nil
}

// fileTampering writes the entries as a ledger file, checks that it
// audits clean with the keyring, then rewrites, removes and swaps entries
// of the first client with three or more, each in a fresh copy, and checks
// that the audit flags each at the right line. A failing outcome, or nil.
func fileTampering(ctx context.Context, name, dir string, ring *bus.Keyring, entries []privacy.Entry, metrics map[string]float64) *Outcome {
	var lines [][]byte
	for _, e := range entries {
		b, err := privacy.EncodeEntry(e)
		if err != nil {
			o := fail(name, "error", "%v", err)
			return &o
		}
		lines = append(lines, b)
	}
	// Lines i < j of the same client, consecutive in its chain: the
	// victim's first and second entries. The victim is a bank: the
	// aggregator's records (the first of them opens the ledger) release
	// nothing.
	c := entries[slices.IndexFunc(entries, func(e privacy.Entry) bool { return !e.Channel.IsRecord() })].Client
	var idx []int
	for k, e := range entries {
		if e.Client == c {
			idx = append(idx, k)
		}
	}
	i, j := idx[0], idx[1]
	rewrite := slices.Clone(lines)
	// σ 0.01 becomes 10.01: far more noise claimed than was added.
	rewrite[i] = bytes.Replace(lines[i], []byte(`"sigma":`), []byte(`"sigma":1`), 1)
	removed := slices.Delete(slices.Clone(lines), i, i+1)
	swapped := slices.Clone(lines)
	swapped[i], swapped[j] = swapped[j], swapped[i]
	for _, tc := range []struct {
		name  string
		lines [][]byte
		clean bool
		want  func(privacy.Integrity) bool
	}{
		{"untouched", lines, true, func(in privacy.Integrity) bool { return in.Clean() }},
		{"rewritten", rewrite, false, func(in privacy.Integrity) bool {
			return len(in.Rejected) == 1 && in.Rejected[0].Reason == privacy.RejectForged && in.Rejected[0].Pos == uint64(i+1)
		}},
		{"removed", removed, false, func(in privacy.Integrity) bool {
			return len(in.Breaks) == 1 && in.Breaks[0].Kind == privacy.BreakGap
		}},
		{"reordered", swapped, false, func(in privacy.Integrity) bool {
			return len(in.Breaks) >= 1 && len(in.Rejected) >= 1 && in.Rejected[0].Reason == privacy.RejectOutOfChain
		}},
	} {
		path := filepath.Join(dir, tc.name+".jsonl")
		if err := os.WriteFile(path, append(bytes.Join(tc.lines, []byte("\n")), '\n'), 0o600); err != nil {
			o := fail(name, "error", "%v", err)
			return &o
		}
		l, err := privacy.OpenFileLedgerReadOnly(path)
		if err != nil {
			o := fail(name, InvLedgerBlocked, "file %s: %v", tc.name, err)
			return &o
		}
		rd, err := privacy.ReadLedger(ctx, l, privacy.VerifyOptions{Keys: deploy.LedgerKeys(ring)})
		if err != nil {
			o := fail(name, InvLedgerBlocked, "file %s: %v", tc.name, err)
			return &o
		}
		rep, err := privacy.AuditReading(rd, privacy.AuditOptions{Delta: deploy.DefaultDelta})
		if err != nil {
			o := fail(name, InvLedgerBlocked, "file %s: audit: %v", tc.name, err)
			return &o
		}
		in := rep.Integrity
		if !tc.want(in) || (!tc.clean && len(in.Unverified) == 0) {
			o := fail(name, InvTamperUnseen, "file %s (client %s, lines %d and %d): rejected %v, breaks %v, unverified %v",
				tc.name, c, i+1, j+1, in.Rejected, in.Breaks, in.Unverified)
			return &o
		}
		metrics[fmt.Sprintf("file_%s_flags", tc.name)] = float64(len(in.Rejected) + len(in.Breaks))
	}
	return nil
}
