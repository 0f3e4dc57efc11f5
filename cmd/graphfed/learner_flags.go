package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"graphfed/deploy"
	"graphfed/job"
)

// learnerFlags are the one learner option set `graphfed sim` and
// `graphfed agent` share: every task's learner settings, bound into
// deploy.LearnerOptions from its defaults (the library's, typed once).
type learnerFlags struct {
	o     deploy.LearnerOptions
	multi multiGNNFlags
}

func (l *learnerFlags) register(f *pflag.FlagSet) {
	l.o = deploy.DefaultLearnerOptions()
	n, c, a, r, g := &l.o.Node, &l.o.CEFed, &l.o.AML, &l.o.Rec.Model, &l.o.FedGSP
	f.StringVar(&n.Model, "model", n.Model, "node: gcn or sage")
	f.IntVar(&n.Hidden, "hidden", n.Hidden, "node: hidden units")
	f.Float64Var(&n.LR, "lr", n.LR, "node: Adam learning rate")
	f.Float64Var(&n.WeightDecay, "weight-decay", n.WeightDecay, "node: L2 weight decay")
	f.Float64Var(&n.Dropout, "dropout", n.Dropout, "node: dropout probability")
	f.Float64Var(&n.Prox, "mu", deploy.DefaultProx, "node: FedProx's proximal weight μ (--algo fedprox)")
	f.StringVar(&l.o.NodeKind, "learner", "", "node learner: adam (GCN/SAGE with Adam) or cefed (CE-FedGNN's SAGE-mean with moving averages and Eq. 9 updates); default: cefed for cefedgnn and fedgnn-st, adam otherwise")
	f.Float64Var(&c.Gamma, "gamma", c.Gamma, "CE-FedGNN moving-average rate γ of the boundary embedding estimators (node --learner cefed, and aml; fedgnn-st: 1)")
	f.Float64Var(&c.Beta, "beta", c.Beta, "node (--learner cefed): CE-FedGNN moving-average rate β of the gradient estimator")
	f.Float64Var(&c.LR, "eta", c.LR, "node (--learner cefed): CE-FedGNN step size η")
	f.StringVar(&g.Preset, "fedgsp-preset", g.Preset, "node (fedgsp): settings to start from: select (sim: each client scores --fedgsp-grid on its validation nodes, each score a released scalar, "+
		"and the best --fedgsp-finalists run as short federated trials; a lone agent: cora's row), auto (legacy: by the data's name, else its train nodes' homophily), or "+
		strings.Join(job.FedGSPPresets(), ", ")+"; the --fedgsp-* flags given override it")
	l.registerFedGSP(f)
	f.StringVar(&a.Kind, "gnn", a.Kind, "aml: message passing, gin, sage or gcn")
	f.IntVar(&a.BatchSize, "batch", a.BatchSize, "aml: seed transactions per local step")
	f.IntVar(&a.Hidden, "aml-hidden", a.Hidden, "aml: hidden units of the transaction GNN")
	f.Float64Var(&a.LR, "aml-lr", a.LR, "aml: Adam learning rate")
	f.IntSliceVar(&a.FanOut, "fanout", a.FanOut, "aml: neighbours sampled per node at each layer")
	f.StringVar(&a.Opt, "aml-opt", a.Opt, "aml: optimizer, adam or cefed (Algorithm 1: G ← (1−β)G + β∇, W ← W − ηG, sharing G under cefedgnn and fedgnn-st); default adam")
	f.Float64Var(&a.Beta, "aml-beta", a.Beta, "aml (--aml-opt cefed): moving-average rate β of the gradient estimator (fedgnn-st: 1)")
	f.Float64Var(&a.Eta, "aml-eta", a.Eta, "aml (--aml-opt cefed): step size η")
	f.IntVar(&a.ExchangeEvery, "emb-every", 0, "aml (cefedgnn, fedgnn-st): release boundary embeddings every this many rounds; fewer releases allow less noise for the same ε. 0: every round for hidden layers, 3 releases over the job for --emb-release features")
	f.StringVar(&a.Release, "emb-release", a.Release, "aml (cefedgnn, fedgnn-st): what a boundary account's release carries: hidden (its per-layer estimates), features (layer 0: its structural features as its own bank computes them from all its transactions) or all (both)"+federatedNote)
	f.IntVar(&a.ReleaseDims, "emb-dims", a.ReleaseDims, "aml (cefedgnn, fedgnn-st): release this many coordinates of each layer's boundary estimate (its projection on a basis all banks derive alike) instead of all --aml-hidden; fewer coordinates keep more signal under the same noise. 0: all"+federatedNote)
	f.Float64Var(&a.PoolWeight, "emb-pool-weight", a.PoolWeight, "aml (cefedgnn, fedgnn-st): least weight of a foreign account's newest release in the running mean of its releases a bank reads (the n-th enters with max(1/n, this)); 1 reads the latest release only")
	f.Float64Var(&a.PosFraction, "pos-fraction", a.PosFraction, "aml: share of laundering transactions in each training batch, unweighted, with scores shifted back to the class-weighted decision (negative: uniform batches)")
	f.IntVar(&a.EvalSample, "eval-sample", a.EvalSample, "aml: per-round evaluation scores every laundering transaction and at most this many legitimate ones per bank and split, weighted back to the split (negative: all); the final model is scored on everything")
	l.multi.register(f, "aml: ", federatedNote)
	f.IntVar(&l.o.Rec.Phi, "phi", l.o.Rec.Phi, "rec: low-pass cut-off Φ, eigenpairs of each client graph (the aggregator's --phi)")
	f.Uint64Var(&l.o.Rec.EigenSeed, "eigen-seed", l.o.Rec.EigenSeed, "rec: eigensolver seed (a deployed client; the simulation uses the job's seed)")
	f.IntVar(&r.Dim, "emb-dim", r.Dim, "rec: embedding width d")
	f.IntVar(&r.BatchSize, "rec-batch", r.BatchSize, "rec: positive interactions per step")
	f.IntVar(&r.Negatives, "negatives", r.Negatives, "rec: sampled negatives per positive")
	f.IntVar(&r.PoolHidden, "pool-hidden", r.PoolHidden, "rec: hidden width of the pooling MLP (0: one affine map)")
	f.IntVar(&r.PredHidden, "pred-hidden", r.PredHidden, "rec: hidden width of the predictive MLP (0: one affine map)")
	f.Float64Var(&r.LR, "rec-lr", r.LR, "rec: RMSProp learning rate")
	f.Float64Var(&r.Tau, "tau", r.Tau, "rec: BC-loss temperature τ")
	f.Float64Var(&r.Omega, "omega", r.Omega, "rec: weight ω of the server's margin (Eq. 15)")
	f.Float64Var(&r.Gamma, "margin-gamma", r.Gamma, "rec: margin strength γ (Eq. 8)")
	f.BoolVar(&r.MarginFallback, "margin-fallback", r.MarginFallback, "rec: where Eq. 8's guard π − R̂ binds (no gradient), use ArcFace's fallback logit cos R̂ − M̃·sin M̃")
	f.IntVar(&r.EvalUsers, "eval-users", r.EvalUsers, "rec: test users ranked per client, a fixed seeded sample (0: all)")
	f.IntVar(&r.ValUsers, "val-users", r.ValUsers, "rec: validation users ranked per client (--split random:…), a fixed seeded sample (0: all); model selection only")
}

