package bus

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

// DefaultTLSValidity is how long the certificates `graphfed keys --tls`
// makes are valid: a job's consortium is set up for months, not years, and
// a stolen party key should not outlive the collaboration by much.
const DefaultTLSValidity = 365 * 24 * time.Hour

// tlsBackdate is how far before its issue a certificate becomes valid: the
// organisations' clocks differ, and a certificate that is not yet valid on
// a party's machine fails its first handshake.
const tlsBackdate = time.Hour

// Names of the TLS files `graphfed keys` writes next to the party
// certificates <id>.crt and <id>.key; a party may not be called ca or server.
const (
	TLSCACertFile     = "ca.crt"
	TLSCAKeyFile      = "ca.key"
	TLSServerCertFile = "server.crt"
	TLSServerKeyFile  = "server.key"
)

// TLSCA is a certificate authority that signs a job's server and party
// certificates: the job CA that NewTLSCA makes, or an organisation's own
// (LoadTLSCA).
type TLSCA struct {
	cert    *x509.Certificate
	certPEM []byte
	key     crypto.Signer
}

// NewTLSCA makes a job's CA: self-signed, valid for validity from now
// (DefaultTLSValidity when 0), allowed to sign end-entity certificates
// only (path length 0), and named after the job so that a party shown the
// chain sees which consortium it belongs to.
func NewTLSCA(job string, now time.Time, validity time.Duration) (*TLSCA, error) {
	fail := func(err error) (*TLSCA, error) { return nil, fmt.Errorf("bus: tls: job CA: %w", err) }
	if !ValidID(job) {
		return fail(fmt.Errorf("job %q is not [a-z0-9-]{1,64}", job))
	}
	if validity == 0 {
		validity = DefaultTLSValidity
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fail(err)
	}
	serial, err := tlsSerial()
	if err != nil {
		return fail(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "graphfed job " + job + " CA", Organization: []string{"graphfed job " + job}},
		NotBefore:             now.Add(-tlsBackdate),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return fail(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return fail(err)
	}
	return &TLSCA{cert: cert, certPEM: pemBlock("CERTIFICATE", der), key: key}, nil
}

// LoadTLSCA reads an existing CA to sign with ("take your own"): a PEM
// certificate that may sign certificates, and its PEM private key (PKCS#8,
// SEC 1 EC or PKCS#1 RSA), which must be the certificate's.
func LoadTLSCA(certFile, keyFile string) (*TLSCA, error) {
	fail := func(err error) (*TLSCA, error) { return nil, fmt.Errorf("bus: tls: CA %s: %w", certFile, err) }
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return fail(err)
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return fail(err)
	}
	if !cert.IsCA || cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return fail(errors.New("not a CA certificate (basic constraints CA:true and key usage certSign)"))
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return fail(err)
	}
	defer wipe(keyPEM)
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return fail(fmt.Errorf("key %s: %w", keyFile, err))
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return fail(fmt.Errorf("key %s is not the certificate's", keyFile))
	}
	return &TLSCA{cert: cert, certPEM: pemBlock("CERTIFICATE", cert.Raw), key: key}, nil
}

// CertPEM is the CA certificate, PEM: what every party and the server
// trust.
func (ca *TLSCA) CertPEM() []byte { return slices.Clone(ca.certPEM) }

// Certificate is the parsed CA certificate.
func (ca *TLSCA) Certificate() *x509.Certificate { return ca.cert }

// KeyPEM is the CA's private key, PKCS#8 PEM. Whoever holds it can mint
// certificates for any party or server of the job: keep it offline.
func (ca *TLSCA) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(ca.key)
	if err != nil {
		return nil, fmt.Errorf("bus: tls: CA key: %w", err)
	}
	return pemBlock("PRIVATE KEY", der), nil
}

