package aggregator

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/vmihailenco/msgpack/v5"

	"graphfed/bus"
)

// lpsfedStrategy is LPSFed (Algorithms 1–3): each round-open carries the
// reference kernel K^R; at close the contributors' MLPs are averaged
// (θ̄, the plain mean of Eq. 13), their released ρ_c min–max normalized
// (Eq. 12), and each contributor is sent θ̄·ρ̄_c + θ^c·(1 − ρ̄_c) and its
// personalized margin M̄·ρ̄_c + M^c·(1 − ρ̄_c) (Eq. 14). Late updates are
// never folded in: personalization mixes a client's own update of the
// round, and a late one has nothing to be mixed into.
type lpsfedStrategy struct {
	cfg     LPSFedConfig
	clients map[string]*lpsfedClient

	kernel        []float64 // K^R; nil until built
	kernelVersion uint64    // the round K^R was built in
}

type lpsfedClient struct {
	users, items, edges int
	hasRho              bool
	rho                 float64 // last released ρ_c
}

func newLPSFedStrategy(cfg LPSFedConfig) *lpsfedStrategy {
	if cfg.Reference == nil {
		cfg.Reference = GNMKReference
	}
	return &lpsfedStrategy{cfg: cfg, clients: map[string]*lpsfedClient{}}
}

func (s *lpsfedStrategy) Join(j Join) string {
	if j.Users < 0 || j.Items < 0 || j.Edges < 0 {
		return "negative subgraph counts"
	}
	c, ok := s.clients[j.Client]
	if !ok {
		c = &lpsfedClient{}
		s.clients[j.Client] = c
	}
	c.users, c.items, c.edges = j.Users, j.Items, j.Edges
	return ""
}

func (s *lpsfedStrategy) Check(u UpdateIn, numParams int) string { return checkShape(u, numParams) }

func (s *lpsfedStrategy) FoldsLate() bool { return false }

// Open builds K^R before round 1 and, with RefEvery, every RefEvery rounds
// from a fresh seed. Without a reference every client falls back to ρ̄ = 1:
// the failure is reported and the job goes on rather than stall.
func (s *lpsfedStrategy) Open(r uint64) string {
	if s.kernel != nil && (s.cfg.RefEvery == 0 || (r-1)%uint64(s.cfg.RefEvery) != 0) {
		return ""
	}
	k, err := s.cfg.Reference(s.referenceStats(), s.cfg.Phi, s.cfg.Seed+r)
	if err != nil || len(k) != s.cfg.Phi || !allFinite(k) {
		return fmt.Sprintf("reference kernel: %v (len %d)", err, len(k))
	}
	s.kernel, s.kernelVersion = k, r
	return ""
}

// Payload is the msgpack bus.LPSFedRound of the current K^R.
func (s *lpsfedStrategy) Payload() []byte {
	if s.kernel == nil {
		return nil
	}
	kr := make(bus.Vector, len(s.kernel))
	for i, v := range s.kernel {
		kr[i] = float32(v)
	}
	b, err := msgpack.Marshal(&bus.LPSFedRound{Kernel: kr, Version: s.kernelVersion})
	if err != nil {
		return nil // a vector and an integer always encode
	}
	return b
}

// referenceStats are the counts of G_R: the mean over joined clients that
// sent counts, or the fixed assumptions in strict mode.
func (s *lpsfedStrategy) referenceStats() ReferenceStats {
	if s.cfg.Strict {
		return s.cfg.StrictStats
	}
	var u, i, e, n int
	for _, id := range sortedKeys(s.clients) {
		c := s.clients[id]
		if c.users > 0 && c.items > 0 && c.edges > 0 {
			u, i, e, n = u+c.users, i+c.items, e+c.edges, n+1
		}
	}
	if n == 0 {
		return s.cfg.StrictStats
	}
	return ReferenceStats{Users: (u + n/2) / n, Items: (i + n/2) / n, Edges: (e + n/2) / n}
}

