package main

import (
	"time"

	"github.com/spf13/cobra"

	"graphfed/bus"
	"graphfed/internal/flagval"
	"graphfed/operator"
)

// newKeysCmd is `graphfed keys`: flags into operator.KeysConfig, a
// deployment's credentials made offline on one trusted machine.
func newKeysCmd(g *globalFlags) *cobra.Command {
	cfg := operator.DefaultKeysConfig()
	cmd := &cobra.Command{
		Use:   "keys --job ID --banks ID,... [--out DIR] [--cluster HOST:PORT,...]",
		Short: "Generate a job's NKey credentials, keyring and nats-server configuration",
		Long: `Generate one NKey seed per party (<id>.nk, mode 0600), keyring.json (the public keys that
verify envelope signatures) and server.conf (with --cluster, one per node), in which each party
may publish only as itself and read only what is addressed to it, its max_payload fitting the
job's largest message. Nothing is overwritten; hand each party its seed only (docs/DEPLOY.md).`,
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
	fl.Var(flagval.OnOff{Off: &cfg.SecAggOff}, "secagg", "secure aggregation's subjects in the configurations: on (every multi-party job aggregates securely by default) or off")
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

// registerKeysTLS adds the TLS flags of `graphfed keys` into t: generate
// the job's TLS material (--tls, optionally signed by an existing CA), or
// name a server certificate of one's own in the server configurations.
func registerKeysTLS(cmd *cobra.Command, t *operator.KeysTLS) {
	f := cmd.Flags()
	f.BoolVar(&t.Generate, "tls", false, "also generate mutual TLS: a job CA (ca.crt; keep ca.key offline), server.crt and server.key, and <id>.crt and <id>.key per credential; the server configurations require them")
	f.StringSliceVar(&t.Hosts, "tls-hosts", nil, "names and IPs the server certificate carries besides 127.0.0.1, localhost and the hosts of --listen and --cluster: every address parties dial")
	f.StringVar(&t.Dir, "tls-dir", "", "where the server keeps server.crt, server.key and ca.crt, as the configurations name it (default --out; relative to the server's working directory)")
	f.DurationVar(&t.Validity, "tls-validity", t.Validity, "validity of the generated certificates")
	f.StringVar(&t.CACert, "tls-ca-cert", "", "your own CA certificate: with --tls-ca-key it signs the generated certificates instead of a new job CA; with --tls-server-cert the server checks client certificates against it")
	f.StringVar(&t.CAKey, "tls-ca-key", "", "the key of --tls-ca-cert (read, never copied); implies --tls")
	f.StringVar(&t.ServerCert, "tls-server-cert", "", "your own server certificate (with --tls-server-key and --tls-ca-cert): the configurations name these files as given, nothing is generated; parties' certificates come from your CA")
	f.StringVar(&t.ServerKey, "tls-server-key", "", "the key of --tls-server-cert")
}
