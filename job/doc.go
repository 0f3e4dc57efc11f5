// Package job runs graphfed jobs from a spec: the library behind
// `graphfed sim`, as cockroachdb/pebble's bench package is behind its
// command. A spec says what the job is (task, algorithm, data, learner,
// rounds, privacy) and leaves every default to the library: a zero field
// is "unset" and is resolved here, so a Go caller gets the same job as the
// command line, and the command only binds its flags into the spec and
// prints what comes back.
//
// RunAML is the AML main job (`graphfed sim --scenario aml`, `make demo`):
// a world, generated or an AMLworld file, split into banks, each training
// the edge GNN on its own view, federated under the spec's algorithm.
package job
