package dsim

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/secagg"
)

// The readable trace of a run, in the style of etcd raft's testdata: one
// line per message sent, delivered, refused or lost, per step with what
// it did, per crash, restart, partition and close decision. It is written
// only when asked for (Config.Trace: golden traces, and a failing seed run
// again), so that sweeps pay nothing for it. Everything in it is a
// function of the seed: simulated time, ids in sorted order, no maps
// iterated, floats printed at a fixed precision.

type tracer struct {
	b     *strings.Builder // nil: not tracing
	start time.Time
}

func (t *tracer) on() bool { return t.b != nil }

// line writes one line at simulated time now.
func (t *tracer) line(now time.Time, format string, args ...any) {
	if t.b == nil {
		return
	}
	fmt.Fprintf(t.b, "%10.6f ", now.Sub(t.start).Seconds())
	fmt.Fprintf(t.b, format, args...)
	t.b.WriteByte('\n')
}

// header writes the configuration the trace comes from.
func (t *tracer) header(c Config) {
	if t.b == nil {
		return
	}
	fmt.Fprintf(t.b, "# dsim seed %d: %s, %d agents, %d rounds, min %d, quorum %d, buffer %d, staleness %s, epochs %d, dim %d, samples %d\n",
		c.Seed, c.Algo, c.Agents, c.Rounds, c.MinClients, c.Quorum, c.Buffer, c.Staleness.Policy, c.LocalEpochs, c.Dim, c.Samples)
	f := c.Faults
	fmt.Fprintf(t.b, "# faults: drop %.3f dup %.3f latency %v jitter %v reorder %.3f by %v, %d partitions, %d agent and %d aggregator crashes (mid-step %.2f)\n",
		f.Drop, f.Dup, f.Latency, f.Jitter, f.Reorder, f.ReorderBy, f.Partitions, f.AgentCrashes, f.AggCrashes, f.MidStep)
	if c.SecAgg {
		fmt.Fprintf(t.b, "# secure aggregation: t by default, waits of a round timeout, shares waited for %v\n", c.RoundTimeout/2)
	}
	if len(c.Links) > 0 {
		fmt.Fprintf(t.b, "# links %v, embedding width %d, sigma %.3f\n", c.Links, c.EmbDim, c.EmbSigma)
	}
	if c.Phi > 0 {
		fmt.Fprintf(t.b, "# phi %d, reference every %d rounds, %d frozen rounds\n", c.Phi, c.RefEvery, c.FreezeRounds)
	}
	if c.DescOrders > 0 {
		g := c.FedGSP
		fmt.Fprintf(t.b, "# descriptors K %d kpr %d d %d sigma %.4g; graphs gamma %.3f alpha %.3f beta %.3f for %d rounds, layout %d×%d\n",
			c.DescOrders, c.DescPrincipal, c.DescDim, c.DescSigma, g.Gamma, g.Alpha, g.Beta, g.GraphRounds, g.Orders, g.Dim)
	}
}

// msg describes a message on the wire.
func msgText(m simMsg) string {
	s := fmt.Sprintf("%s->%s %s r%d #%d %dB", m.from, m.to, m.kind, m.round, m.seq, len(m.data))
	if m.flood != "" {
		s += " flood=" + m.flood
	}
	return s
}