// registerFedGSP adds the FedGSP client settings given on top of the
// preset; each stays unset until given.
func (l *learnerFlags) registerFedGSP(f *pflag.FlagSet) {
	s, d := &l.o.FedGSP.Set, job.DefaultFedGSPClient()
	help := func(what string, def any) string {
		return fmt.Sprintf("FedGSP %s (default: the preset's; cora's %v)", what, def)
	}
	f.Var(unsetInt(&s.Orders), "fedgsp-orders", help("polynomial orders K", d.Orders))
	f.Var(unsetFloat(&s.Tau), "fedgsp-tau", help("τ: weight of the homophily basis P^kX against the heterophily basis U_k", d.Tau))
	f.Var(unsetInt(&s.Hidden), "fedgsp-hidden", help("MLP hidden width", d.Hidden))
	f.Var(unsetInt(&s.Layers), "fedgsp-layers", help("MLP dense layers", d.Layers))
	f.Var(unsetFloat(&s.LR1), "fedgsp-lr", help("Adam learning rate of the MLP", d.LR1))
	f.Var(unsetFloat(&s.WD1), "fedgsp-wd", help("weight decay of the MLP", d.WD1))
	f.Var(unsetFloat(&s.LR2), "fedgsp-coef-lr", help("Adam learning rate of the per-order coefficients c_k", d.LR2))
	f.Var(unsetFloat(&s.WD2), "fedgsp-coef-wd", help("weight decay of the coefficients", d.WD2))
	f.Var(unsetFloat(&s.DropoutC), "fedgsp-coef-dropout", help("dropout on the bases before the coefficients", d.DropoutC))
	f.Var(unsetFloat(&s.DropoutM), "fedgsp-dropout", help("dropout before every dense layer", d.DropoutM))
	f.Var(unsetInt(&s.Principal), "fedgsp-principal", help("principal directions per basis in the descriptors", d.Principal))
	unsetBoolVar(f, &s.RawFeatures, "fedgsp-raw-features", "FedGSP: keep the features as given instead of row-normalising non-negative ones (default: the preset's)")
	unsetBoolVar(f, &s.NoBias, "fedgsp-no-bias", "FedGSP: Dense layers without biases, the authors' bias='none' (default: the preset's)")
}

// options are the learner options as given: the multi-GNN switches
// folded in, and --gamma, CE-FedGNN's γ, for the AML learner too.
func (l *learnerFlags) options() deploy.LearnerOptions {
	o := l.o
	o.AML.Gamma = o.CEFed.Gamma
	o.AML.Ports, o.AML.TimeDeltas, o.AML.EgoIDs = l.multi.ports(), l.multi.timeDeltas(), l.multi.egoIDs()
	return o
}
