package scenarios

import (
	"graphfed/agent"
	"graphfed/deploy"
	"graphfed/workload/aml"
)

// AMLData turns a bank's view into the input of its AML learner. It is
// deploy.AMLData, the one conversion the simulation and `graphfed agent
// --task aml` share.
func AMLData(v *aml.BankView) (agent.AMLData, error) { return deploy.AMLData(v) }
