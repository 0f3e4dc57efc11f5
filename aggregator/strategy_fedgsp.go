package aggregator

import (
	"slices"
	"sort"
)

// fedgspStrategy is FedGSP's server (appendix III; summary "Server"):
// collaboration graphs over the joined clients, W for the MLP and c_0 and
// W^(k) for each order's coefficients c_k, all initialised to
// (11ᵀ − I)/(M − 1). At the close of every round r < GraphRounds each
// graph takes one alternating pass (graphStep) on the descriptors of the
// clients that sent theirs; from then on the graphs are frozen and the
// descriptors forgotten. Every close sends each client of the round its
// own model: parameter segment by segment, Σ_j w_ij θ_j over the round's
// contributors j, the row renormalised over them.
//
// Parameter layout (the FedGSP contract): the first (K+1)·Dim parameters
// are c_0..c_K, the rest the MLP. K and Dim come from the first
// descriptors accepted (or FedGSPConfig.Orders and Dim); until they are
// known, every parameter is mixed through W. Late updates are never
// folded in: each client's model mixes the round's own contributions.
type fedgspStrategy struct {
	cfg FedGSPConfig
	ids []string // the joined clients, sorted: the graphs' index

	// The layout of parameters and descriptors; 0: not known yet
	// (principal is known only from descriptors).
	orders, principal, dim int

	// graphs are W, then W^(1)..W^(K) once K is known, each len(ids)²
	// row-major; nil until the first close.
	graphs [][]float64
	// desc are the clients' descriptors, kept until the graphs freeze.
	desc   map[string]Descriptor
	frozen bool
}

func newFedGSPStrategy(cfg FedGSPConfig) *fedgspStrategy {
	return &fedgspStrategy{cfg: cfg, orders: cfg.Orders, dim: cfg.Dim, desc: map[string]Descriptor{}}
}

func (s *fedgspStrategy) Join(j Join) string {
	i, found := slices.BinarySearch(s.ids, j.Client)
	if found {
		return ""
	}
	s.ids = slices.Insert(s.ids, i, j.Client)
	// A client joining after the graphs exist takes the plain mean of the
	// others; nobody takes from it until the graphs next update.
	n := len(s.ids)
	for g, w := range s.graphs {
		nw := make([]float64, n*n)
		for a := range n {
			for b := range n {
				switch {
				case a == i && b != i:
					nw[a*n+b] = 1 / float64(n-1)
				case a != i && b != i:
					nw[a*n+b] = w[old(a, i)*(n-1)+old(b, i)]
				}
			}
		}
		s.graphs[g] = nw
	}
	return ""
}

// old is the index before the insertion at i of index a ≠ i.
func old(a, i int) int {
	if a > i {
		return a - 1
	}
	return a
}

// Check drops updates of the wrong shape and descriptors that do not fit
// the job's layout: a (K+1)·Dim coefficient block larger than the model,
// or another K, kpr or Dim than the layout already fixed.
func (s *fedgspStrategy) Check(u UpdateIn, numParams int) string {
	if r := checkShape(u, numParams); r != "" {
		return r
	}
	if d := u.Descriptors; d != nil {
		if d.check() != nil || (d.Orders+1)*d.Dim > numParams ||
			s.orders > 0 && (d.Orders != s.orders || d.Dim != s.dim) || s.principal > 0 && d.Principal != s.principal {
			return ReasonDescriptorShape
		}
	}
	return ""
}

// ReasonDescriptorShape drops an update whose descriptors do not fit the
// job (Dropped.Reason).
const ReasonDescriptorShape = "descriptor_shape"

// takeDescriptors keeps a client's descriptors (Check accepted them), the
// first ones it sends, while the graphs still learn; the first ones of
// the job fix the layout.
func (s *fedgspStrategy) takeDescriptors(client string, d Descriptor) {
	if _, have := s.desc[client]; have || s.frozen || s.cfg.GraphRounds == 0 {
		return
	}
	if s.principal == 0 {
		if s.orders == 0 && s.graphs != nil {
			for range d.Orders {
				s.graphs = append(s.graphs, uniformGraph(len(s.ids)))
			}
		}
		s.orders, s.principal, s.dim = d.Orders, d.Principal, d.Dim
	}
	d.Rows = slices.Clone(d.Rows)
	s.desc[client] = d
}

func (s *fedgspStrategy) FoldsLate() bool    { return false }
func (s *fedgspStrategy) Open(uint64) string { return "" }
func (s *fedgspStrategy) Payload() []byte    { return nil }

