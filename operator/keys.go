package operator

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

	"graphfed/bus"
)

// KeysConfig is what WriteKeys makes: a job's credentials, keyring and
// server configurations. Job and Banks are required; empty strings take
// DefaultKeysConfig's values.
type KeysConfig struct {
	Job   string
	Banks []string // the banks' (agents') ids
	// Out is the output directory, created 0700; empty: keys-<Job>.
	Out string
	// Listen is the client listen address in the configurations.
	Listen string
	// Store is the JetStream store directory in the configurations;
	// empty: the server's own default.
	Store string
	// Cluster are the route addresses HOST:PORT of every node of a NATS
	// cluster (at least 3): one configuration per node besides the
	// single-server one. ClusterName names it.
	Cluster     []string
	ClusterName string
	// Links are the bank pairs that exchange embeddings, each an account
	// export: "all" (every ordered pair; also empty), "none", or from:to
	// and a=b (both ways), comma-separated.
	Links string
	// Size sizes the configurations' payload limit (max_payload) to the
	// job's largest message, with headroom. It is taken as given (the zero
	// size is a job of small messages, so the 1 MiB minimum);
	// DefaultKeysConfig holds bus.DefaultJobSize. EmbRows 0 means no
	// embeddings, whatever EmbDim says.
	Size bus.JobSize
	TLS  KeysTLS
	// SecAggOff leaves secure aggregation's subjects out of the
	// configurations (bus.AccountOptions.SecAgg): a job whose updates
	// travel in the clear. The zero value lays them out, as every
	// multi-party job aggregates securely by default.
	SecAggOff bool
}

// DefaultKeysConfig is `graphfed keys` without flags but --job and --banks.
func DefaultKeysConfig() KeysConfig {
	return KeysConfig{Listen: "0.0.0.0:4222", ClusterName: "graphfed", Links: "all", Size: bus.DefaultJobSize(),
		TLS: KeysTLS{Validity: bus.DefaultTLSValidity}}
}

// withDefaults fills c's zero fields from DefaultKeysConfig and Out.
func (c KeysConfig) withDefaults() KeysConfig {
	def := DefaultKeysConfig()
	if c.Out == "" {
		c.Out = "keys-" + c.Job
	}
	if c.Listen == "" {
		c.Listen = def.Listen
	}
	if c.ClusterName == "" {
		c.ClusterName = def.ClusterName
	}
	if c.Links == "" {
		c.Links = def.Links
	}
	if c.Size.EmbRows == 0 {
		c.Size.EmbDim = 0
	}
	return c
}

// links are the account exports of c.Links: nil for all pairs.
func (c KeysConfig) links() ([][2]string, error) {
	switch c.Links {
	case "all":
		return nil, nil
	case "none":
		return [][2]string{}, nil
	}
	pairs, err := bus.ParseLinks(c.Links)
	if err != nil {
		return nil, fmt.Errorf("--links: %w", err)
	}
	return pairs, nil
}

// WriteKeys generates a deployment's credentials (fresh keys from
// crypto/rand) and writes them with the keyring and the server
// configurations into cfg.Out; now dates the TLS certificates. Bad
// settings and existing files are found before anything is written: keys
// are never overwritten.
func WriteKeys(cfg KeysConfig, now time.Time) (KeysResult, error) {
	r, err := writeKeys(cfg.withDefaults(), now)
	if err != nil {
		return KeysResult{}, fmt.Errorf("keys: %w", err)
	}
	return r, nil
}

