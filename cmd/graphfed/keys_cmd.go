package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"graphfed/bus"
	"graphfed/deploy"
)

// keysFlags are the flags of `graphfed keys`.
type keysFlags struct {
	job, out, listen, store, clusterName string
	banks, cluster                       []string
	size                                 bus.JobSize
	// links is --links; linkPairs and adminKey are what runKeys makes of
	// it and of the fresh ledger administrator's key.
	links     string
	linkPairs [][2]string
	adminKey  string
	tls       keysTLS // keys_tls.go
}

// newKeysCmd is `graphfed keys`: a deployment's credentials, keyring and
// server configuration, made offline on one trusted machine.
func newKeysCmd(g *globalFlags) *cobra.Command {
	var f keysFlags
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
The configurations' payload limit (max_payload) fits the job's largest
message, from its model size: --max-params (parameters of the model; an
update carries them and a gradient estimator), --max-emb-rows and --emb-dim
(the largest embedding message: a bank's boundary accounts towards one
neighbour), plus a quarter of headroom, at least 1 MiB.
Hand each party its seed file only; see docs/DEPLOY.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runKeys(g, &f, time.Now())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.job, "job", "", "job id ([a-z0-9-]{1,64})")
	fl.StringSliceVar(&f.banks, "banks", nil, "bank (agent) ids, comma-separated")
	fl.StringVar(&f.out, "out", "", "output directory (default keys-<job>), created with mode 0700")
	fl.StringVar(&f.listen, "listen", "0.0.0.0:4222", "client listen address in the server configurations")
	fl.StringVar(&f.store, "store", "", "JetStream store directory in the server configurations (default: the server's)")
	fl.StringSliceVar(&f.cluster, "cluster", nil, "route addresses HOST:PORT of every cluster node, comma-separated; one configuration per node")
	fl.StringVar(&f.clusterName, "cluster-name", "graphfed", "cluster name")
	fl.StringVar(&f.links, "links", "all", `bank pairs that exchange embeddings, each an account export: "all" (every ordered pair), "none" (a job without embeddings), or from:to and a=b (both ways), comma-separated`)
	def := bus.DefaultJobSize()
	fl.IntVar(&f.size.Params, "max-params", def.Params, "parameter count of the job's model: sizes the payload limit")
	fl.IntVar(&f.size.EmbRows, "max-emb-rows", def.EmbRows, "most boundary rows in one embedding message (0: the job exchanges no embeddings): sizes the payload limit")
	fl.IntVar(&f.size.EmbDim, "emb-dim", def.EmbDim, "values per embedding row (0 with --max-emb-rows 0)")
	fl.IntVar(&f.size.KernelValues, "max-kernel", 0, "float32 values of LPSFed's reference kernel in a round opening: sizes the payload limit")
	f.tls.register(cmd)
	cmd.MarkFlagRequired("job")
	cmd.MarkFlagRequired("banks")
	cmd.AddCommand(newKeysLedgerCmd(g))
	return cmd
}

