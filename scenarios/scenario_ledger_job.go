package scenarios

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"graphfed/agent"
	"graphfed/aggregator"
	"graphfed/bus"
	"graphfed/deploy"
	"graphfed/privacy"
	"graphfed/seeds"
)

// The ledger scenarios run a small secure job: an embedded server started
// from the configuration `graphfed keys` writes, every party on its own
// key, every ledger entry signed. Then one bank attacks the ledger with
// its own credentials, and the scenario restarts agents and audits as the
// auditor does.

// InvLedgerBlocked: a reader (an agent restart or the audit) failed
// because of what the ledger holds.
const InvLedgerBlocked = "ledger-blocked"

// InvTamperUnseen: a record the attacker stored or altered was not
// reported by the reader.
const InvTamperUnseen = "tamper-unseen"

// InvBudgetLost: a restarted agent's budget differs from its spending
// before the attack.
const InvBudgetLost = "budget-lost"

const (
	ledgerBanks  = 3
	ledgerRounds = 3
)

// ledgerJob is a finished secure job whose environment is still up.
type ledgerJob struct {
	job    *deploy.Job
	agents []deploy.AgentOptions // as given to StartJob, to restart them
	spent  []float64             // each bank's composed ε at the end of the run
}

// runLedgerJob starts a secure job named job and runs it to completion.
// The caller closes it.
func runLedgerJob(ctx context.Context, job string, o ScenarioOptions) (*ledgerJob, error) {
	return runLedgerJobWith(ctx, job, o, false)
}

// runLedgerJobWith is runLedgerJob, durable if told: the aggregator's
// update stream, checkpoint bucket and model store then exist too.
func runLedgerJobWith(ctx context.Context, job string, o ScenarioOptions, durable bool) (*ledgerJob, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	jo := deploy.JobOptions{Local: deploy.LocalOptions{Job: job, Secure: true}, Durable: durable,
		Aggregator: deploy.AggregatorOptions{Task: deploy.TaskNode, InitSeed: o.Seed, FinalWait: 200 * time.Millisecond,
			Log: o.Log, Round: aggregator.Config{Algo: aggregator.AlgoFedAvg, Rounds: ledgerRounds, MinClients: ledgerBanks,
				Quorum: ledgerBanks, RoundTimeout: time.Minute}}}
	for i := range ledgerBanks {
		l, err := agent.NewLogisticLearner(agent.LogisticConfig{Dim: 4, Samples: 64, TaskSeed: o.Seed, DataSeed: seeds.Party(o.Seed, i, seeds.Sampler)})
		if err != nil {
			return nil, err
		}
		jo.Agents = append(jo.Agents, deploy.AgentOptions{ID: deploy.ClientID(i), Learner: l, LocalEpochs: 1,
			Privacy: logisticPrivacy(o.Seed, i), Log: o.Log})
	}
	j, err := deploy.StartJob(ctx, jo)
	if err != nil {
		return nil, err
	}
	lj := &ledgerJob{job: j, agents: jo.Agents}
	if _, err := j.Run(ctx); err != nil {
		j.Close()
		return nil, fmt.Errorf("running the job: %w", err)
	}
	for _, a := range j.Agents() {
		lj.spent = append(lj.spent, a.Gate().Spent(1).Client)
	}
	return lj, nil
}

// restartAgent builds bank i again on the job's environment, as a
// restarted `graphfed agent` does: it reads and verifies the ledger and
// rebuilds its gate from its own chain. The caller closes it.
func (lj *ledgerJob) restartAgent(ctx context.Context, i int) (*deploy.Agent, error) {
	a := lj.job.Local().AgentOptions(lj.agents[i])
	a.Job, a.Task, a.Algo = lj.job.Local().Job(), deploy.TaskNode, aggregator.AlgoFedAvg
	return deploy.NewAgent(ctx, a)
}

// bankConn connects as party id with its own key, recording the server's
// permission violations.
func (lj *ledgerJob) bankConn(id string) (*nats.Conn, *violations, error) {
	v := &violations{}
	l := lj.job.Local()
	nc, err := bus.Connect(l.URL(), bus.ConnectOptions{Name: "attacker-" + id, Creds: l.Creds(id), OnError: v.add})
	if err != nil {
		return nil, nil, err
	}
	return nc, v, nil
}

// audit reads the job's ledger as `graphfed audit --nats --job --keyring`
// does and returns the report.
func (lj *ledgerJob) audit(ctx context.Context) (privacy.Report, error) {
	rd, err := lj.job.Local().LedgerReading(ctx)
	if err != nil {
		return privacy.Report{}, err
	}
	return privacy.AuditReading(rd, privacy.AuditOptions{Delta: deploy.DefaultDelta, Job: lj.job.Local().Job()})
}

// violations collects a connection's asynchronous errors.
type violations struct {
	mu   sync.Mutex
	errs []string
}

func (v *violations) add(err error) {
	v.mu.Lock()
	v.errs = append(v.errs, err.Error())
	v.mu.Unlock()
}

func (v *violations) list() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.errs...)
}

// signedEntry re-seals e as client's signed chain successor of prev (a
// hex digest; "" for none) with signer s (nil: unsigned).
func signedEntry(e privacy.Entry, prev string, s *bus.Signer) ([]byte, error) {
	e.Prev, e.Sig = prev, nil
	if s != nil {
		d, err := e.Digest()
		if err != nil {
			return nil, err
		}
		if e.Sig, err = s.SignEntry(d[:]); err != nil {
			return nil, err
		}
	}
	return privacy.EncodeEntry(e)
}