func writeKeys(cfg KeysConfig, now time.Time) (KeysResult, error) {
	dep, err := bus.NewDeployment(cfg.Job, cfg.Banks)
	if err != nil {
		return KeysResult{}, err
	}
	links, err := cfg.links()
	if err != nil {
		return KeysResult{}, err
	}
	ring, err := dep.Keyring()
	if err != nil {
		return KeysResult{}, err
	}
	manifest, err := ring.Encode()
	if err != nil {
		return KeysResult{}, err
	}
	payload, err := cfg.Size.PayloadLimit()
	if err != nil {
		return KeysResult{}, err
	}
	// Render everything before writing anything, so that bad settings
	// leave no half-made directory behind.
	confs, err := renderServerConfigs(ring, cfg, links, dep.LedgerAdmin.PublicKey, payload)
	if err != nil {
		return KeysResult{}, err
	}
	r := KeysResult{Job: cfg.Job, Out: cfg.Out, Banks: len(cfg.Banks), ClusterNodes: len(cfg.Cluster),
		LedgerAdminSeed: filepath.Join(cfg.Out, bus.LedgerAdminID+".nk"), Keyring: filepath.Join(cfg.Out, "keyring.json"),
		MaxPayload: payload, LargestMessage: cfg.Size.LargestMessage()}
	for _, c := range dep.Creds {
		r.Seeds = append(r.Seeds, SeedFile{Path: filepath.Join(cfg.Out, c.ID+".nk"), ID: c.ID, Role: string(c.Role)})
	}
	paths := []string{r.LedgerAdminSeed}
	for _, s := range r.Seeds {
		paths = append(paths, s.Path)
	}
	paths = append(paths, r.Keyring)
	for _, c := range confs {
		paths = append(paths, c.path)
	}
	if err := refuseExisting(paths...); err != nil {
		return KeysResult{}, err
	}
	// TLS (keys_tls.go): rendered and checked, then written, and added to
	// confs, before the rest is written.
	ids := append(credentialIDs(dep.Creds), dep.LedgerAdmin.ID)
	if r.TLS, err = cfg.TLS.apply(keysTLSJob{job: cfg.Job, out: cfg.Out, listen: cfg.Listen, cluster: cfg.Cluster, ids: ids},
		confs, now); err != nil {
		return KeysResult{}, err
	}
	if err := os.MkdirAll(cfg.Out, 0o700); err != nil {
		return KeysResult{}, err
	}
	for i, c := range dep.Creds {
		if err := bus.WriteSeedFile(r.Seeds[i].Path, cfg.Job, c); err != nil {
			return KeysResult{}, err
		}
	}
	if err := bus.WriteSeedFile(r.LedgerAdminSeed, cfg.Job, dep.LedgerAdmin); err != nil {
		return KeysResult{}, err
	}
	// Public: every party and the auditor need it.
	if err := writeNew(r.Keyring, manifest, 0o644); err != nil {
		return KeysResult{}, err
	}
	// Route passwords are secret; so, by habit, is the rest.
	for _, c := range confs {
		if err := writeNew(c.path, c.data, 0o600); err != nil {
			return KeysResult{}, err
		}
		r.ServerConfigs = append(r.ServerConfigs, ServerConfigFile{Path: c.path, What: c.what})
	}
	return r, nil
}

// serverConf is one rendered server configuration and where it goes.
type serverConf struct {
	path, what string
	data       []byte
}

// renderServerConfigs renders server.conf (a single server) and, with a
// cluster, server-<n>.conf for node n, each routing to the others.
func renderServerConfigs(ring *bus.Keyring, cfg KeysConfig, links [][2]string, adminKey string, payload int) ([]serverConf, error) {
	single, err := bus.ServerConfig(ring, bus.ServerConfigOptions{Listen: cfg.Listen, StoreDir: cfg.Store, MaxPayload: payload,
		LedgerAdmin: adminKey, Links: links, SecAgg: !cfg.SecAggOff})
	if err != nil {
		return nil, err
	}
	confs := []serverConf{{filepath.Join(cfg.Out, "server.conf"), "nats-server configuration, single server", single}}
	if len(cfg.Cluster) == 0 {
		return confs, nil
	}
	if len(cfg.Cluster) < 3 {
		// JetStream needs a majority of its peers: with 2 nodes, losing
		// either stops the ledger.
		return nil, fmt.Errorf("--cluster: %d nodes; a JetStream cluster needs at least 3", len(cfg.Cluster))
	}
	password := rand.Text()
	for i, node := range cfg.Cluster {
		_, port, err := net.SplitHostPort(node)
		if err != nil {
			return nil, fmt.Errorf("--cluster node %d: %w", i+1, err)
		}
		var routes []string
		for j, other := range cfg.Cluster {
			if j != i {
				routes = append(routes, other)
			}
		}
		name := cfg.ClusterName + "-" + strconv.Itoa(i+1)
		data, err := bus.ServerConfig(ring, bus.ServerConfigOptions{
			ServerName: name, Listen: cfg.Listen, StoreDir: cfg.Store, MaxPayload: payload,
			LedgerAdmin: adminKey, Links: links, SecAgg: !cfg.SecAggOff,
			Cluster: &bus.ClusterOptions{Name: cfg.ClusterName, Listen: "0.0.0.0:" + port, Routes: routes, Password: password},
		})
		if err != nil {
			return nil, err
		}
		confs = append(confs, serverConf{filepath.Join(cfg.Out, fmt.Sprintf("server-%d.conf", i+1)),
			fmt.Sprintf("nats-server configuration of cluster node %s (%s)", name, node), data})
	}
	return confs, nil
}

// refuseExisting fails on the first of paths that exists.
func refuseExisting(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s exists; keys are never overwritten, choose another --out", p)
		}
	}
	return nil
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

// credentialIDs are the ids of creds, in order: each gets a client
// certificate.
func credentialIDs(creds []bus.Credential) []string {
	ids := make([]string, len(creds))
	for i, c := range creds {
		ids[i] = c.ID
	}
	return ids
}