func runKeys(g *globalFlags, f *keysFlags, start time.Time) error {
	dep, err := bus.NewDeployment(f.job, f.banks)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	switch f.links {
	case "all":
	case "none":
		f.linkPairs = [][2]string{}
	default:
		if f.linkPairs, err = bus.ParseLinks(f.links); err != nil {
			return fmt.Errorf("keys: --links: %w", err)
		}
	}
	f.adminKey = dep.LedgerAdmin.PublicKey
	ring, err := dep.Keyring()
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if f.out == "" {
		f.out = "keys-" + f.job
	}
	manifest, err := ring.Encode()
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if f.size.EmbRows == 0 {
		f.size.EmbDim = 0
	}
	payload, err := f.size.PayloadLimit()
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	// Render everything before writing anything, so that bad flags leave
	// no half-made directory behind.
	confs, err := keysServerConfigs(ring, f, payload)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	var seeds []string
	for _, c := range dep.Creds {
		seeds = append(seeds, filepath.Join(f.out, c.ID+".nk"))
	}
	adminSeed := filepath.Join(f.out, bus.LedgerAdminID+".nk")
	keyring := filepath.Join(f.out, "keyring.json")
	var names []string
	for _, c := range confs {
		names = append(names, c.path)
	}
	for _, p := range append(append(append([]string{adminSeed}, seeds...), keyring), names...) {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("keys: %s exists; keys are never overwritten, choose another --out", p)
		}
	}
	// TLS (keys_tls.go): rendered, written and added to confs here.
	tlsReport, err := f.tls.apply(g, keysTLSJob{job: f.job, out: f.out, listen: f.listen, cluster: f.cluster,
		ids: append(credentialIDs(dep.Creds), dep.LedgerAdmin.ID)}, confs, start)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	if err := os.MkdirAll(f.out, 0o700); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	for i, c := range dep.Creds {
		if err := bus.WriteSeedFile(seeds[i], f.job, c); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
	}
	if err := bus.WriteSeedFile(adminSeed, f.job, dep.LedgerAdmin); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	// Public: every party and the auditor need it.
	if err := writeNew(keyring, manifest, 0o644); err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	// Route passwords are secret; so, by habit, is the rest.
	for _, c := range confs {
		if err := writeNew(c.path, c.data, 0o600); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
	}
	ids := make([]string, len(dep.Creds))
	for i, c := range dep.Creds {
		ids[i] = c.ID
	}
	out := g.humanOut()
	fmt.Fprintf(out, "keys for job %s in %s:\n", f.job, f.out)
	for i, c := range dep.Creds {
		fmt.Fprintf(out, "  %-40s seed of %s (%s): give it to %s only\n", seeds[i], c.ID, c.Role, c.ID)
	}
	fmt.Fprintf(out, "  %-40s seed of the ledger administrator: the NATS servers' operator only, never a party\n", adminSeed)
	fmt.Fprintf(out, "  %-40s public keys (signature verification)\n", keyring)
	fmt.Fprintf(out, "  payload limit %d bytes (%d MiB): the job's largest message, %d bytes, with headroom\n",
		payload, payload>>20, f.size.LargestMessage())
	for _, c := range confs {
		fmt.Fprintf(out, "  %-40s %s\n", c.path, c.what)
	}
	return g.emit(Report{Command: "keys", Clients: len(f.banks), Metrics: map[string]any{
		"job": f.job, "out": f.out, "parties": ids, "seed_files": seeds, "ledger_admin_seed": adminSeed, "keyring": keyring,
		"server_configs": names, "cluster_nodes": len(f.cluster), "max_payload": payload,
		"largest_message": f.size.LargestMessage(), "tls": tlsReport,
	}}, start)
}

// serverConf is one rendered server configuration and where it goes.
type serverConf struct {
	path, what string
	data       []byte
}

