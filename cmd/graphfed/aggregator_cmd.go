package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"graphfed/aggregator"
	"graphfed/bus"
)

// aggregatorFile is the --config file: JSON with the same names as the flags.
type aggregatorFile struct {
	Algo         string   `json:"algo"`
	Rounds       int      `json:"rounds"`
	MinClients   int      `json:"min_clients"`
	Quorum       int      `json:"quorum"`
	RoundTimeout string   `json:"round_timeout"`
	Staleness    string   `json:"staleness"`
	StaleFactor  float64  `json:"stale_factor"`
	StaleA       float64  `json:"stale_a"`
	Seed         uint64   `json:"seed"`
	Clients      []string `json:"clients"`
}

func newAggregatorCmd(g *globalFlags) *cobra.Command {
	var (
		natsURL, job, cfgFile, creds, keyring string
		fc                                    aggregatorFile
		timeout                               time.Duration
		rec                                   recoveryFlags
	)
	cmd := &cobra.Command{
		Use:   "aggregator --nats URL --job ID [--config FILE]",
		Short: "Run a job's aggregator against a NATS server",
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			if cfgFile != "" {
				if err := mergeAggregatorFile(cmd, cfgFile, &fc, &timeout); err != nil {
					return err
				}
			}
			nc, err := bus.Connect(natsURL, bus.ConnectOptions{Name: "aggregator-" + job, Creds: creds})
			if err != nil {
				return fmt.Errorf("aggregator: %w", err)
			}
			tr := bus.NewNATSTransport(nc, true)
			defer tr.Close()
			ring, signer, err := loadSigning(job, bus.AggregatorID, keyring, creds)
			if err != nil {
				return fmt.Errorf("aggregator: %w", err)
			}
			store, updates, err := rec.open(cmd.Context(), nc, job)
			if err != nil {
				return fmt.Errorf("aggregator: %w", err)
			}
			var enrol map[string]bool
			if len(fc.Clients) > 0 {
				enrol = map[string]bool{}
				for _, c := range fc.Clients {
					enrol[c] = true
				}
			}
			p := newProgress("aggregator "+job, fc.Rounds)
			srv, err := aggregator.NewServer(aggregator.ServerConfig{
				Job: job, InitSeed: fc.Seed, Log: g.logger(), Enrol: enrol,
				Round: aggregator.Config{Algo: fc.Algo, Rounds: fc.Rounds, MinClients: fc.MinClients, Quorum: fc.Quorum,
					RoundTimeout: timeout, Staleness: aggregator.Staleness{Policy: fc.Staleness, Factor: fc.StaleFactor, A: fc.StaleA}},
				OnRound: func(rc aggregator.RoundClosed) {
					p.update(int(rc.Round), fmt.Sprintf("%s in=%d late=%d", rc.Reason, len(rc.In), len(rc.Late)))
				},
				Store: store, Updates: updates, Reannounce: rec.reannounce, Keyring: ring, Signer: signer,
			}, tr)
			if err != nil {
				return err
			}
			res, err := srv.Run(cmd.Context())
			p.finish()
			if err != nil {
				return err
			}
			acc, n := meanScore(res.Final, "test_acc")
			f1, _ := meanScore(res.Final, "test_macro_f1")
			deadline := 0
			for _, c := range res.Closes {
				if c.Reason == "deadline" {
					deadline++
				}
			}
			msgs, bytes := tr.Stats()
			return g.emit(Report{
				Command: "aggregator", Algo: fc.Algo, Clients: n, Rounds: int(res.Rounds), Seed: int64(fc.Seed),
				Metrics: map[string]any{"test_acc": acc, "test_macro_f1": f1, "clients_reporting": n,
					"rounds_closed_at_deadline": deadline, "rejects": res.Rejects, "dropped": res.Dropped,
					"model_sha256": aggregator.ModelDigest(res.Model), "resumed": res.Resumed, "resumed_round": res.ResumedRound},
				Comm: &CommReport{Bytes: bytes, Messages: msgs},
			}, start)
		},
	}
	f := cmd.Flags()
	f.StringVar(&natsURL, "nats", "nats://127.0.0.1:4222", "NATS server or cluster URL")
	f.StringVar(&job, "job", "", "job id ([a-z0-9-]{1,64})")
	f.StringVar(&cfgFile, "config", "", "JSON file with the settings below (flags given explicitly win)")
	f.StringVar(&creds, "creds", "", "NATS credentials file; an NKey seed (from graphfed keys) also signs every envelope sent")
	f.StringVar(&keyring, "keyring", "", "keyring.json of the job (graphfed keys): verify every envelope's signature")
	rec.register(cmd)
	f.StringVar(&fc.Algo, "algo", "fedavg", "fedavg or local")
	f.IntVar(&fc.Rounds, "rounds", 100, "rounds")
	f.IntVar(&fc.MinClients, "min-clients", 1, "clients that must join before round 1")
	f.IntVar(&fc.Quorum, "quorum", 0, "updates that close a round; 0: every live client")
	f.DurationVar(&timeout, "round-timeout", 30*time.Second, "round deadline")
	f.StringVar(&fc.Staleness, "staleness", "drop", "late updates: drop, constant or polynomial")
	f.Float64Var(&fc.StaleFactor, "stale-factor", 0.5, "constant staleness weight")
	f.Float64Var(&fc.StaleA, "stale-a", 0.5, "polynomial staleness exponent")
	f.Uint64Var(&fc.Seed, "seed", 1, "shared model initialisation seed")
	f.StringSliceVar(&fc.Clients, "clients", nil, "client ids allowed to join (default: any)")
	cmd.MarkFlagRequired("job")
	return cmd
}

