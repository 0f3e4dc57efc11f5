// Package scenarios runs whole federated jobs: the in-process simulation
// harness behind `graphfed sim` (aggregator and agents on one bus), the
// conversion of an AML bank's view (aml/bank) into its learner's input,
// and the fault-injection scenarios and their reports.
package scenarios