// keysServerConfigs renders server.conf (a single server) and, with
// --cluster, server-<n>.conf for node n, each routing to the others.
func keysServerConfigs(ring *bus.Keyring, f *keysFlags, payload int) ([]serverConf, error) {
	single, err := bus.ServerConfig(ring, bus.ServerConfigOptions{Listen: f.listen, StoreDir: f.store, MaxPayload: payload,
		LedgerAdmin: f.adminKey, Links: f.linkPairs})
	if err != nil {
		return nil, err
	}
	confs := []serverConf{{filepath.Join(f.out, "server.conf"), "nats-server configuration, single server", single}}
	if len(f.cluster) == 0 {
		return confs, nil
	}
	if len(f.cluster) < 3 {
		// JetStream needs a majority of its peers: with 2 nodes, losing
		// either stops the ledger.
		return nil, fmt.Errorf("--cluster: %d nodes; a JetStream cluster needs at least 3", len(f.cluster))
	}
	password := rand.Text()
	for i, node := range f.cluster {
		_, port, err := net.SplitHostPort(node)
		if err != nil {
			return nil, fmt.Errorf("--cluster node %d: %w", i+1, err)
		}
		var routes []string
		for j, other := range f.cluster {
			if j != i {
				routes = append(routes, other)
			}
		}
		name := f.clusterName + "-" + strconv.Itoa(i+1)
		data, err := bus.ServerConfig(ring, bus.ServerConfigOptions{
			ServerName: name, Listen: f.listen, StoreDir: f.store, MaxPayload: payload,
			LedgerAdmin: f.adminKey, Links: f.linkPairs,
			Cluster: &bus.ClusterOptions{Name: f.clusterName, Listen: "0.0.0.0:" + port, Routes: routes, Password: password},
		})
		if err != nil {
			return nil, err
		}
		confs = append(confs, serverConf{filepath.Join(f.out, fmt.Sprintf("server-%d.conf", i+1)),
			fmt.Sprintf("nats-server configuration of cluster node %s (%s)", name, node), data})
	}
	return confs, nil
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// newKeysLedgerCmd is `graphfed keys ledger`: the ledger administrator,
// who operates the NATS servers and is no party of the job, creates one
// append-only stream per party in the ledger account, once, before the
// job starts. No party may create, delete or purge a ledger stream.
func newKeysLedgerCmd(g *globalFlags) *cobra.Command {
	var (
		natsURL, job, creds, keyring string
		replicas                     int
		tlsf                         tlsFlags
	)
	cmd := &cobra.Command{
		Use:   "ledger --nats URL --job ID --creds ledger-admin.nk --keyring keyring.json [--replicas 3]",
		Short: "Create a job's append-only ledger streams, one per party, as the ledger administrator",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			ring, err := bus.LoadKeyring(keyring)
			if err != nil {
				return fmt.Errorf("keys ledger: %w", err)
			}
			if job == "" {
				job = ring.Job()
			}
			if job != ring.Job() {
				return fmt.Errorf("keys ledger: --job %s, but %s is the keyring of job %s", job, keyring, ring.Job())
			}
			if kp, err := bus.LoadSeedFile(creds); err == nil {
				pub, _ := kp.PublicKey()
				kp.Wipe()
				for _, p := range ring.Parties() {
					if p.PublicKey == pub {
						return fmt.Errorf("keys ledger: --creds %s is the seed of %s, a party of the job; the ledger streams are the ledger administrator's to create (%s.nk)", creds, p.ID, bus.LedgerAdminID)
					}
				}
			}
			nc, err := bus.Connect(natsURL, tlsf.connect(bus.ConnectOptions{Name: "graphfed-keys-ledger-" + job, Creds: creds}))
			if err != nil {
				return fmt.Errorf("keys ledger: %w", err)
			}
			defer nc.Close()
			if !nc.IsConnected() {
				return fmt.Errorf("keys ledger: --nats %s: no server reachable, or the credentials were refused", natsURL)
			}
			names, err := deploy.CreateLedgerStreams(cmd.Context(), nc, ring, replicas)
			if err != nil {
				return fmt.Errorf("keys ledger: %w (are these the ledger administrator's credentials, %s.nk?)", err, bus.LedgerAdminID)
			}
			fmt.Fprintf(g.humanOut(), "ledger of job %s ready: %d streams (%d replicas), one per party\n", job, len(names), replicas)
			return g.emit(Report{Command: "keys ledger", Metrics: map[string]any{
				"job": job, "streams": names, "replicas": replicas}}, start)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&natsURL, "nats", "nats://127.0.0.1:4222", "NATS server or cluster URL")
	fl.StringVar(&job, "job", "", "job id (default: the keyring's)")
	fl.StringVar(&creds, "creds", "", "the ledger administrator's seed file ("+bus.LedgerAdminID+".nk)")
	fl.StringVar(&keyring, "keyring", "", "the job's keyring.json: its parties get a stream each")
	tlsf.register(cmd)
	fl.IntVar(&replicas, "replicas", 1, "stream replicas (3 on a 3-node cluster)")
	cmd.MarkFlagRequired("keyring")
	return cmd
}