// aggActs describes the aggregator's actions.
func aggActs(acts []aggregator.Action) string {
	var parts []string
	for _, a := range acts {
		switch x := a.(type) {
		case aggregator.ReplyJoin:
			if x.Accepted {
				parts = append(parts, fmt.Sprintf("accept %s", x.Client))
			} else {
				parts = append(parts, fmt.Sprintf("refuse %s (%s)", x.Client, x.Reason))
			}
		case aggregator.OpenRound:
			parts = append(parts, fmt.Sprintf("open r%d from model r%d payload %dB", x.Round, x.ModelRound, len(x.Payload)))
		case aggregator.PublishModel:
			to := "all"
			if x.To != "" {
				to = x.To
			}
			s := fmt.Sprintf("model r%d to %s %s", x.Round, to, floats(x.Params))
			if x.HasMargin {
				s += fmt.Sprintf(" margin %.6g", x.Margin)
			}
			parts = append(parts, s)
		case aggregator.RoundClosed:
			s := fmt.Sprintf("close r%d by %s in %v stale %v late %v dead %v weight %.6g", x.Round, x.Reason, x.In, x.Stale, x.Late, x.Dead, x.Weight)
			if x.Frozen {
				s += " frozen"
			}
			if sc := x.SecAgg; sc != nil {
				s += fmt.Sprintf(" secagg n %d t %d b %d survivors %v dropouts %v", sc.Cohort, sc.Threshold, sc.Bits, sc.Survivors, sc.Dropouts)
				if sc.Failure != "" {
					s += fmt.Sprintf(" failed (%s)", sc.Failure)
				}
			}
			switch {
			case x.Mix != nil && x.Mix.Collab != nil:
				s += " collab " + sortedRows(x.Mix.Collab)
			case x.Mix != nil:
				s += " rho_bar " + sortedFloats(x.Mix.RhoBar)
			}
			parts = append(parts, s)
		case aggregator.Dropped:
			parts = append(parts, fmt.Sprintf("drop %s r%d (%s)", x.Client, x.Round, x.Reason))
		case aggregator.Rejected:
			parts = append(parts, fmt.Sprintf("reject %s r%d (%s: %s)", x.Client, x.Round, x.Reason, x.Detail))
		case aggregator.Finished:
			parts = append(parts, fmt.Sprintf("finished after %d rounds", x.Rounds))
		case aggregator.SecAggOut:
			parts = append(parts, secAggText(x.Msg))
		case aggregator.SecAggRefused:
			parts = append(parts, fmt.Sprintf("secagg refused %s's %s r%d (%v)", x.Client, x.Kind, x.Round, x.Err))
		}
	}
	return strings.Join(parts, "; ")
}

// agentActs describes an agent's actions.
func agentActs(acts []agent.MachineAction) string {
	var parts []string
	for _, a := range acts {
		switch x := a.(type) {
		case agent.SendHello:
			parts = append(parts, "hello")
		case agent.Refused:
			parts = append(parts, "refused ("+x.Reason+")")
		case agent.PublishMetrics:
			parts = append(parts, fmt.Sprintf("metrics r%d", x.Metrics.Round))
		case agent.PublishEmbeddings:
			parts = append(parts, fmt.Sprintf("emb r%d to %s nodes %v", x.Embeddings.Round, x.To, x.Embeddings.NodeIDs))
		case agent.PublishUpdate:
			u := x.Update
			s := fmt.Sprintf("update r%d base r%d weight %g params %s", u.Round, u.BaseRound, u.Weight, floats(u.Params.Floats()))
			if u.Withheld {
				s += " withheld"
			}
			if u.Masked {
				s += " masked"
			}
			if u.Grad.Len() > 0 {
				s += " grad " + floats(u.Grad.Floats())
			}
			if u.Rho.Len() > 0 {
				s += fmt.Sprintf(" rho %s v%d", floats(u.Rho.Floats()), u.RhoVersion)
			}
			if u.Margin.Len() > 0 {
				s += " margin " + floats(u.Margin.Floats())
			}
			if u.Descriptors.Len() > 0 {
				s += fmt.Sprintf(" desc %d·%d·4x%d %s", u.DescOrders, u.DescPrincipal, u.DescDim, floats(u.Descriptors.Floats()))
			}
			parts = append(parts, s)
		case agent.BudgetSpent:
			parts = append(parts, fmt.Sprintf("budget spent on %s r%d", x.Channel, x.Round))
		case agent.Note:
			if x.Warn {
				s := "note: " + x.Msg
				if x.Err != nil && strings.HasPrefix(x.Msg, "secure round") {
					s += fmt.Sprintf(" (%v)", x.Err)
				}
				parts = append(parts, s)
			}
		case agent.Finished:
			parts = append(parts, fmt.Sprintf("finished after r%d", x.Round))
		case agent.PublishSecAgg:
			parts = append(parts, secAggText(x.Msg))
		}
	}
	return strings.Join(parts, "; ")
}