func mergeAggregatorFile(cmd *cobra.Command, path string, fc *aggregatorFile, timeout *time.Duration) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("aggregator: config: %w", err)
	}
	var file aggregatorFile
	if err := json.Unmarshal(b, &file); err != nil {
		return fmt.Errorf("aggregator: config %s: %w", path, err)
	}
	set := func(name string, apply func()) {
		if !cmd.Flags().Changed(name) {
			apply()
		}
	}
	if file.Algo != "" {
		set("algo", func() { fc.Algo = file.Algo })
	}
	if file.Rounds != 0 {
		set("rounds", func() { fc.Rounds = file.Rounds })
	}
	if file.MinClients != 0 {
		set("min-clients", func() { fc.MinClients = file.MinClients })
	}
	if file.Quorum != 0 {
		set("quorum", func() { fc.Quorum = file.Quorum })
	}
	if file.Staleness != "" {
		set("staleness", func() { fc.Staleness = file.Staleness })
	}
	if file.StaleFactor != 0 {
		set("stale-factor", func() { fc.StaleFactor = file.StaleFactor })
	}
	if file.StaleA != 0 {
		set("stale-a", func() { fc.StaleA = file.StaleA })
	}
	if file.Seed != 0 {
		set("seed", func() { fc.Seed = file.Seed })
	}
	if len(file.Clients) > 0 {
		set("clients", func() { fc.Clients = file.Clients })
	}
	if file.RoundTimeout != "" {
		d, err := time.ParseDuration(file.RoundTimeout)
		if err != nil {
			return fmt.Errorf("aggregator: config %s: round_timeout: %w", path, err)
		}
		set("round-timeout", func() { *timeout = d })
	}
	return nil
}

// recoveryFlags make the aggregator durable: its state in the job's
// JetStream KV bucket and object store, its updates from the job's update
// stream (docs/DEPLOY.md, "Surviving crashes").
type recoveryFlags struct {
	durable    bool
	replicas   int
	ackWait    time.Duration
	reannounce time.Duration
}

func (r *recoveryFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&r.durable, "durable", false, "checkpoint to JetStream and read updates from the job's update stream; a restart resumes the job (agents need --durable too)")
	f.IntVar(&r.replicas, "replicas", 1, "replicas of the update stream, checkpoint bucket and model store when created (3 on a 3-node cluster)")
	f.DurationVar(&r.ackWait, "ack-wait", bus.DefaultUpdateAckWait, "redelivery delay of an update a killed aggregator had not acknowledged")
	f.DurationVar(&r.reannounce, "reannounce", 5*time.Second, "with --durable: announce the open round again after this long without news (0: never)")
}

// open returns the checkpoint store and the update log, both nil without
// --durable.
func (r *recoveryFlags) open(ctx context.Context, nc *nats.Conn, job string) (aggregator.Store, aggregator.UpdateLog, error) {
	if !r.durable {
		r.reannounce = 0
		return nil, nil, nil
	}
	store, err := bus.OpenCheckpointStore(ctx, nc, job, bus.CheckpointStoreOptions{Replicas: r.replicas})
	if err != nil {
		return nil, nil, err
	}
	updates, err := bus.OpenUpdateLog(ctx, nc, job, bus.UpdateLogOptions{Replicas: r.replicas, AckWait: r.ackWait})
	if err != nil {
		return nil, nil, err
	}
	return store, updates, nil
}

// loadSigning reads the job's keyring (--keyring) and the party's signer
// (an NKey seed given as --creds); either may be absent.
func loadSigning(job, party, keyringPath, creds string) (*bus.Keyring, *bus.Signer, error) {
	var ring *bus.Keyring
	if keyringPath != "" {
		var err error
		if ring, err = bus.LoadKeyring(keyringPath); err != nil {
			return nil, nil, err
		}
		if ring.Job() != job {
			return nil, nil, fmt.Errorf("keyring %s is job %s's, not %s's", keyringPath, ring.Job(), job)
		}
	}
	signer, err := bus.CredsSigner(party, creds)
	if err != nil {
		return nil, nil, err
	}
	return ring, signer, nil
}
