package privacy_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"graphfed/privacy"
)

// seedDeriver stands in for a bank's signer: a fixed secret per info.
type seedDeriver struct {
	jobSigner
	seed string
}

func (d seedDeriver) DeriveSecret(info string, n int) ([]byte, error) {
	h := sha256.Sum256([]byte(d.seed + "\x00" + info))
	return h[:n], nil
}

// The ledger holds keyed node ids: a gate keys with its signer's derived
// secret, or the insecure key without one; the same node keeps one id
// across a restart, so its releases compose; and the value keeps the
// wire's ids.
func TestGateKeysNodeIDs(t *testing.T) {
	ctx := context.Background()
	emb := func(ids ...int64) privacy.Request {
		rows := make([][]float32, len(ids))
		for i := range rows {
			rows[i] = []float32{1, float32(i)}
		}
		return privacy.Request{Channel: privacy.ChannelEmb, Round: 1, Rows: rows, NodeIDs: ids, Sigma: 0.5}
	}
	secret, err := privacy.DeriveNodeKey(seedDeriver{jobSigner("bank-a"), "s"}, compJob)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		cfg    privacy.Config
		key    []byte
		secret bool
	}{
		{"signer's secret", privacy.Config{Signer: seedDeriver{jobSigner("bank-a"), "s"}}, secret, true},
		{"given key", privacy.Config{NodeKey: []byte("a key of the bank's")}, []byte("a key of the bank's"), true},
		{"no keys", privacy.Config{}, privacy.InsecureNodeKey(compJob, "bank-a"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := privacy.NewMemLedger()
			cfg := tc.cfg
			cfg.Job, cfg.Client, cfg.Delta = compJob, "bank-a", 1e-5
			open := func() *privacy.Gate {
				g, err := privacy.NewGate(ctx, cfg, l, func() time.Time { return time.Unix(1, 0) })
				if err != nil {
					t.Fatal(err)
				}
				return g
			}
			g := open()
			if g.NodeIDsSecret() != tc.secret {
				t.Fatalf("secret %v, want %v", g.NodeIDsSecret(), tc.secret)
			}
			r, err := g.Release(ctx, emb(11, 12))
			if err != nil {
				t.Fatal(err)
			}
			want := []int64{privacy.KeyedNodeID(tc.key, 11), privacy.KeyedNodeID(tc.key, 12)}
			if !slices.Equal(r.NodeIDs(), []int64{11, 12}) || !slices.Equal(r.Entry().NodeIDs, want) {
				t.Fatalf("value ids %v, entry ids %v; want the wire's and %v", r.NodeIDs(), r.Entry().NodeIDs, want)
			}
			part, err := r.Select([]int{1})
			if err != nil || !slices.Equal(part.NodeIDs(), []int64{12}) || !slices.Equal(part.Entry().NodeIDs, want[1:]) {
				t.Fatalf("selection: %v, %v, %v", part.NodeIDs(), part.Entry().NodeIDs, err)
			}
			// A restarted gate: node 12 is the same node in the ledger.
			g = open()
			if _, err := g.Release(ctx, privacy.Request{Channel: privacy.ChannelEmb, Round: 2, Rows: [][]float32{{0, 1}}, NodeIDs: []int64{12}, Sigma: 0.5}); err != nil {
				t.Fatal(err)
			}
			if sp := g.Spent(1); sp.WorstNodeReleases != 2 || sp.WorstNodeID != want[1] {
				t.Fatalf("after a restart node 12 has %d releases under id %d, want 2 under %d", sp.WorstNodeReleases, sp.WorstNodeID, want[1])
			}
		})
	}
	// The same bank derives another key for another job.
	other, _ := privacy.DeriveNodeKey(seedDeriver{jobSigner("bank-a"), "s"}, "job-other")
	if bytes.Equal(other, secret) {
		t.Error("one node-id key for two jobs")
	}
}

// Per-node ε groups releases by node; keyed ids group them as the raw
// ids do, so every per-node figure of the audit is unchanged.
func TestKeyedIDsChangeNoNodeEpsilon(t *testing.T) {
	key := []byte("k")
	var raw, keyed []privacy.Entry
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for r := uint64(1); r <= 4; r++ {
		ids := []int64{1, 2, 3, int64(10 + r)}
		e := privacy.Entry{Seq: r, Job: compJob, Client: "bank-a", Channel: privacy.ChannelEmb, Round: r, NodeIDs: ids,
			Count: len(ids), Dim: 4, Sigma: 0.3 + 0.1*float64(r), Clip: 1, Time: at}
		raw = append(raw, e)
		k := e
		k.NodeIDs = nil
		for _, id := range ids {
			k.NodeIDs = append(k.NodeIDs, privacy.KeyedNodeID(key, id))
		}
		keyed = append(keyed, k)
	}
	cal := privacy.Entry{Seq: 5, Job: compJob, Client: "bank-a", Channel: privacy.ChannelCalibration, Round: 4, Time: at,
		Calibration: &privacy.Calibration{K: 1, N: 7, Q: []float64{50, 90}, Rho: []float64{0.1, 0.3}}}
	raw, keyed = append(raw, cal), append(keyed, cal)
	a, err := privacy.Audit(raw, privacy.AuditOptions{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	b, err := privacy.Audit(keyed, privacy.AuditOptions{Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal([]any{a.Nodes, a.Percentiles, a.Rounds})
	jb, _ := json.Marshal([]any{b.Nodes, b.Percentiles, b.Rounds})
	if !bytes.Equal(ja, jb) || a.Nodes != 7 {
		t.Fatalf("per-node figures differ:\n%s\n%s", ja, jb)
	}
}