func floats(v []float32) string {
	if len(v) == 0 {
		return "[]"
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(' ')
		}
		if i == 4 && len(v) > 5 {
			fmt.Fprintf(&b, "...%d more", len(v)-4)
			break
		}
		fmt.Fprintf(&b, "%.5g", x)
	}
	b.WriteByte(']')
	return b.String()
}

func sortedFloats(m map[string]float64) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := m[k]
		if math.Abs(v) < 1e-12 {
			v = 0 // no "-0"
		}
		fmt.Fprintf(&b, "%s:%.4g", k, v)
	}
	b.WriteByte('}')
	return b.String()
}

// sortedRows prints a graph's rows by client in id order.
func sortedRows(m map[string][]float64) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + ":[")
		for j, v := range m[k] {
			if j > 0 {
				b.WriteByte(' ')
			}
			if math.Abs(v) < 1e-12 {
				v = 0 // no "-0"
			}
			fmt.Fprintf(&b, "%.4g", v)
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}

// WriteTrace runs cfg again with tracing on and writes the trace to
// dir/dsim-<strategy>-seed-<seed>.txt, returning the path. A run is a
// function of its seed, so the trace shows the run that failed.
func WriteTrace(cfg Config, dir string) (string, error) {
	cfg.Trace = true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("dsim: write trace: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("dsim-%s-seed-%d.txt", cfg.Strategy(), cfg.Seed))
	if err := os.WriteFile(path, []byte(res.Text), 0o644); err != nil {
		return "", fmt.Errorf("dsim: write trace: %w", err)
	}
	return path, nil
}

// kindOf is the kind of wire bytes, for the trace of a forged message.
func kindOf(data []byte) (bus.Kind, uint64, uint64) {
	env, err := bus.Open(data)
	if err != nil {
		return "garbage", 0, 0
	}
	return env.Kind, env.Round, env.Seq
}

// secAggText describes a secure-aggregation message by what it decodes
// to, never by its bytes: a sealed share's are not the seed's (HPKE).
func secAggText(msg any) string {
	switch m := msg.(type) {
	case bus.SecAggKeys:
		var ids []string
		for _, a := range m.Ads {
			ids = append(ids, a.Party)
		}
		return fmt.Sprintf("sa keys r%d %v", m.Round, ids)
	case secagg.SignedList:
		return fmt.Sprintf("sa list r%d survivors %v dropouts %v", m.Round, m.Survivors, m.Dropouts)
	case secagg.SignedAdvertisement:
		return fmt.Sprintf("sa adv r%d", m.Round)
	case secagg.SealedShare:
		return fmt.Sprintf("sa share r%d to %s", m.Round, m.To)
	case secagg.MaskedInput:
		return fmt.Sprintf("sa masked r%d peers %v", m.Round, m.Peers)
	case secagg.Reveal:
		var self, mask []string
		for _, p := range m.Self {
			self = append(self, p.Party)
		}
		for _, p := range m.Mask {
			mask = append(mask, p.Party)
		}
		return fmt.Sprintf("sa reveal r%d self %v mask %v", m.Round, self, mask)
	}
	return fmt.Sprintf("sa %T", msg)
}

// secAggInText is a protocol message the aggregator steps with.
func secAggInText(e aggregator.SecAggIn) string {
	kind := "?"
	var round uint64
	switch m := e.Msg.(type) {
	case *secagg.SignedAdvertisement:
		kind, round = "adv", m.Round
	case *secagg.MaskedInput:
		kind, round = "masked", m.Round
	case *secagg.Reveal:
		kind, round = "reveal", m.Round
	}
	return fmt.Sprintf("sa %s %s r%d", kind, e.Client, round)
}
