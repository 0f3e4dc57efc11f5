package agent_test

import (
	"graphfed/agent"
	"graphfed/lpsfed"
)

// LPSFed's learner plugs into the one runtime with every optional
// capability, without importing agent.
var (
	_ agent.AlgoReceiver         = (*lpsfed.Learner)(nil)
	_ agent.HelloCounter         = (*lpsfed.Learner)(nil)
	_ agent.RoundPayloadReceiver = (*lpsfed.Learner)(nil)
	_ agent.MarginReceiver       = (*lpsfed.Learner)(nil)
	_ agent.ScalarReleaser       = (*lpsfed.Learner)(nil)
)
