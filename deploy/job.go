package deploy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"graphfed/aggregator"
	"graphfed/learner"
	"graphfed/privacy"
)

// JobOptions are a whole job on one machine: its NATS environment, its
// aggregator and one agent per organisation. This is what `graphfed sim`
// and the scenarios run: the same parties a deployment builds, on an
// embedded server (plain or Secure) or an external one.
type JobOptions struct {
	// Local is the environment; its Job is the job's and its Banks are
	// filled in from the agents' ids.
	Local LocalOptions
	// Durable makes the aggregator checkpoint to JetStream and read updates
	// from the job's update stream, and the agents publish their updates
	// there.
	Durable bool
	// Aggregator and Agents are the parties; Job, Conn, Keyring and
	// Durable are filled in from the environment (Task and Algo too, from
	// Aggregator, on the agents).
	Aggregator AggregatorOptions
	Agents     []AgentOptions
}

// Job is a job's parties, built and connected, not yet running.
type Job struct {
	local  *Local
	agg    *Aggregator
	agents []*Agent
}

// StartJob starts the environment and builds the aggregator and every
// agent in it. Close releases them.
func StartJob(ctx context.Context, o JobOptions) (_ *Job, err error) {
	if len(o.Agents) == 0 {
		return nil, errors.New("deploy: job: no agents")
	}
	job := o.Local.Job
	o.Local.Banks = nil
	for _, a := range o.Agents {
		o.Local.Banks = append(o.Local.Banks, a.ID)
	}
	j := &Job{}
	defer func() {
		if err != nil {
			j.Close()
		}
	}()
	o.Local.SecAgg = o.Local.SecAgg || o.Aggregator.Round.SecAgg.On
	if j.local, err = StartLocal(ctx, o.Local); err != nil {
		return nil, err
	}
	ao := j.local.AggregatorOptions(o.Aggregator)
	ao.Job, ao.Durable = job, o.Durable
	// Without a server of its own the ledger stream may not exist yet;
	// the aggregator is the party allowed to define it.
	ao.CreateLedger = ao.CreateLedger || o.Local.URL != ""
	if j.agg, err = NewAggregator(ctx, ao); err != nil {
		return nil, err
	}
	start := time.Now()
	for i, a := range o.Agents {
		a = j.local.AgentOptions(a)
		a.Job, a.Task, a.Algo, a.Durable, a.SecAgg = job, ao.Task, ao.Round.Algo, o.Durable, ao.Round.SecAgg.On
		ag, err := NewAgent(ctx, a)
		if err != nil {
			return nil, err
		}
		j.agents = append(j.agents, ag)
		if n := i + 1; n%1000 == 0 {
			ao.Log.Info().Int("agents", n).Int("of", len(o.Agents)).Dur("took", time.Since(start)).Msg("agents started")
		}
	}
	// The job's contract, fixed before any hello: every party's learner and
	// gate are built here, on the aggregator's side.
	c, ok := jobContract(ao.Round.Contract, j.agents)
	if !ok {
		ao.Log.Warn().Str("job", job).Msg("the agents' learners disagree on the model schema: the aggregator adopts the first hello's")
	} else if err := j.agg.Server().FixContract(c); err != nil {
		return nil, fmt.Errorf("deploy: job %s: %w", job, err)
	}
	return j, nil
}

// jobContract is base with the schema the agents' learners agree on, the
// largest clip and noise of their gates (bounding every update's norm) and
// whether they share gradient estimators (unless base says); false when
// the learners disagree on the schema.
func jobContract(base aggregator.Contract, agents []*Agent) (aggregator.Contract, bool) {
	c := base
	for i, a := range agents {
		h, n := a.learner.SchemaHash(), a.learner.NumParams()
		if i == 0 && !base.Fixed() {
			c.SchemaHash, c.NumParams = h, n
		}
		if h != c.SchemaHash || n != c.NumParams || n < 1 {
			return base, false
		}
		p := a.privacy
		c.Clip, c.Sigma, c.GradSigma = max(c.Clip, p.ModelClip), max(c.Sigma, p.ModelSigma), max(c.GradSigma, p.GradSigma)
		grad := aggregator.GradNone
		if gs, ok := a.learner.(learner.GradSharer); ok && len(gs.Grad()) > 0 {
			grad = aggregator.GradShared
		}
		switch {
		case base.Grad != "":
		case i == 0:
			c.Grad = grad
		case c.Grad != grad:
			c.Grad = "" // the learners disagree: the algorithm decides
		}
	}
	return c, true
}

// Local is the job's environment (URL, keyring, ledger).
func (j *Job) Local() *Local { return j.local }

// Aggregator is the job's aggregator.
func (j *Job) Aggregator() *Aggregator { return j.agg }

// Agents are the job's agents, in the order given.
func (j *Job) Agents() []*Agent { return j.agents }

// Run runs every party until the aggregator is done (RunParties).
func (j *Job) Run(ctx context.Context) (JobResult, error) {
	return RunParties(ctx, j.agg, j.agents)
}

// Ledger reads the job's whole privacy ledger back.
func (j *Job) Ledger(ctx context.Context) ([]privacy.Entry, error) {
	return j.local.LedgerEntries(ctx)
}

// LedgerReading reads and verifies the job's whole privacy ledger, with
// what was skipped and when each entry was stored.
func (j *Job) LedgerReading(ctx context.Context) (privacy.Reading, error) {
	return j.local.LedgerReading(ctx)
}

// Progress is a running job's traffic and privacy spending.
type Progress struct {
	Messages, Bytes int64 // published by every party so far
	// ClientEpsilon is the largest ε of a client's model and gradient
	// releases composed; NodeEpsilonP90 the ε of the node with the most
	// embedding releases, over every bank, evaluated at its bank's latest
	// 90th-percentile metric distance ρ (0 before the first calibration).
	// Both at the job's δ. It is a worst node, not a percentile over
	// nodes (the summary's p90 is that), and ρ is re-measured as the
	// embeddings move, so it may pass a target the gate enforced at the ρ
	// measured when each release was made.
	ClientEpsilon, NodeEpsilonP90 float64
}

// Progress sums the parties' traffic and the agents' gates' spending; it
// may be called while the job runs (from the aggregator's OnRound).
func (j *Job) Progress() Progress {
	var p Progress
	if j.agg != nil {
		p.Messages, p.Bytes = j.agg.Transport().Stats()
	}
	for _, a := range j.agents {
		m, b := a.Transport().Stats()
		p.Messages += m
		p.Bytes += b
		g := a.Gate()
		rho, ok := g.RhoAt(90)
		if !ok {
			rho = math.NaN()
		}
		sp := g.Spent(rho)
		p.ClientEpsilon = max(p.ClientEpsilon, sp.Client)
		if ok {
			p.NodeEpsilonP90 = max(p.NodeEpsilonP90, sp.WorstNode)
		}
	}
	return p
}

// Close releases every party and stops the environment.
func (j *Job) Close() error {
	var errs []error
	for _, a := range j.agents {
		errs = append(errs, a.Close())
	}
	if j.agg != nil {
		errs = append(errs, j.agg.Close())
	}
	if j.local != nil {
		errs = append(errs, j.local.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deploy: job: close: %w", err)
	}
	return nil
}

// ClientID names client i of a simulated job.
func ClientID(i int) string { return fmt.Sprintf("client-%d", i) }
