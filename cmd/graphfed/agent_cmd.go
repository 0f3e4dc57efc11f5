package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"

	"graphfed/agent"
	"graphfed/bus"
	"graphfed/graph"
	"graphfed/privacy"
)

func newAgentCmd(g *globalFlags) *cobra.Command {
	var (
		natsURL, job, client, data, creds string
		ledgerPath, keyring               string
		priv                              privacyFlags
		epochs                            int
		seed, noiseSeed                   uint64
		durable                           bool
	)
	node := agent.DefaultNodeConfig()
	cmd := &cobra.Command{
		Use:   "agent --nats URL --job ID --client ID --data PATH",
		Short: "Run one organisation's agent against a NATS server",
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			log := g.logger().With().Str("client", client).Logger()
			d, err := graph.LoadTSV(data)
			if err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			node.Seed = seed
			l, err := agent.NewNodeLearner(d, node)
			if err != nil {
				return err
			}
			nc, err := bus.Connect(natsURL, bus.ConnectOptions{Name: "agent-" + client, Creds: creds})
			if err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			tr := bus.NewNATSTransport(nc, true)
			defer tr.Close()
			ring, signer, err := loadSigning(job, client, keyring, creds)
			if err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			var noise *uint64
			if cmd.Flags().Changed("noise-seed") {
				noise = &noiseSeed
			}
			gate, closeLedger, err := agentGate(cmd, tr, job, client, ledgerPath, priv, noise)
			if err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			defer closeLedger()
			var out bus.Transport = tr
			if durable {
				if out, err = bus.NewDurableTransport(tr, job); err != nil {
					return fmt.Errorf("agent: %w", err)
				}
			}
			a, err := agent.New(agent.Config{Job: job, Client: client, LocalEpochs: epochs, Log: log,
				ModelSigma: priv.modelSigma, ModelClip: priv.modelClip, Keyring: ring, Signer: signer}, out, l, gate)
			if err != nil {
				return err
			}
			res, err := a.Run(cmd.Context())
			if err != nil {
				return err
			}
			msgs, bytes := tr.Stats()
			m := map[string]any{"rounds_trained": res.Rounds, "rejects": res.Rejects}
			sp := gate.Spent(math.NaN())
			for k, v := range res.Final {
				m[k] = v
			}
			return g.emit(Report{Command: "agent", Dataset: data, Clients: 1, Rounds: res.Rounds, Seed: int64(seed),
				Metrics: m, Comm: &CommReport{Bytes: bytes, Messages: msgs},
				Privacy: map[string]any{"delta": sp.Delta, "epsilon_client": sp.Client, "accountant": priv.accountant}}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&natsURL, "nats", "nats://127.0.0.1:4222", "NATS server or cluster URL")
	f.StringVar(&job, "job", "", "job id")
	f.StringVar(&client, "client", "", "this organisation's client id ([a-z0-9-]{1,64})")
	f.StringVar(&data, "data", "", "the client's local dataset (TSV layout directory)")
	f.StringVar(&creds, "creds", "", "NATS credentials file; an NKey seed (from graphfed keys) also signs every envelope sent")
	f.StringVar(&keyring, "keyring", "", "keyring.json of the job (graphfed keys): verify every envelope's signature")
	f.BoolVar(&durable, "durable", false, "store updates in the job's JetStream update stream (for an aggregator run with --durable)")
	f.Uint64Var(&noiseSeed, "noise-seed", 0, "seed the privacy noise: reproducible runs for testing only, marked non-private in the ledger")
	f.StringVar(&ledgerPath, "ledger", "", "privacy ledger file (fsynced); default: the job's JetStream ledger stream")
	priv.register(cmd)
	f.IntVar(&epochs, "local-epochs", 5, "local epochs per round")
	f.Uint64Var(&seed, "seed", 1, "local randomness seed (dropout)")
	f.StringVar(&node.Model, "model", node.Model, "gcn or sage")
	f.IntVar(&node.Hidden, "hidden", node.Hidden, "hidden units")
	f.Float64Var(&node.LR, "lr", node.LR, "Adam learning rate")
	f.Float64Var(&node.WeightDecay, "weight-decay", node.WeightDecay, "L2 weight decay")
	f.Float64Var(&node.Dropout, "dropout", node.Dropout, "dropout probability")
	for _, n := range []string{"job", "client", "data"} {
		cmd.MarkFlagRequired(n)
	}
	return cmd
}

// agentGate opens the agent's privacy ledger (a file with --ledger, the
// job's JetStream stream otherwise) and its gate. Agent noise comes from
// crypto/rand unless --noise-seed is given, which reproducibility tests do
// and which marks every ledger entry non-private.
func agentGate(cmd *cobra.Command, tr *bus.NATSTransport, job, client, path string, p privacyFlags, noise *uint64) (*privacy.Gate, func(), error) {
	kind, err := privacy.ParseAccountantKind(p.accountant)
	if err != nil {
		return nil, nil, err
	}
	var (
		ledger  privacy.Ledger
		closeFn = func() {}
	)
	ctx := cmd.Context()
	if path != "" {
		fl, err := privacy.OpenFileLedger(path)
		if err != nil {
			return nil, nil, err
		}
		ledger, closeFn = fl, func() { fl.Close() }
	} else {
		// A release waits out a cluster's leader election (4 to 9 s on
		// nats-server after a node dies) rather than failing the agent.
		ledger, err = bus.OpenJetStreamLedger(ctx, tr.Conn(), job, bus.JSLedgerOptions{Timeout: bus.DefaultJSTimeout})
		if err != nil {
			return nil, nil, err
		}
	}
	gate, err := privacy.NewGate(context.WithoutCancel(ctx), privacy.Config{Job: job, Client: client, Delta: p.delta,
		Budget: privacy.Budget{Epsilon: p.budgetEps}, Accountant: kind, Seed: noise}, ledger, nil)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return gate, closeFn, nil
}
