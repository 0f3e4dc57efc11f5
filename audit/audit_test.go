package audit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"graphfed/privacy"
	"graphfed/privacy/ledgertest"
)

var goldenLedger = filepath.Join("..", "privacy", "testdata", "ledger_golden.jsonl")

// The golden ledger file audited as graphfed audit does: two banks of
// job-1, the ledger's calibrated distances, and the plot and page written
// when asked for.
func TestRunLedgerFile(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Ledger, cfg.PNG, cfg.HTML, cfg.TargetEpsilon = goldenLedger, filepath.Join(dir, "eps.png"), filepath.Join(dir, "audit.html"), 8
	r, err := Run(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if r.Clients != 2 || len(r.Report.Rounds) != 2 || r.Report.Kind != privacy.RDP || len(r.Claims) == 0 {
		t.Fatalf("result: %d clients, %d rounds, %s, %d claims", r.Clients, len(r.Report.Rounds), r.Report.Kind, len(r.Claims))
	}
	m, p := r.Metrics(), r.Privacy()
	for _, k := range []string{"entries", "releases", "nodes", "records", "rejected", "chain_breaks", "aggregator_records", "ledger_integrity"} {
		if _, ok := m[k]; !ok {
			t.Errorf("metrics lack %s", k)
		}
	}
	if p["delta"] != 1e-4 || p["accountant"] != "rdp" || p["rho_source"] != "ledger calibration" || p["rho_p50"] != 0.05 ||
		p["epsilon_p100"] == nil || p["epsilon_model"] == nil || p["integrity"] != true {
		t.Fatalf("privacy %v", p)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if text := b.String(); !strings.HasPrefix(text, "privacy audit: rdp accountant") ||
		!strings.HasSuffix(text, "plot written to "+cfg.PNG+"\naudit page written to "+cfg.HTML+"\n") {
		t.Fatalf("text:\n%s", text)
	}
	page, err := os.ReadFile(cfg.HTML)
	if err != nil || !strings.Contains(string(page), goldenLedger) {
		t.Fatalf("audit page names no source (%v)", err)
	}
	if st, err := os.Stat(cfg.PNG); err != nil || st.Size() == 0 {
		t.Fatalf("plot: %v", err)
	}
}

// Given distances replace the ledger's; the exact accountant and δ are
// the ones asked for.
func TestRunGivenRho(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Ledger, cfg.Rho, cfg.Accountant, cfg.Delta = goldenLedger, "50=0.0533, 90=0.1466", "exact", 1e-5
	r, err := Run(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	p := r.Privacy()
	if p["rho_source"] != "given" || p["rho_p90"] != 0.1466 || p["accountant"] != "exact" || p["delta"] != 1e-5 {
		t.Fatalf("privacy %v", p)
	}
}

// What cannot be audited is refused before any ledger is read, with the
// flag to fix.
func TestRunRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no source", func(c *Config) {}, "--ledger PATH or --nats URL --job ID is required"},
		{"two sources", func(c *Config) { c.Ledger, c.NATS = goldenLedger, "nats://127.0.0.1:1" }, "mutually exclusive"},
		{"nats without job", func(c *Config) { c.NATS = "nats://127.0.0.1:1" }, "--nats needs --job"},
		{"bad job id", func(c *Config) { c.NATS, c.Job = "nats://127.0.0.1:1", "Job 1" }, "does not match"},
		{"missing ledger file", func(c *Config) { c.Ledger = "/nonexistent.jsonl" }, "nonexistent"},
		{"bad rho", func(c *Config) { c.Ledger, c.Rho = goldenLedger, "50" }, `--rho: "50" is not percentile=distance`},
		{"unknown accountant", func(c *Config) { c.Ledger, c.Accountant = goldenLedger, "bogus" }, "bogus"},
		{"zero delta", func(c *Config) { c.Ledger, c.Delta = goldenLedger, 0 }, "audit: "},
		{"missing heads", func(c *Config) { c.Ledger, c.ExpectHeads = goldenLedger, "/nonexistent.json" }, "--expect-heads"},
		{"missing keyring", func(c *Config) { c.Ledger, c.Keyring = goldenLedger, "/nonexistent.json" }, "--keyring"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tc.change(&cfg)
			_, err := Run(context.Background(), cfg, zerolog.Nop())
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "audit: ") {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

func TestParseRho(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []privacy.RhoAt
		ok   bool
	}{
		{"", nil, true},
		{"  ", nil, true},
		{"50=0.0533,90=0.1466", []privacy.RhoAt{{Q: 50, Rho: 0.0533}, {Q: 90, Rho: 0.1466}}, true},
		{" 50=0.1 , 99=0.8913 ", []privacy.RhoAt{{Q: 50, Rho: 0.1}, {Q: 99, Rho: 0.8913}}, true},
		{"50", nil, false},
		{"50=x", nil, false},
		{"q=0.1", nil, false},
		{"50=0.1,", nil, false},
	} {
		got, err := ParseRho(tc.in)
		if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("ParseRho(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// A ledger with secure-aggregation records: the audit reports per bank the
// rounds it recorded and, per channel, the rounds aggregated securely, in
// the text and in --json's metrics and privacy objects.
func TestRunSecureAggregation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	l, err := privacy.OpenFileLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ledgertest.SecAggEntries() {
		if err := l.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Ledger = path
	r, err := Run(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	p := r.Privacy()
	words, _ := p["secure_aggregation"].([]string)
	if p["secure_rounds_model"] != 1 || p["rounds_model"] != 1 || p["secure_threshold_model"] != 2 || p["secure_cohort_model"] != 3 ||
		len(words) != 1 || !strings.HasPrefix(words[0], "model channel: aggregated securely in 1 of 1 rounds (t = 2 of 3 banks)") {
		t.Fatalf("privacy %v", p)
	}
	if _, ok := p["secure_rounds_grad"]; ok {
		t.Errorf("a channel without releases reported: %v", p)
	}
	b, err := json.Marshal(r.Metrics())
	if err != nil || !strings.Contains(string(b), `"secure_aggregation":{"records":3,"banks":[{"job":"job-1","client":"bank-10","rounds":[2],"t":2,"cohort":3},`) {
		t.Fatalf("metrics %s, %v", b, err)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), "job-1  bank-3   1–2     1          2  3") {
		t.Fatalf("text (%v):\n%s", err, text.String())
	}
	// Without records, none of it.
	cfg.Ledger = goldenLedger
	if r, err = Run(context.Background(), cfg, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Privacy()["secure_aggregation"]; ok {
		t.Errorf("secure aggregation reported for a ledger without records")
	}
	if _, ok := r.Metrics()["secure_aggregation"]; ok {
		t.Errorf("secure aggregation in the metrics of a ledger without records")
	}
}
