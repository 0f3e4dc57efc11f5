// Package scenarios runs whole federated jobs: the in-process simulation
// harness behind `graphfed sim` (aggregator and agents on one bus), the AML
// world generator (subpackage amlworld), and later the fault-injection
// scenarios and their reports.
package scenarios
