package main

import (
	"time"

	"github.com/spf13/cobra"

	"graphfed/bus"
	"graphfed/operator"
)

// newKeysCmd is `graphfed keys`: flags into operator.KeysConfig, a
// deployment's credentials, keyring and server configuration, made
// offline on one trusted machine.
func newKeysCmd(g *globalFlags) *cobra.Command {
	cfg := operator.DefaultKeysConfig()
	cmd := &cobra.Command{
		Use:   "keys --job ID --banks ID,... [--out DIR] [--cluster HOST:PORT,...]",
		Short: "Generate a job's NKey credentials, keyring and nats-server configuration",
		Long: `Generate one NKey user seed per party (the aggregator, every bank, the
auditor), each in its own file <id>.nk with mode 0600; keyring.json, the
public keys that verify envelope signatures; and server.conf, a nats-server
configuration (for nats-server -c or graphfed server --config) in which each
party may publish only as itself and read only what is addressed to it.
With --cluster, also server-<n>.conf for each node of a NATS cluster, with
authenticated routes between them. Existing files are never overwritten.
The payload limit (max_payload) fits the job's largest message, from
--max-params, --max-emb-rows and --emb-dim, plus a quarter of headroom.
Hand each party its seed file only; see docs/DEPLOY.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			r, err := operator.WriteKeys(cfg, start)
			if err != nil {
				return err
			}
			if err := r.WriteText(g.humanOut()); err != nil {
				return err
			}
			return g.emit(Report{Command: "keys", Clients: r.Banks, Metrics: r.Metrics()}, start)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Job, "job", "", "job id ([a-z0-9-]{1,64})")
	fl.StringSliceVar(&cfg.Banks, "banks", nil, "bank (agent) ids, comma-separated")
	fl.StringVar(&cfg.Out, "out", "", "output directory (default keys-<job>), created with mode 0700")
	fl.StringVar(&cfg.Listen, "listen", cfg.Listen, "client listen address in the server configurations")
	fl.StringVar(&cfg.Store, "store", "", "JetStream store directory in the server configurations (default: the server's)")
	fl.StringSliceVar(&cfg.Cluster, "cluster", nil, "route addresses HOST:PORT of every cluster node, comma-separated; one configuration per node")
	fl.StringVar(&cfg.ClusterName, "cluster-name", cfg.ClusterName, "cluster name")
	fl.StringVar(&cfg.Links, "links", cfg.Links, `bank pairs that exchange embeddings, each an account export: "all" (every ordered pair), "none" (a job without embeddings), or from:to and a=b (both ways), comma-separated`)
	fl.IntVar(&cfg.Size.Params, "max-params", cfg.Size.Params, "parameter count of the job's model: sizes the payload limit")
	fl.IntVar(&cfg.Size.EmbRows, "max-emb-rows", cfg.Size.EmbRows, "most boundary rows in one embedding message (0: the job exchanges no embeddings): sizes the payload limit")
	fl.IntVar(&cfg.Size.EmbDim, "emb-dim", cfg.Size.EmbDim, "values per embedding row (0 with --max-emb-rows 0)")
	fl.IntVar(&cfg.Size.KernelValues, "max-kernel", cfg.Size.KernelValues, "float32 values of LPSFed's reference kernel in a round opening: sizes the payload limit")
	registerKeysTLS(cmd, &cfg.TLS)
	cmd.MarkFlagRequired("job")
	cmd.MarkFlagRequired("banks")
	cmd.AddCommand(newKeysLedgerCmd(g))
	return cmd
}

// newKeysLedgerCmd is `graphfed keys ledger`: flags into
// operator.LedgerConfig, the ledger administrator's one-time creation of
// a job's append-only ledger streams, one per party.
func newKeysLedgerCmd(g *globalFlags) *cobra.Command {
	cfg := operator.DefaultLedgerConfig()
	var tlsf tlsFlags
	cmd := &cobra.Command{
		Use:   "ledger --nats URL --job ID --creds ledger-admin.nk --keyring keyring.json [--replicas 3]",
		Short: "Create a job's append-only ledger streams, one per party, as the ledger administrator",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			cfg.TLS = tlsf.files
			r, err := operator.CreateLedgerStreams(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			if err := r.WriteText(g.humanOut()); err != nil {
				return err
			}
			return g.emit(Report{Command: "keys ledger", Metrics: r.Metrics()}, start)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.NATS, "nats", cfg.NATS, "NATS server or cluster URL")
	fl.StringVar(&cfg.Job, "job", "", "job id (default: the keyring's)")
	fl.StringVar(&cfg.Creds, "creds", "", "the ledger administrator's seed file ("+bus.LedgerAdminID+".nk)")
	fl.StringVar(&cfg.Keyring, "keyring", "", "the job's keyring.json: its parties get a stream each")
	tlsf.register(cmd)
	fl.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "stream replicas (3 on a 3-node cluster)")
	cmd.MarkFlagRequired("keyring")
	return cmd
}
