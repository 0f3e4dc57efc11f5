package scenarios

import (
	"graphfed/aml/amllearner"
	"graphfed/aml/bank"
	"graphfed/deploy"
)

// AMLData turns a bank's view into the input of its AML learner. It is
// deploy.AMLData, the one conversion the simulation and `graphfed agent
// --task aml` share.
func AMLData(v *bank.View) (amllearner.Data, error) { return deploy.AMLData(v) }