// IssueServer makes the server's key and certificate, valid for validity
// (DefaultTLSValidity when 0, never past the CA's end) and for each host
// (an IP address or a DNS name: the names clients dial). It serves client
// connections and, in a cluster, routes, where each node is also the
// client of the others: hence both server and client authentication.
func (ca *TLSCA) IssueServer(job string, hosts []string, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if !ValidID(job) {
		return nil, nil, fmt.Errorf("bus: tls: server certificate: job %q is not [a-z0-9-]{1,64}", job)
	}
	sans, err := TLSHosts(hosts)
	if err != nil {
		return nil, nil, fmt.Errorf("bus: tls: server certificate: %w", err)
	}
	if len(sans) == 0 {
		return nil, nil, errors.New("bus: tls: server certificate: no host to name")
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: sans[0], Organization: []string{"graphfed job " + job}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range sans {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	certPEM, keyPEM, err = ca.issue(tmpl, now, validity)
	if err != nil {
		return nil, nil, fmt.Errorf("bus: tls: server certificate: %w", err)
	}
	return certPEM, keyPEM, nil
}

// IssueClient makes party id's key and certificate for mutual TLS: common
// name the party id, client authentication only, so that a party's
// certificate cannot pose as the server.
func (ca *TLSCA) IssueClient(job, id string, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if !ValidID(job) || !ValidID(id) {
		return nil, nil, fmt.Errorf("bus: tls: certificate of %q: job %q or party id is not [a-z0-9-]{1,64}", id, job)
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: id, Organization: []string{"graphfed job " + job}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	certPEM, keyPEM, err = ca.issue(tmpl, now, validity)
	if err != nil {
		return nil, nil, fmt.Errorf("bus: tls: certificate of %s: %w", id, err)
	}
	return certPEM, keyPEM, nil
}

// issue signs a fresh P-256 key's certificate from tmpl, which gives the
// names and usages.
func (ca *TLSCA) issue(tmpl *x509.Certificate, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if validity == 0 {
		validity = DefaultTLSValidity
	}
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-tlsBackdate), now.Add(validity)
	// A certificate that outlives its CA would fail verification at the
	// CA's end anyway; say so in the certificate rather than at that day.
	if tmpl.NotAfter.After(ca.cert.NotAfter) {
		tmpl.NotAfter = ca.cert.NotAfter
	}
	if !tmpl.NotAfter.After(now) {
		return nil, nil, fmt.Errorf("the CA expired on %s", ca.cert.NotAfter.Format(time.DateOnly))
	}
	if tmpl.NotBefore.Before(ca.cert.NotBefore) {
		tmpl.NotBefore = ca.cert.NotBefore
	}
	if tmpl.SerialNumber, err = tlsSerial(); err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", kder), nil
}

// TLSHosts normalises the hosts a server certificate names: IP addresses
// in their canonical form, DNS names in lower case, [brackets] of IPv6
// literals removed, duplicates dropped, order kept. An unspecified address
// (0.0.0.0, ::) is dropped: it is where a server listens, never what a
// client dials. Anything else that is not an IP or a DNS name is refused.
func TLSHosts(hosts []string) ([]string, error) {
	var out []string
	for _, h := range hosts {
		h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h), "["), "]")
		if ip := net.ParseIP(h); ip != nil {
			if ip.IsUnspecified() {
				continue
			}
			h = ip.String()
		} else {
			h = strings.ToLower(h)
			if !validDNSName(h) {
				return nil, fmt.Errorf("host %q is neither an IP address nor a DNS name", h)
			}
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out, nil
}

// validDNSName accepts a host name as certificates carry it: dot-separated
// labels of letters, digits and inner hyphens, each 1 to 63 bytes.
func validDNSName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// TLSSetOptions say what GenerateTLSSet issues.
type TLSSetOptions struct {
	Job string
	// Hosts are the server certificate's names (TLSHosts); required.
	Hosts []string
	// Parties are the ids that get a client certificate <id>.crt: every
	// credential of the job, parties and administrators alike.
	Parties []string
	// CA signs everything; nil: a new job CA (NewTLSCA), whose key is then
	// part of the set.
	CA       *TLSCA
	Now      time.Time     // default time.Now()
	Validity time.Duration // default DefaultTLSValidity
}

// TLSFile is one file of a TLS set: its name in the output directory, its
// PEM content, and whether it is a private key (mode 0600, for its owner
// only) or a certificate (0644, public).
type TLSFile struct {
	Name   string
	Data   []byte
	Secret bool
	// Party is the id whose certificate or key this is; empty for the CA's
	// and the server's files.
	Party string
}

// TLSSet is a job's TLS material: the CA certificate, the CA key when the
// set made the CA, the server's pair and one pair per party.
type TLSSet struct {
	CA    *TLSCA
	Hosts []string // the server certificate's names, normalised
	Files []TLSFile
}

// GenerateTLSSet issues, in memory, everything a job needs for mutual TLS.
// Nothing is written: a bad option leaves no half-made directory.
func GenerateTLSSet(o TLSSetOptions) (*TLSSet, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	seen := map[string]bool{}
	for _, id := range o.Parties {
		switch {
		case !ValidID(id):
			return nil, fmt.Errorf("bus: tls: party id %q is not [a-z0-9-]{1,64}", id)
		case id == "ca" || id == "server":
			// Its files would be the CA's or the server's.
			return nil, fmt.Errorf("bus: tls: party id %q is reserved for the TLS files %s.crt and %s.key", id, id, id)
		case seen[id]:
			return nil, fmt.Errorf("bus: tls: party %s listed twice", id)
		}
		seen[id] = true
	}
	hosts, err := TLSHosts(o.Hosts)
	if err != nil {
		return nil, fmt.Errorf("bus: tls: server certificate: %w", err)
	}
	set := &TLSSet{CA: o.CA, Hosts: hosts}
	if set.CA == nil {
		if set.CA, err = NewTLSCA(o.Job, o.Now, o.Validity); err != nil {
			return nil, err
		}
		key, err := set.CA.KeyPEM()
		if err != nil {
			return nil, err
		}
		set.Files = append(set.Files, TLSFile{Name: TLSCACertFile, Data: set.CA.CertPEM()}, TLSFile{Name: TLSCAKeyFile, Data: key, Secret: true})
	} else {
		// A CA of one's own: the parties still need its certificate from
		// the same directory as the rest; its key stays where it is.
		set.Files = append(set.Files, TLSFile{Name: TLSCACertFile, Data: set.CA.CertPEM()})
	}
	cert, key, err := set.CA.IssueServer(o.Job, hosts, o.Now, o.Validity)
	if err != nil {
		return nil, err
	}
	set.Files = append(set.Files, TLSFile{Name: TLSServerCertFile, Data: cert}, TLSFile{Name: TLSServerKeyFile, Data: key, Secret: true})
	for _, id := range o.Parties {
		cert, key, err := set.CA.IssueClient(o.Job, id, o.Now, o.Validity)
		if err != nil {
			return nil, err
		}
		set.Files = append(set.Files, TLSFile{Name: id + ".crt", Data: cert, Party: id}, TLSFile{Name: id + ".key", Data: key, Secret: true, Party: id})
	}
	return set, nil
}

// WriteTLSFile writes one file of a TLS set at path, mode 0600 for a key
// and 0644 for a certificate, refusing to replace an existing file (as
// WriteSeedFile does): a certificate overwritten by mistake locks its
// party out, a key overwritten loses it.
func WriteTLSFile(path string, f TLSFile) error {
	mode := os.FileMode(0o644)
	if f.Secret {
		mode = 0o600
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("bus: tls: %w", err)
	}
	if _, err := out.Write(f.Data); err != nil {
		out.Close()
		return fmt.Errorf("bus: tls: writing %s: %w", path, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return fmt.Errorf("bus: tls: writing %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("bus: tls: writing %s: %w", path, err)
	}
	return nil
}

// CheckServerTLS verifies, before a configuration names them, that a
// server certificate and key of one's own ("take your own") belong
// together, chain to the CA clients will be checked against, and may serve
// TLS. Its result is the certificate's names, for the operator to compare
// with the addresses parties dial.
func CheckServerTLS(t ServerTLS, now time.Time) ([]string, error) {
	fail := func(err error) ([]string, error) {
		return nil, fmt.Errorf("bus: tls: server certificate %s: %w", t.CertFile, err)
	}
	caPEM, err := os.ReadFile(t.CAFile)
	if err != nil {
		return fail(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return fail(fmt.Errorf("CA file %s holds no PEM certificate", t.CAFile))
	}
	certPEM, err := os.ReadFile(t.CertFile)
	if err != nil {
		return fail(err)
	}
	cert, inter, err := parseChainPEM(certPEM)
	if err != nil {
		return fail(err)
	}
	keyPEM, err := os.ReadFile(t.KeyFile)
	if err != nil {
		return fail(err)
	}
	defer wipe(keyPEM)
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return fail(fmt.Errorf("key %s: %w", t.KeyFile, err))
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return fail(fmt.Errorf("key %s is not the certificate's", t.KeyFile))
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return fail(fmt.Errorf("does not verify against %s for server authentication: %w", t.CAFile, err))
	}
	names := slices.Clone(cert.DNSNames)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	return names, nil
}

// tlsSerial is a random 128-bit serial number, as RFC 5280 wants them
// unique per CA and CAs/Browser Forum unpredictable.
func tlsSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil // never 0
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

// parseCertPEM parses the first certificate of a PEM file.
func parseCertPEM(data []byte) (*x509.Certificate, error) {
	cert, _, err := parseChainPEM(data)
	return cert, err
}

// parseChainPEM parses a PEM file's certificates: the first, and the rest
// as intermediates (a server certificate file may carry its chain).
func parseChainPEM(data []byte) (*x509.Certificate, *x509.CertPool, error) {
	var leaf *x509.Certificate
	inter := x509.NewCertPool()
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, nil, err
		}
		if leaf == nil {
			leaf = c
		} else {
			inter.AddCert(c)
		}
	}
	if leaf == nil {
		return nil, nil, errors.New("no PEM certificate")
	}
	return leaf, inter, nil
}

// parseKeyPEM parses a PEM private key in the encodings CAs are kept in.
func parseKeyPEM(data []byte) (crypto.Signer, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM private key")
		}
		var (
			k   any
			err error
		)
		switch b.Type {
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		default:
			continue // EC PARAMETERS and the like precede the key
		}
		if err != nil {
			return nil, err
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("a %T key cannot sign", k)
		}
		return s, nil
	}
}

// publicKeysEqual compares the public keys of a certificate and a private
// key; every key type crypto/x509 parses has an Equal method.
func publicKeysEqual(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}
