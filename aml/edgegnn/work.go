package edgegnn

import (
	"fmt"
	"math/rand/v2"
	"runtime"

	"graphfed/gnn"
)

// Workers is a pool of edge-model work buffers shared by every model
// of a process, and the semaphore that bounds how many of them exist.
//
// A Model's forward and backward buffers and its Batch are
// scratch: at a 512-seed batch they weigh ~48 MB, against a few hundred KB
// of parameters. A process running eight banks kept eight sets of them
// (388 MB at 5M rows) although only GOMAXPROCS steps can run at a time,
// and each bank's two stages a sampler's scratch sized to its graph (170
// MB). A worker carries both (sampling through Stage.BatchOn).
// A bank now keeps its parameters in its own model and, for each step or
// evaluation batch, acquires a worker: a scratch model bound to those
// parameters (Worker.Model), a batch and a gradient buffer. At most
// Size workers exist; Acquire blocks while all of them are busy, so the
// banks of a process still use every core, and no more memory than that.
//
// Binding shares the parameter tensors (weights and gradients), so a step
// through a worker computes exactly what the bank's own model would: the
// buffers are overwritten before they are read, whoever used them last.
type Workers struct {
	free chan *Worker
}

// Worker is one set of work buffers, held by one caller between
// Workers.Acquire and Release.
type Worker struct {
	Batch   Batch
	Labels  []int32
	DLogits *gnn.Tensor
	model   *Model        // scratch; its Params are the acquirer's
	scratch SampleScratch // Stage.BatchOn's
}

// NewWorkers returns a pool of at most n workers (n ≤ 0: GOMAXPROCS),
// created on first use.
func NewWorkers(n int) *Workers {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	p := &Workers{free: make(chan *Worker, n)}
	for range n {
		p.free <- nil
	}
	return p
}

// Size is the most workers the pool holds.
func (p *Workers) Size() int { return cap(p.free) }

// Acquire waits for a free worker and binds its model to m's parameters:
// its Forward and Backward read m's weights and add into m's gradients.
// The worker is the caller's until Release; m must not be changed in shape
// meanwhile.
func (p *Workers) Acquire(m *Model) *Worker {
	w := <-p.free
	if w == nil {
		w = &Worker{}
	}
	if w.model == nil || w.model.cfg != m.cfg {
		sm, err := NewModel(m.cfg, rand.New(rand.NewPCG(0, 0)))
		if err != nil {
			panic(fmt.Sprintf("gnn: edge workers: config of a built model refused: %v", err))
		}
		w.model = sm
	}
	w.model.bind(m)
	return w
}

// Release returns w to the pool; the caller must not use it, nor anything
// its model returned, afterwards.
func (p *Workers) Release(w *Worker) {
	w.model.forget()
	p.free <- w
}

// Model is the worker's scratch model, bound to the acquirer's parameters.
func (w *Worker) Model() *Model { return w.model }

// bind makes m's parameters src's (same configuration): the Param values
// are copied, so m's layers read src's weight tensors and accumulate into
// its gradient tensors.
func (m *Model) bind(src *Model) {
	if len(m.params) != len(src.params) {
		panic(fmt.Sprintf("gnn: edge model bind: %d parameters for %d", len(src.params), len(m.params)))
	}
	for i, p := range m.params {
		*p = *src.params[i]
	}
}

// forget drops the references of the last Forward to its caller's batch
// and overrides, and to the bound parameters' tensors, so that an idle
// worker keeps no bank's data alive; its own buffers stay for reuse.
func (m *Model) forget() {
	m.b, m.ovs = nil, nil
	for _, l := range m.layers {
		l.b, l.ovs = nil, nil
	}
	m.head.b = nil
	for _, p := range m.params {
		p.W, p.G = nil, nil
	}
}
