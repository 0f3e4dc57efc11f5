package bus

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// A seed file round-trips, is written 0600 and never over an existing
// file, and reads as nats.go reads an --nkey file.
func TestSeedFile(t *testing.T) {
	d, err := NewDeployment(secJob, secBanks)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := d.Credential("bank-b")
	path := filepath.Join(t.TempDir(), "bank-b.nk")
	if err := WriteSeedFile(path, secJob, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteSeedFile(path, secJob, c); err == nil {
		t.Fatal("overwrote a seed file")
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("seed file mode %v, %v", st.Mode(), err)
	}
	kp, err := LoadSeedFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if pub, _ := kp.PublicKey(); pub != c.PublicKey {
		t.Fatalf("public key %s, want %s", pub, c.PublicKey)
	}
	if _, err := nats.NkeyOptionFromSeed(path); err != nil {
		t.Fatalf("nats.go cannot read the seed file: %v", err)
	}
	if s, err := CredsSigner("bank-b", path); err != nil || s.PublicKey() != c.PublicKey || s.ID() != "bank-b" {
		t.Fatalf("creds signer %v, %v", s, err)
	}
	if s, err := CredsSigner("bank-b", ""); s != nil || err != nil {
		t.Fatalf("no creds gave a signer %v, %v", s, err)
	}

	acct, _ := nkeys.CreateAccount()
	aseed, _ := acct.Seed()
	for name, data := range map[string][]byte{
		"empty":        nil,
		"garbage":      []byte("hello\nworld\n"),
		"account seed": aseed,
		"damaged seed": bytes.Replace(EncodeSeedFile(secJob, c), c.Seed[10:14], []byte("AAAA"), 1),
	} {
		if _, err := ParseSeedFile(data); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if isJWTCreds(EncodeSeedFile(secJob, c)) || !isJWTCreds([]byte("-----BEGIN NATS USER JWT-----\neyJ0\n------END NATS USER JWT------\n")) {
		t.Fatal("JWT creds detection")
	}
}

// The keyring manifest round-trips and its decoder refuses anything that
// is not a consistent set of parties.
func TestKeyringManifest(t *testing.T) {
	d, err := NewDeployment(secJob, secBanks)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := d.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	data, err := ring.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseKeyring(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Job() != secJob || !slices.Equal(back.Parties(), ring.Parties()) || len(back.Parties()) != len(secBanks)+2 {
		t.Fatalf("round trip: %+v vs %+v", back.Parties(), ring.Parties())
	}
	a, _ := ring.Party("bank-a")
	b, _ := ring.Party("bank-b")
	g, _ := ring.Party(AggregatorID)
	acct, _ := nkeys.CreateAccount()
	apub, _ := acct.PublicKey()
	replace := func(old, new string) string { return strings.Replace(string(data), old, new, 1) }
	for name, bad := range map[string]string{
		"not json":         "{",
		"unknown field":    replace(`"job"`, `"extra": 1, "job"`),
		"other format":     replace(KeyringFormat, "graphfed-keyring/9"),
		"trailing data":    string(data) + "{}",
		"bad job":          replace(`"job": "`+secJob+`"`, `"job": "J 1"`),
		"no parties":       `{"format":"` + KeyringFormat + `","job":"j1","parties":[]}`,
		"duplicate id":     replace(`"id": "bank-b"`, `"id": "bank-a"`),
		"duplicate key":    replace(b.PublicKey, a.PublicKey),
		"two aggregators":  replace(`"role": "bank"`, `"role": "aggregator"`),
		"unknown role":     replace(`"role": "bank"`, `"role": "admin"`),
		"bank named all":   replace(`"id": "bank-a"`, `"id": "all"`),
		"account key":      replace(g.PublicKey, apub),
		"damaged key":      replace(a.PublicKey, a.PublicKey[:20]+damage(a.PublicKey[20])+a.PublicKey[21:]),
		"invalid party id": replace(`"id": "bank-a"`, `"id": "Bank_A"`),
	} {
		if bad == string(data) && name != "trailing data" {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if _, err := ParseKeyring([]byte(bad)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// The rendered configuration is what nats-server reads: one account per
// party of JobAccounts, each with its party's NKey user, the ledger
// administrator alone in the ledger account, the users' publish
// allow-lists exactly as JobAccounts gives them (the banks' and the
// auditor's; no subscription is listed, the account is the boundary), the
// exports and imports of the layout (quoted "$JS..." subjects are not
// variables), and a cluster block with authenticated routes.
func TestServerConfigParses(t *testing.T) {
	d, err := NewDeployment(secJob, secBanks)
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := d.Keyring()
	conf, err := ServerConfig(ring, ServerConfigOptions{ServerName: "gf-1", StoreDir: "/var/lib/graphfed/js", LedgerAdmin: d.LedgerAdmin.PublicKey,
		Cluster: &ClusterOptions{Routes: []string{"nats-2.example:6222", "10.0.0.3:6222"}, Password: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "server.conf")
	if err := os.WriteFile(path, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("nats-server rejects the configuration: %v\n%s", err, conf)
	}
	if o.ServerName != "gf-1" || o.Cluster.Name != "graphfed" || o.Cluster.Username != "route" || o.Cluster.Password != "s3cret" ||
		len(o.Routes) != 2 || o.Routes[0].User.String() != "route:s3cret" || o.StoreDir != "/var/lib/graphfed/js" ||
		!o.JetStream || !o.SyncAlways || o.MaxPayload != DefaultMaxPayload {
		t.Fatalf("parsed options: %+v cluster %+v routes %v", o, o.Cluster, o.Routes)
	}
	want, err := JobAccounts(ring, AccountOptions{LedgerAdmin: d.LedgerAdmin.PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	parsed := map[string]*server.Account{}
	for _, a := range o.Accounts {
		parsed[a.Name] = a
	}
	if len(parsed) != len(want) {
		t.Fatalf("%d accounts parsed, want %d", len(parsed), len(want))
	}
	users := map[string]AccountUser{}
	userAccount := map[string]string{} // public key -> account
	for _, a := range want {
		pa := parsed[a.Name]
		if pa == nil {
			t.Fatalf("account %s not parsed", a.Name)
		}
		services := 0
		for _, im := range a.Imports {
			if im.Service {
				services++
			}
		}
		if got := pa.NumServiceImports(); got != services {
			t.Errorf("account %s: %d service imports parsed, want %d", a.Name, got, services)
		}
		for _, e := range a.Exports {
			if e.Service && !pa.IsExportService(e.Subject) {
				t.Errorf("account %s: service export %s not parsed", a.Name, e.Subject)
			}
		}
		for _, u := range a.Users {
			users[u.PublicKey] = u
			userAccount[u.PublicKey] = a.Name
		}
	}
	if len(o.Nkeys) != len(ring.Parties())+1 {
		t.Fatalf("%d nkey users, want the %d parties and the ledger administrator", len(o.Nkeys), len(ring.Parties()))
	}
	for _, u := range o.Nkeys {
		w := users[u.Nkey]
		if u.Account == nil || userAccount[u.Nkey] != u.Account.Name {
			t.Errorf("user %s (%s) in account %v, want %s", u.Nkey, w.ID, u.Account, userAccount[u.Nkey])
		}
		switch p := u.Permissions; {
		case w.Publish == nil && p != nil:
			t.Errorf("%s has permissions %+v, want none", w.ID, p)
		case w.Publish == nil:
		case p == nil || p.Publish == nil:
			t.Errorf("%s has no publish allow-list, want %v", w.ID, w.Publish)
		case !slices.Equal(p.Publish.Allow, w.Publish) || p.Publish.Deny != nil || p.Subscribe != nil || p.Response != nil:
			t.Errorf("%s's parsed permissions: publish %+v subscribe %+v response %+v, want publish allow %v only", w.ID, p.Publish, p.Subscribe, p.Response, w.Publish)
		}
	}
	for _, p := range ring.Parties() {
		if users[p.PublicKey].ID != p.ID {
			t.Errorf("%s is no user of the configuration", p.ID)
		}
	}
	if userAccount[d.LedgerAdmin.PublicKey] != LedgerAccount {
		t.Errorf("the ledger administrator logs in to %q, want %s", userAccount[d.LedgerAdmin.PublicKey], LedgerAccount)
	}
	for _, p := range ring.Parties() {
		if userAccount[p.PublicKey] != AccountOf(p) {
			t.Errorf("%s logs in to %q, want %s", p.ID, userAccount[p.PublicKey], AccountOf(p))
		}
	}

	for name, o := range map[string]ServerConfigOptions{
		"cluster without a server name": {Cluster: &ClusterOptions{Password: "x"}},
		"cluster without a password":    {ServerName: "a", Cluster: &ClusterOptions{}},
		"route without a port":          {ServerName: "a", Cluster: &ClusterOptions{Password: "x", Routes: []string{"host"}}},
		"password breaking the URL":     {ServerName: "a", Cluster: &ClusterOptions{Password: "a@b"}},
		"bad listen":                    {Listen: "0.0.0.0:99999"},
		"quote in the store dir":        {StoreDir: `/tmp/"x`},
	} {
		if _, err := ServerConfig(ring, o); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
}

func FuzzParseKeyring(f *testing.F) {
	d, err := NewDeployment(secJob, []string{"bank-a", "bank-b"})
	if err != nil {
		f.Fatal(err)
	}
	ring, _ := d.Keyring()
	good, _ := ring.Encode()
	f.Add(good)
	f.Add([]byte(`{"format":"graphfed-keyring/1","job":"j","parties":[{"id":"a","role":"bank","public_key":"U"}]}`))
	f.Add([]byte("null"))
	f.Add([]byte(`{"parties":[null]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ParseKeyring(data)
		if err != nil {
			return
		}
		// Whatever parses re-encodes to a manifest that parses the same.
		enc, err := k.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseKeyring(enc)
		if err != nil || back.Job() != k.Job() || !slices.Equal(back.Parties(), k.Parties()) {
			t.Fatalf("re-encoded keyring differs: %v", err)
		}
		// Verification never panics on any sender.
		for _, p := range k.Parties() {
			env := Envelope{Job: k.Job(), Kind: KindUpdate, From: p.ID, Sig: data}
			if k.Verify(&env) == nil {
				t.Fatalf("verified a fuzzed signature for %s", p.ID)
			}
		}
	})
}

func FuzzParseSeedFile(f *testing.F) {
	d, err := NewDeployment(secJob, []string{"bank-a"})
	if err != nil {
		f.Fatal(err)
	}
	c, _ := d.Credential("bank-a")
	f.Add(EncodeSeedFile(secJob, c))
	f.Add(c.Seed)
	f.Add([]byte("-----BEGIN USER NKEY SEED-----\nSUA\n------END USER NKEY SEED------\n"))
	f.Add([]byte("SO\nSA\nSU\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kp, err := ParseSeedFile(data)
		if err != nil {
			return
		}
		// Whatever parses is a user key that signs and verifies.
		pub, err := kp.PublicKey()
		if err != nil || !nkeys.IsValidPublicUserKey(pub) {
			t.Fatalf("parsed a seed without a user public key: %q, %v", pub, err)
		}
		sig, err := kp.Sign([]byte("x"))
		if err != nil || kp.Verify([]byte("x"), sig) != nil {
			t.Fatalf("parsed seed does not sign: %v", err)
		}
	})
}

// damage returns a base32 character other than c, so that the key really
// changes whatever it was.
func damage(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}
