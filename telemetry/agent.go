package telemetry

import (
	"strconv"
	"time"

	"graphfed/agent"
)

// AgentRecorder records one agent's updates, embedding releases, training
// time and budget refusals from the steps of its machine; it is the
// agent's agent.Observer.
type AgentRecorder struct {
	m     *Metrics
	party string
}

// Agent returns the recorder of the agent of client id party.
func (m *Metrics) Agent(party string) *AgentRecorder { return &AgentRecorder{m: m, party: party} }

// Stepped implements agent.Observer.
func (r *AgentRecorder) Stepped(_ agent.MachineEvent, acts []agent.MachineAction, took time.Duration) {
	m := r.m
	trained := false
	for _, a := range acts {
		switch x := a.(type) {
		case agent.PublishUpdate:
			trained = true
			m.updatesSent.WithLabelValues(r.party, strconv.FormatBool(x.Update.Withheld)).Inc()
		case agent.PublishEmbeddings:
			m.embSent.WithLabelValues(r.party).Inc()
		case agent.BudgetSpent:
			m.budgetRefused.WithLabelValues(r.party, string(x.Channel)).Inc()
		}
	}
	if trained {
		m.stepTime.WithLabelValues(r.party).Observe(took.Seconds())
	}
}
