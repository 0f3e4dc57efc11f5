package deploy

import (
	"fmt"
	"slices"
	"strings"

	"graphfed/aggregator"
)

// Tasks a job can run.
const (
	TaskNode = "node" // node classification (Cora-like graphs, CSBM)
	TaskAML  = "aml"  // anti-money-laundering transaction classification, one bank per agent
	TaskRec  = "rec"  // recommendation (LPSFed, LightGCN layout)
)

// Algorithms returns the algorithms task runs, in the order a usage line
// lists them, or nil for an unknown task.
func Algorithms(task string) []string {
	switch task {
	case TaskNode:
		return []string{aggregator.AlgoLocal, aggregator.AlgoFedAvg, aggregator.AlgoFedGNNST, aggregator.AlgoCEFedGNN,
			aggregator.AlgoFedProx, aggregator.AlgoFedPer, aggregator.AlgoFedGSP}
	case TaskAML:
		return []string{aggregator.AlgoLocal, aggregator.AlgoFedAvg, aggregator.AlgoFedGNNST, aggregator.AlgoCEFedGNN}
	case TaskRec:
		return []string{aggregator.AlgoFedAvg, aggregator.AlgoLPSFedBPR, aggregator.AlgoLPSFed}
	}
	return nil
}

// Tasks lists the known tasks.
func Tasks() []string { return []string{TaskNode, TaskAML, TaskRec} }

// CheckTaskAlgo reports whether task runs algo, with an error that names
// what would work instead.
func CheckTaskAlgo(task, algo string) error {
	algos := Algorithms(task)
	if algos == nil {
		return fmt.Errorf("deploy: unknown task %q (want %s)", task, strings.Join(Tasks(), ", "))
	}
	for _, a := range algos {
		if a == algo {
			return nil
		}
	}
	var others []string
	for _, t := range Tasks() {
		for _, a := range Algorithms(t) {
			if a == algo {
				others = append(others, t)
			}
		}
	}
	msg := fmt.Sprintf("deploy: task %s has no algorithm %q (want %s)", task, algo, strings.Join(algos, ", "))
	if len(others) > 0 {
		msg += fmt.Sprintf("; %s is an algorithm of task %s", algo, strings.Join(others, ", "))
	}
	return fmt.Errorf("%s", msg)
}

// TSVAlgorithms lists the algorithms an agent runs from a TSV client
// directory (graphfed partition), which records no cross-client edges:
// the node algorithms that exchange no embeddings.
func TSVAlgorithms() []string {
	return slices.DeleteFunc(Algorithms(TaskNode), ExchangesEmbeddings)
}

// ExchangesEmbeddings reports whether algo's agents release boundary
// embeddings to their neighbours. This is where "no exchange" is decided:
// by the algorithm, never by a negative σ0.
func ExchangesEmbeddings(algo string) bool {
	return algo == aggregator.AlgoCEFedGNN || algo == aggregator.AlgoFedGNNST
}

// FedGSPLocalEpochs is FedGSP's local epochs per round when none are
// given: the authors' protocol takes one full-batch step a round, and the
// presets were tuned at it. More steps move the locally updated model, the
// one the protocol scores, further from the personalised model: on actor
// (10 METIS clients, separate agent processes) agents left at the general
// default of 5 scored 28.0 and 29.0 at the best validation round, and
// 30.2 at one (sim: 30.6).
const FedGSPLocalEpochs = 1

// DefaultLocalEpochs is the local epochs per round of a job of algo whose
// operator gave none: FedGSPLocalEpochs under fedgsp, fallback otherwise
// (the task's own default, which the caller knows).
func DefaultLocalEpochs(algo string, fallback int) int {
	if algo == aggregator.AlgoFedGSP {
		return FedGSPLocalEpochs
	}
	return fallback
}