func (s *fedgspStrategy) Close(in CloseInput) Outcome {
	if s.graphs == nil {
		for range 1 + s.orders {
			s.graphs = append(s.graphs, uniformGraph(len(s.ids)))
		}
	}
	learned := !s.frozen && in.Round < uint64(s.cfg.GraphRounds)
	if learned {
		s.learn()
	}
	if in.Round+1 >= uint64(s.cfg.GraphRounds) {
		s.frozen, s.desc = true, map[string]Descriptor{}
	}
	out := s.mix(in)
	if learned {
		out.Mix = &Mixed{Collab: s.collabRows()}
	}
	return out
}

// collabRows is the overall graph W by client, for the round's record.
func (s *fedgspStrategy) collabRows() map[string][]float64 {
	n := len(s.ids)
	rows := make(map[string][]float64, n)
	for i, id := range s.ids {
		rows[id] = append([]float64(nil), s.graphs[0][i*n:(i+1)*n]...)
	}
	return rows
}

// learn updates every graph on the rows of the clients with descriptors
// (at least two of them); the others keep their rows, and take nothing
// from the learned rows.
func (s *fedgspStrategy) learn() {
	var with []int
	for i, id := range s.ids {
		if _, ok := s.desc[id]; ok {
			with = append(with, i)
		}
	}
	if len(with) < 2 {
		return
	}
	n, m := len(s.ids), len(with)
	for g, w := range s.graphs {
		sub := make([]float64, 0, m*m)
		p := make([][]float32, m)
		q := make([][]float32, m)
		var l int
		for a, i := range with {
			for _, j := range with {
				sub = append(sub, w[i*n+j])
			}
			p[a], q[a], l = s.desc[s.ids[i]].block(g)
		}
		nw := graphStep(sub, p, q, l, s.cfg.Alpha, s.cfg.Beta, s.cfg.Gamma)
		for a, i := range with {
			clear(w[i*n : (i+1)*n])
			for b, j := range with {
				w[i*n+j] = nw[a*m+b]
			}
		}
	}
}

// span is a parameter range [lo, hi).
type span struct{ lo, hi int }

// segments are the parameter ranges each graph mixes: W the c_0 block and
// the MLP, W^(k) the c_k block; everything through W while the layout is
// unknown or does not fit the model.
func (s *fedgspStrategy) segments(numParams int) [][]span {
	if s.orders == 0 || (s.orders+1)*s.dim > numParams || len(s.graphs) != s.orders+1 {
		return [][]span{{{0, numParams}}}
	}
	d := s.dim
	out := [][]span{{{0, d}, {(s.orders + 1) * d, numParams}}}
	for k := 1; k <= s.orders; k++ {
		out = append(out, []span{{k * d, (k + 1) * d}})
	}
	return out
}

// mix sends each client of the round (contributor or withheld) its own
// model. A row with no weight on this round's contributors falls back to
// their plain mean.
func (s *fedgspStrategy) mix(in CloseInput) Outcome {
	var out Outcome
	var from []int // the contributors' graph indices, in sorted order
	var thetas [][]float32
	for _, ct := range in.In {
		out.Weight += ct.Weight
		if i, ok := slices.BinarySearch(s.ids, ct.Client); ok && len(ct.Params) == in.NumParams {
			from, thetas = append(from, i), append(thetas, ct.Params)
		}
	}
	if len(from) == 0 {
		return out
	}
	n := len(s.ids)
	segs := s.segments(in.NumParams)
	acc := make([]float64, in.NumParams)
	for _, ct := range in.In {
		i, ok := slices.BinarySearch(s.ids, ct.Client)
		if !ok {
			continue
		}
		p := PublishModel{To: ct.Client, Params: make([]float32, in.NumParams)}
		for g, spans := range segs {
			w := s.graphs[g]
			var mass float64
			for _, j := range from {
				mass += w[i*n+j]
			}
			for _, sp := range spans {
				clear(acc[sp.lo:sp.hi])
			}
			for c, j := range from {
				wij := 1 / float64(len(from))
				if mass > 0 {
					wij = w[i*n+j] / mass
				}
				if wij == 0 {
					continue
				}
				for _, sp := range spans {
					for x := sp.lo; x < sp.hi; x++ {
						acc[x] += wij * float64(thetas[c][x])
					}
				}
			}
			for _, sp := range spans {
				for x := sp.lo; x < sp.hi; x++ {
					p.Params[x] = float32(acc[x])
				}
			}
		}
		out.Models = append(out.Models, p)
	}
	sort.Slice(out.Models, func(a, b int) bool { return out.Models[a].To < out.Models[b].To })
	return out
}

// Graph returns a copy of graph g (0: W, k: W^(k)) over Clients, row-major;
// nil before the first close or for an order the layout lacks.
func (s *fedgspStrategy) Graph(g int) []float64 {
	if g < 0 || g >= len(s.graphs) {
		return nil
	}
	return slices.Clone(s.graphs[g])
}
