package deploy

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"graphfed/agent"
	"graphfed/aggregator"
)

// BenchmarkIdleAgentMemory measures what one more agent costs a process
// that holds many (issue 17: 10,000 simulated parties): connected to the
// embedded server (over TCP, or through an in-memory pipe), its ledger and
// gate open, its learner (a 4-feature logistic model on 64 samples, so
// that the figure is the runtime's share, not a dataset's) built, not yet
// running. It reports the live heap per agent after a GC, and the
// goroutines per agent.
func BenchmarkIdleAgentMemory(b *testing.B) {
	for _, inproc := range []bool{false, true} {
		name := map[bool]string{false: "tcp", true: "in-process"}[inproc]
		b.Run(fmt.Sprintf("%s/agents=500", name), func(b *testing.B) {
			const n = 500
			for b.Loop() {
				heap, goroutines := idleAgents(b, n, inproc)
				b.ReportMetric(heap/n, "heap-bytes/agent")
				b.ReportMetric(goroutines/n, "goroutines/agent")
			}
		})
	}
}

func idleAgents(b *testing.B, n int, inproc bool) (heap, goroutines float64) {
	ctx := context.Background()
	ids := testBanks(n)
	l, err := StartLocal(ctx, LocalOptions{Job: "idle", InProcess: inproc})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	agg, err := NewAggregator(ctx, l.AggregatorOptions(AggregatorOptions{Job: "idle", Task: TaskNode,
		Round:    aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: 1, MinClients: n, RoundTimeout: time.Minute},
		InitSeed: 1, Enrol: ids, Log: zerolog.Nop()}))
	if err != nil {
		b.Fatal(err)
	}
	defer agg.Close()
	measure := func() (uint64, int) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc, runtime.NumGoroutine()
	}
	h0, g0 := measure()
	agents := make([]*Agent, 0, n)
	defer func() {
		for _, a := range agents {
			a.Close()
		}
	}()
	for i, id := range ids {
		lr, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: 1, DataSeed: uint64(i)})
		if err != nil {
			b.Fatal(err)
		}
		a, err := NewAgent(ctx, l.AgentOptions(AgentOptions{Job: "idle", ID: id, Task: TaskNode, Algo: aggregator.AlgoFedAvg,
			Privacy: DefaultPrivacy(), Learner: lr, Log: zerolog.Nop()}))
		if err != nil {
			b.Fatal(err)
		}
		agents = append(agents, a)
	}
	h1, g1 := measure()
	return float64(h1) - float64(h0), float64(g1 - g0)
}
