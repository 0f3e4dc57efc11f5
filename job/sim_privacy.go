package job

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"graphfed/deploy"
	"graphfed/privacy"
	"graphfed/seeds"
)

// SimPrivacy configures every agent's privacy gate. A zero σ, clip or δ
// takes deploy.DefaultPrivacy's; whether boundary embeddings are released
// at all is the algorithm's decision (deploy.ExchangesEmbeddings), never
// a σ's.
type SimPrivacy struct {
	Delta      float64
	Budget     privacy.Budget         // Epsilon only: a per-node cap is NodeTarget's
	Accountant privacy.AccountantKind // 0: RDP
	ModelSigma float64
	ModelClip  float64
	GradSigma  float64 // σ2 on gradient estimators (CE-FedGNN)
	EmbSigma   float64 // σ0 on normalized embeddings (cefedgnn, fedgnn-st); must be positive when set
	DescSigma  float64 // σ on FedGSP's descriptor rows; 0: agent.DefaultDescriptorSigma
	// NodeTarget, when positive, is every client's per-node ε target for
	// boundary embeddings over EmbReleases planned releases
	// (deploy.PrivacyOptions.NodeTarget): σ0 is derived, EmbSigma unused.
	NodeTarget  float64
	EmbReleases int
	// NoiseSeed fixes the noise for a reproducible simulation and marks every
	// ledger entry non-private; nil draws noise from crypto/rand. Each
	// client gets its own stream (seeds.Party, stream seeds.Noise).
	NoiseSeed *uint64
	// ExportLedger, if set, is a file the whole job's ledger is copied to
	// after the run (the JetStream ledger of an embedded server is gone
	// once it stops), for graphfed audit --ledger.
	ExportLedger string
}

// options are client i's gate settings as deploy takes them.
func (p SimPrivacy) options(i int) (deploy.PrivacyOptions, error) {
	if p.Budget.NodeEpsilon != 0 {
		return deploy.PrivacyOptions{}, errors.New("privacy: a per-node ε budget is not supported in a simulation")
	}
	o := deploy.DefaultPrivacy()
	if p.Accountant != 0 {
		o.Accountant = p.Accountant.String()
	}
	o.BudgetEpsilon = p.Budget.Epsilon
	o.NodeTarget, o.EmbReleases = p.NodeTarget, p.EmbReleases
	for _, f := range []struct{ dst, v *float64 }{
		{&o.Delta, &p.Delta}, {&o.ModelSigma, &p.ModelSigma}, {&o.ModelClip, &p.ModelClip},
		{&o.GradSigma, &p.GradSigma}, {&o.EmbSigma, &p.EmbSigma}, {&o.DescriptorSigma, &p.DescSigma},
	} {
		if *f.v != 0 {
			*f.dst = *f.v
		}
	}
	if p.NoiseSeed != nil {
		s := seeds.Party(*p.NoiseSeed, i, seeds.Noise)
		o.NoiseSeed = &s
	}
	return o, o.Validate()
}

// exportLedger copies a job's ledger entries to the file path (none when
// path is empty). The export is a copy of this run's stream: a previous
// run's file in the same place is replaced, not appended to.
func exportLedger(ctx context.Context, path string, entries []privacy.Entry) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("export ledger: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("export ledger: %w", err)
	}
	fl, err := privacy.OpenFileLedger(path)
	if err != nil {
		return fmt.Errorf("export ledger: %w", err)
	}
	for _, e := range entries {
		if err := fl.Append(ctx, e); err != nil {
			fl.Close()
			return fmt.Errorf("export ledger: %w", err)
		}
	}
	if err := fl.Close(); err != nil {
		return fmt.Errorf("export ledger: %w", err)
	}
	return nil
}
