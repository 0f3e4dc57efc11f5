// Package learner is the contract between the agent's core and what a
// client learns: the Learner interface (a flat parameter vector, local
// training and evaluation) and the optional capabilities the core finds by
// type assertion (exchange.go, capabilities.go), so that a learner
// implements only what its algorithm needs. It imports nothing, so that
// every learner package (learner/node, cefedgnn, lpsfed, fedgsp,
// aml/amllearner) can name the interfaces it satisfies without importing
// the agent, and the agent (package agent: the machine, its driver and the
// wire) imports no learner.
package learner
