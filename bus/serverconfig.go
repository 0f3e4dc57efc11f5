package bus

import (
	"bytes"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ServerConfigOptions shape the nats-server configuration that ServerConfig
// renders. The zero value is a single server listening on every interface.
type ServerConfigOptions struct {
	ServerName string // server_name; required with a cluster (JetStream names its peers)
	Listen     string // client host:port; default "0.0.0.0:4222"
	StoreDir   string // JetStream store_dir; empty: the server's default
	// MaxPayload is the payload limit (max_payload), from the job's model
	// schema (JobSize.PayloadLimit); 0: DefaultMaxPayload.
	MaxPayload int
	Cluster    *ClusterOptions
	// LedgerAdmin is the ledger administrator's NKey public key
	// (Deployment.LedgerAdmin): the ledger account's only user.
	LedgerAdmin string
	// Links are the bank pairs that exchange embeddings (AccountOptions);
	// nil: every ordered pair.
	Links [][2]string
	// SecAgg and SecAggPairs add secure aggregation's flows
	// (AccountOptions.SecAgg, .SecAggPairs); off: the configuration of a
	// job without it, byte for byte.
	SecAgg      bool
	SecAggPairs [][2]string
}

// ClusterOptions add a cluster block: the node's route listener, the route
// credentials every node shares, and routes to the other nodes.
type ClusterOptions struct {
	Name     string   // default "graphfed"
	Listen   string   // route host:port; default "0.0.0.0:6222"
	Routes   []string // host:port of the other nodes' route listeners
	User     string   // route user; default "route"
	Password string   // route password; required: an open route port would let anyone join the cluster and see every message
}

// ServerConfig renders a nats-server configuration (the format of
// `nats-server -c` and `graphfed server --config`) for the parties of k:
// JetStream on, the job's payload limit (o.MaxPayload) with an outbound
// limit per connection that holds a round of every party's messages
// (MaxPendingFor), and one account per party with the exports and imports
// of the job's data flow (JobAccounts). Users without a key in it cannot
// log in.
func ServerConfig(k *Keyring, o ServerConfigOptions) ([]byte, error) {
	fail := func(format string, args ...any) ([]byte, error) {
		return nil, fmt.Errorf("bus: server config: "+format, args...)
	}
	if o.Listen == "" {
		o.Listen = "0.0.0.0:4222"
	}
	if err := checkHostPort(o.Listen); err != nil {
		return fail("listen: %v", err)
	}
	for name, v := range map[string]string{"server name": o.ServerName, "store dir": o.StoreDir} {
		if !confSafe(v) {
			return fail("%s %q has quotes, backslashes or control characters", name, v)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# nats-server configuration for graphfed job %s, written by `graphfed keys`.\n", k.Job())
	b.WriteString("# Every party logs in with its NKey to its own account; the accounts' exports\n# and imports below are all that crosses between parties.\n\n")
	if o.ServerName != "" {
		fmt.Fprintf(&b, "server_name: %q\n", o.ServerName)
	}
	fmt.Fprintf(&b, "listen: %q\n", o.Listen)
	payload := o.MaxPayload
	if payload == 0 {
		payload = DefaultMaxPayload
	}
	if payload < 1024 || payload > DefaultMaxPayload {
		return fail("payload limit %d is not 1 KiB to %d MiB", payload, DefaultMaxPayload>>20)
	}
	// The largest message any party may publish: the job's largest
	// legitimate message with headroom (JobSize.PayloadLimit), so a bank
	// cannot push larger floods than its own updates.
	fmt.Fprintf(&b, "max_payload: %d\n", payload)
	// What may wait for one connection before the server cuts it off as a
	// slow consumer (the server refuses a payload limit above it).
	fmt.Fprintf(&b, "max_pending: %d\n\n", MaxPendingFor(payload, len(k.Parties())))
	b.WriteString("jetstream {\n")
	if o.StoreDir != "" {
		fmt.Fprintf(&b, "  store_dir: %q\n", o.StoreDir)
	}
	// fsync before acknowledging: the privacy ledger must be durable
	// before a release is published (bus.ServerOptions.AsyncFsync).
	b.WriteString("  sync_interval: always\n}\n\n")
	if o.Cluster != nil {
		if o.ServerName == "" {
			return fail("a cluster node needs a server name")
		}
		if err := writeCluster(&b, *o.Cluster); err != nil {
			return fail("cluster: %v", err)
		}
	}
	accounts, err := JobAccounts(k, AccountOptions{LedgerAdmin: o.LedgerAdmin, Links: o.Links, Payload: payload,
		SecAgg: o.SecAgg, SecAggPairs: o.SecAggPairs})
	if err != nil {
		return nil, fmt.Errorf("bus: server config: %w", err)
	}
	nodes := 1
	if o.Cluster != nil {
		nodes += len(o.Cluster.Routes)
	}
	writeAccounts(&b, accounts, nodes)
	return b.Bytes(), nil
}

// writeAccounts renders the accounts block: each account's users (NKeys,
// with the banks' and the auditor's publish allow-lists), JetStream,
// exports and imports. nats-server creates its system account itself; no user of the
// job is in it.
//
// On a cluster of n nodes, a stream's byte limit is reserved once per
// replica against its account's store, and a stream may have up to n
// replicas, so each account's store is n times its single node's.
func writeAccounts(b *bytes.Buffer, accounts []Account, nodes int) {
	b.WriteString("# One account per party (bus.JobAccounts): what crosses between them is\n")
	b.WriteString("# the exports and imports below, and nothing else.\n")
	b.WriteString("accounts {\n")
	for _, a := range accounts {
		fmt.Fprintf(b, "  %q: {\n", a.Name)
		writeLimits(b, a, nodes)
		b.WriteString("    users: [\n")
		for _, u := range a.Users {
			if u.Publish == nil {
				fmt.Fprintf(b, "      { nkey: %q }  # %s\n", u.PublicKey, u.ID)
				continue
			}
			if u.SubscribeDeny != nil {
				fmt.Fprintf(b, "      # %s\n      { nkey: %q, permissions: { publish: { allow: %s }, subscribe: { deny: %s } } }\n",
					u.ID, u.PublicKey, confList(u.Publish), confList(u.SubscribeDeny))
				continue
			}
			fmt.Fprintf(b, "      # %s\n      { nkey: %q, permissions: { publish: { allow: %s } } }\n", u.ID, u.PublicKey, confList(u.Publish))
		}
		b.WriteString("    ]\n")
		if len(a.Exports) > 0 {
			b.WriteString("    exports: [\n")
			for _, e := range a.Exports {
				kind := "stream"
				if e.Service {
					kind = "service"
				}
				fmt.Fprintf(b, "      { %s: %q, accounts: %s }\n", kind, e.Subject, confList(e.Accounts))
			}
			b.WriteString("    ]\n")
		}
		if len(a.Imports) > 0 {
			b.WriteString("    imports: [\n")
			for _, im := range a.Imports {
				kind := "stream"
				if im.Service {
					kind = "service"
				}
				fmt.Fprintf(b, "      { %s: { account: %q, subject: %q }", kind, im.Account, im.Subject)
				if im.To != "" && im.To != im.Subject {
					fmt.Fprintf(b, ", to: %q", im.To)
				}
				b.WriteString(" }\n")
			}
			b.WriteString("    ]\n")
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
}

func writeCluster(b *bytes.Buffer, c ClusterOptions) error {
	if c.Name == "" {
		c.Name = "graphfed"
	}
	if c.Listen == "" {
		c.Listen = "0.0.0.0:6222"
	}
	if c.User == "" {
		c.User = "route"
	}
	if c.Password == "" {
		return fmt.Errorf("no route password")
	}
	if !ValidID(c.Name) || !ValidID(c.User) || !confSafe(c.Password) || strings.ContainsAny(c.Password, "@:/ ") {
		return fmt.Errorf("name, user and password must be plain tokens")
	}
	if err := checkHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen: %v", err)
	}
	routes := make([]string, len(c.Routes))
	for i, r := range c.Routes {
		if err := checkHostPort(r); err != nil {
			return fmt.Errorf("route %d: %v", i+1, err)
		}
		routes[i] = "nats-route://" + c.User + ":" + c.Password + "@" + r
	}
	fmt.Fprintf(b, "cluster {\n  name: %q\n  listen: %q\n", c.Name, c.Listen)
	fmt.Fprintf(b, "  authorization {\n    user: %q\n    password: %q\n  }\n", c.User, c.Password)
	fmt.Fprintf(b, "  routes: %s\n}\n\n", confList(routes))
	return nil
}

// checkHostPort accepts host:port with a port in 1..65535 and a host free of
// characters that would break the configuration or a route URL.
func checkHostPort(hp string) error {
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port %q is not 1 to 65535", hp, port)
	}
	if host == "" || !confSafe(host) || strings.ContainsAny(host, "@/ ") {
		return fmt.Errorf("%q: bad host", hp)
	}
	return nil
}

// confSafe reports whether s can go between double quotes in a
// configuration file unescaped.
func confSafe(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			return false
		}
	}
	return true
}

// confList renders strings as a configuration list of quoted strings. The
// quotes matter: unquoted, "$JS.API..." would read as a variable.
func confList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