func (s *lpsfedStrategy) Close(in CloseInput) Outcome {
	// ρ_c is released once per K^R: a contributor's last one stands until
	// it sends another.
	for _, ct := range in.In {
		if c := s.clients[ct.Client]; c != nil && ct.HasRho {
			c.hasRho, c.rho = true, ct.Rho
		}
	}
	var out Outcome
	acc := make([]float64, in.NumParams)
	var n, mn int
	var msum float64
	for _, ct := range in.In { // sorted by client: the sums do not depend on arrival order
		out.Weight += ct.Weight
		if ct.Params == nil {
			continue // withheld: present, nothing to mix
		}
		n++
		for i, x := range ct.Params {
			acc[i] += float64(x)
		}
		if ct.HasMargin {
			msum += ct.Margin
			mn++
		}
	}
	mx := &Mixed{Rho: map[string]float64{}, RhoBar: map[string]float64{}}
	if mn > 0 {
		mx.GlobalMargin, mx.HasMargin = msum/float64(mn), true
	}
	// ρ̄ over the contributors that ever released a ρ_c; the others take
	// the global model whole, ρ̄ = 1.
	var have []string
	var rhos []float64
	for _, ct := range in.In {
		mx.RhoBar[ct.Client] = 1
		if c := s.clients[ct.Client]; c != nil && c.hasRho {
			have = append(have, ct.Client)
			rhos = append(rhos, c.rho)
			mx.Rho[ct.Client] = c.rho
		}
	}
	for i, v := range normalizeRho(rhos) {
		if !s.cfg.Uniform {
			mx.RhoBar[have[i]] = v
		}
	}
	out.Mix = mx
	if in.Secure {
		return s.closeSecure(in, mx, out)
	}
	if n == 0 {
		return out
	}
	avg := make([]float32, in.NumParams)
	for i, x := range acc {
		avg[i] = float32(x / float64(n))
	}
	for _, ct := range in.In {
		r := mx.RhoBar[ct.Client]
		p := PublishModel{To: ct.Client, Params: make([]float32, in.NumParams)}
		for i, g := range avg {
			if ct.Params == nil {
				p.Params[i] = g
				continue
			}
			p.Params[i] = float32(float64(g)*r + float64(ct.Params[i])*(1-r))
		}
		if mx.HasMargin {
			p.HasMargin, p.Margin = true, mx.GlobalMargin
			if ct.Params != nil && ct.HasMargin {
				p.Margin = mx.GlobalMargin*r + ct.Margin*(1-r)
			}
		}
		out.Models = append(out.Models, p)
	}
	return out
}

// lpsfedState is the strategy's durable state.
type lpsfedState struct {
	Kernel        []float64           `json:"kernel,omitempty"`
	KernelVersion uint64              `json:"kernel_version,omitempty"`
	Clients       []lpsfedClientState `json:"clients,omitempty"` // sorted by ID
}

type lpsfedClientState struct {
	ID     string  `json:"id"`
	Users  int     `json:"users,omitempty"`
	Items  int     `json:"items,omitempty"`
	Edges  int     `json:"edges,omitempty"`
	HasRho bool    `json:"has_rho,omitempty"`
	Rho    float64 `json:"rho,omitempty"`
}

func (s *lpsfedStrategy) State() (json.RawMessage, error) {
	st := lpsfedState{Kernel: slices.Clone(s.kernel), KernelVersion: s.kernelVersion}
	for _, id := range sortedKeys(s.clients) {
		c := s.clients[id]
		st.Clients = append(st.Clients, lpsfedClientState{ID: id, Users: c.users, Items: c.items, Edges: c.edges, HasRho: c.hasRho, Rho: c.rho})
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("lpsfed state: %w", err)
	}
	return b, nil
}

func (s *lpsfedStrategy) SetState(raw json.RawMessage, clients []string) error {
	var st lpsfedState
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &st); err != nil {
			return fmt.Errorf("lpsfed state: %w", err)
		}
	}
	switch {
	case st.Kernel == nil && st.KernelVersion != 0, st.Kernel != nil && st.KernelVersion == 0:
		return fmt.Errorf("lpsfed state: kernel of %d values has version %d", len(st.Kernel), st.KernelVersion)
	case st.Kernel != nil && len(st.Kernel) != s.cfg.Phi:
		return fmt.Errorf("lpsfed state: kernel of %d values, phi is %d", len(st.Kernel), s.cfg.Phi)
	case !allFinite(st.Kernel):
		return fmt.Errorf("lpsfed state: kernel value not finite")
	}
	for i, c := range st.Clients {
		switch {
		case i > 0 && st.Clients[i-1].ID >= c.ID:
			return fmt.Errorf("lpsfed state: clients not sorted and unique at %q", c.ID)
		case !slices.Contains(clients, c.ID):
			return fmt.Errorf("lpsfed state: client %q never joined", c.ID)
		case c.Users < 0 || c.Items < 0 || c.Edges < 0:
			return fmt.Errorf("lpsfed state: client %q has negative counts", c.ID)
		case !allFinite([]float64{c.Rho}) || !c.HasRho && c.Rho != 0:
			return fmt.Errorf("lpsfed state: client %q has ρ %v (released %v)", c.ID, c.Rho, c.HasRho)
		}
		s.clients[c.ID] = &lpsfedClient{users: c.Users, items: c.Items, edges: c.Edges, hasRho: c.HasRho, rho: c.Rho}
	}
	s.kernel, s.kernelVersion = slices.Clone(st.Kernel), st.KernelVersion
	return nil
}

func allFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// closeSecure is the round's close under secure aggregation: the
// aggregator holds θ̄ (the survivors' unweighted mean, in.Sum) and no
// client's θ_c, so each client gets θ̄ with its ρ̄_c and mixes itself
// (bus.Model.Mix); the personalized margin needs only released scalars.
func (s *lpsfedStrategy) closeSecure(in CloseInput, mx *Mixed, out Outcome) Outcome {
	if in.Sum == nil {
		return out
	}
	for _, ct := range in.In {
		r := mx.RhoBar[ct.Client]
		p := PublishModel{To: ct.Client, Params: in.Sum.Params, Mix: true, RhoBar: r}
		if mx.HasMargin {
			p.HasMargin, p.Margin = true, mx.GlobalMargin
			if ct.HasMargin {
				p.Margin = mx.GlobalMargin*r + ct.Margin*(1-r)
			}
		}
		out.Models = append(out.Models, p)
	}
	return out
}
