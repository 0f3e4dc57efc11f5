package aggregator

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// optRounds closes three rounds of a mean strategy with optimizer o: the
// first publishes its mean as is (no global model yet), the next two step
// from the model the previous one published. Each round's mean is its
// two clients' (equal weights): means[r].
func optRounds(t *testing.T, o ServerOpt, means [][]float32) [][]float32 {
	t.Helper()
	s, err := newStrategy(Config{Algo: AlgoFedAvg, ServerOpt: o})
	if err != nil {
		t.Fatal(err)
	}
	var global []float32
	var out [][]float32
	for r, mean := range means {
		a, b := make([]float32, len(mean)), make([]float32, len(mean))
		for j, x := range mean {
			a[j], b[j] = x+1, x-1 // mean exact: x±1 for small x
		}
		res := s.Close(CloseInput{Round: uint64(r + 1), NumParams: len(mean), Global: global,
			In: []Contribution{{Client: "a", Weight: 2, Params: a}, {Client: "b", Weight: 2, Params: b}}})
		if len(res.Models) != 1 || res.Weight != 4 {
			t.Fatalf("round %d: %+v", r+1, res)
		}
		global = res.Models[0].Params
		out = append(out, global)
	}
	return out
}

// Known answers, by hand, for η=0.5, μ=0.5, β1=0.5, β2=0.75, τ=1 and
// three coordinates: x1 = the first mean (1, −1, 0), then the means
// (3, −2, 2) and (4, 0, 0.75). Coordinate 2 has Yogi's v above Δ² in the
// last step (v=1, Δ²=0.25), where it differs from Adam's.
func TestServerOptKnownAnswers(t *testing.T) {
	means := [][]float32{{1, -1, 0}, {3, -2, 2}, {4, 0, 0.75}}
	sq := math.Sqrt
	tests := []struct {
		o      ServerOpt
		x2, x3 [3]float64
	}{
		// m = μm + Δ, x += ηm. c0: Δ=2, m=2, x=2; Δ=2, m=3, x=3.5.
		// c1: Δ=−1, m=−1, x=−1.5; Δ=1.5, m=1, x=−1. c2: Δ=2, m=2, x=1;
		// Δ=−0.25, m=0.75, x=1.375.
		{ServerOpt{Rule: ServerOptFedAvgM, LR: 0.5, Momentum: 0.5}, [3]float64{2, -1.5, 1}, [3]float64{3.5, -1, 1.375}},
		// m = ½m + ½Δ, v = ¾v + ¼Δ², x += ½m/(√v+1).
		// c0: m=1, v=1, x=1.25; Δ=2.75, m=1.875, v=2.640625 (√=1.625).
		// c1: m=−½, v=¼, x=−7/6; Δ=7/6, m=1/3, v=3/16+49/144.
		// c2: m=1, v=1, x=¼; Δ=½, m=¾, v=13/16.
		{ServerOpt{Rule: ServerOptFedAdam, LR: 0.5, Beta1: 0.5, Beta2: 0.75, Tau: 1},
			[3]float64{1.25, -7.0 / 6, 0.25},
			[3]float64{1.25 + 0.5*1.875/2.625, -7.0/6 + 0.5*(1.0/3)/(sq(3.0/16+49.0/144)+1), 0.25 + 0.5*0.75/(sq(13.0/16)+1)}},
		// v −= ¼Δ²·sign(v−Δ²): from v=0 the first step is Adam's; then
		// c0: v = 1 + ¼·7.5625; c1: v = ¼ + ¼·49/36; c2: v = 1 − ¼·¼.
		{ServerOpt{Rule: ServerOptFedYogi, LR: 0.5, Beta1: 0.5, Beta2: 0.75, Tau: 1},
			[3]float64{1.25, -7.0 / 6, 0.25},
			[3]float64{1.25 + 0.5*1.875/(sq(1+0.25*7.5625)+1), -7.0/6 + 0.5*(1.0/3)/(sq(0.25+49.0/144)+1), 0.25 + 0.5*0.75/(sq(15.0/16)+1)}},
		// v += Δ². c0: m=1, v=4, x=7/6; Δ=17/6, m=½+17/12, v=4+289/36.
		// c1: m=−½, v=1, x=−1.125; Δ=1.125, m=0.3125, v=2.265625.
		// c2: m=1, v=4, x=1/6; Δ=7/12, m=½+7/24, v=4+49/144.
		{ServerOpt{Rule: ServerOptFedAdagrad, LR: 0.5, Beta1: 0.5, Tau: 1},
			[3]float64{7.0 / 6, -1.125, 1.0 / 6},
			[3]float64{7.0/6 + 0.5*(0.5+17.0/12)/(sq(4+289.0/36)+1), -1.125 + 0.5*0.3125/(sq(2.265625)+1), 1.0/6 + 0.5*(0.5+7.0/24)/(sq(4+49.0/144)+1)}},
	}
	for _, tc := range tests {
		t.Run(tc.o.Rule, func(t *testing.T) {
			if err := tc.o.validate(AlgoFedAvg); err != nil {
				t.Fatal(err)
			}
			got := optRounds(t, tc.o, means)
			if !reflect.DeepEqual(got[0], means[0]) {
				t.Fatalf("first round published %v, want the mean %v", got[0], means[0])
			}
			for r, want := range [][3]float64{tc.x2, tc.x3} {
				for j, w := range want {
					if math.Abs(float64(got[r+1][j])-w) > 1e-6 {
						t.Fatalf("round %d coordinate %d: %v, want %v (all %v)", r+2, j, got[r+1][j], w, got[r+1])
					}
				}
			}
		})
	}
}

// FedAvgM with μ=0 and η=1 steps x + (mean − x): the mean, to the bit, as
// plain FedAvg publishes it, round after round of a whole job.
func TestServerOptFedAvgMZeroIsFedAvg(t *testing.T) {
	run := func(o ServerOpt) [][]float32 {
		m := newTestMachine(t, Config{Rounds: 4, ServerOpt: o})
		m.Step(join("a", 0))
		m.Step(join("b", 0))
		var got [][]float32
		for r := uint64(1); r <= 4; r++ {
			f := float32(r)
			m.Step(upd("a", r, float64(r), 3, 0.1*f, -1.7/f))
			acts := m.Step(upd("b", r, float64(r), 7, 1e-3*f*f, 2.3+f))
			p, ok := find[PublishModel](acts)
			if !ok {
				t.Fatalf("round %d published nothing: %v", r, acts)
			}
			got = append(got, p.Params)
		}
		return got
	}
	plain, avgm := run(ServerOpt{}), run(ServerOpt{Rule: ServerOptFedAvgM, LR: 1})
	for r := range plain {
		for j := range plain[r] {
			if math.Float32bits(plain[r][j]) != math.Float32bits(avgm[r][j]) {
				t.Fatalf("round %d: fedavgm(0, 1) %v, fedavg %v", r+1, avgm[r], plain[r])
			}
		}
	}
}

// The optimizer steps from the published model: a frozen round publishes
// none, so it takes no step either, and a round without updates neither.
func TestServerOptFrozenAndEmptyRoundsTakeNoStep(t *testing.T) {
	s, _ := newStrategy(Config{Algo: AlgoFedAvg, ServerOpt: DefaultServerOpt(ServerOptFedAdam)})
	in := CloseInput{NumParams: 1, Global: []float32{1}, Frozen: true, In: []Contribution{{Client: "a", Weight: 1, Params: []float32{2}}}}
	if res := s.Close(in); res.Models[0].Params[0] != 2 {
		t.Fatalf("frozen round: %v", res.Models[0].Params)
	}
	in.Frozen, in.In = false, nil
	if res := s.Close(in); len(res.Models) != 0 {
		t.Fatalf("empty round: %+v", res)
	}
	if st, _ := s.State(); string(st) != `{"step":0}` {
		t.Fatalf("state after no step: %s", st)
	}
}

// The gradient estimator is the plain mean under any optimizer; the secure
// path's sum is stepped from like the clear mean.
func TestServerOptGradAndSecureSum(t *testing.T) {
	o := ServerOpt{Rule: ServerOptFedAvgM, LR: 2}
	s, _ := newStrategy(Config{Algo: AlgoCEFedGNN, ServerOpt: o})
	res := s.Close(CloseInput{NumParams: 1, Global: []float32{1},
		In: []Contribution{{Client: "a", Weight: 1, Params: []float32{2}, Grad: []float32{5}}}})
	if p := res.Models[0]; p.Params[0] != 3 || p.Grad[0] != 5 {
		t.Fatalf("clear: params %v grad %v, want 3 and 5", p.Params, p.Grad)
	}
	s, _ = newStrategy(Config{Algo: AlgoCEFedGNN, ServerOpt: o})
	res = s.Close(CloseInput{NumParams: 1, Global: []float32{1}, Secure: true,
		Sum: &Contribution{Weight: 4, Params: []float32{2}, Grad: []float32{5}}})
	if p := res.Models[0]; p.Params[0] != 3 || p.Grad[0] != 5 || res.Weight != 4 {
		t.Fatalf("secure: params %v grad %v, want 3 and 5", p.Params, p.Grad)
	}
}

// A step out of float32's range is not taken: the mean goes out and the
// moments start over.
func TestServerOptDivergenceFallsBackToTheMean(t *testing.T) {
	o := ServerOpt{Rule: ServerOptFedAvgM, LR: 1e30}
	st := serverOptState{}
	got := o.step(&st, []float32{0}, []float32{1e10})
	if got[0] != 1e10 || st.Step != 0 || st.M != nil {
		t.Fatalf("got %v, state %+v", got, st)
	}
}

func TestServerOptConfigRefusals(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	adam := DefaultServerOpt(ServerOptFedAdam)
	with := func(f func(*ServerOpt)) ServerOpt { o := adam; f(&o); return o }
	tests := []struct {
		algo string
		o    ServerOpt
		want string
	}{
		{AlgoFedAvg, ServerOpt{Rule: "sgd", LR: 1}, "unknown rule"},
		{AlgoFedAvg, ServerOpt{LR: 1}, "without a rule"},
		{AlgoFedAvg, with(func(o *ServerOpt) { o.LR = nan }), "lr NaN must be finite"},
		{AlgoFedAvg, with(func(o *ServerOpt) { o.Beta2 = inf }), "beta2 +Inf must be finite"},
		{AlgoFedAvg, with(func(o *ServerOpt) { o.Tau = -1 }), "tau -1 must be finite and non-negative"},
		{AlgoFedAvg, with(func(o *ServerOpt) { o.LR = 0 }), "needs lr > 0"},
		{AlgoFedAvg, with(func(o *ServerOpt) { o.Tau = 0 }), "needs tau > 0"},
		{AlgoFedAvg, with(func(o *ServerOpt) { o.Beta1 = 1 }), "below 1"},
		{AlgoFedAvg, with(func(o *ServerOpt) { o.Momentum = 0.9 }), "fedadam has no momentum"},
		{AlgoFedAvg, ServerOpt{Rule: ServerOptFedAvgM, LR: 1, Momentum: 1}, "below 1"},
		{AlgoFedAvg, ServerOpt{Rule: ServerOptFedAvgM, LR: 1, Tau: 1}, "fedavgm has no tau"},
		{AlgoFedAvg, ServerOpt{Rule: ServerOptFedAdagrad, LR: 1, Tau: 1, Beta2: 0.5}, "fedadagrad has no beta2"},
		{AlgoFedGSP, adam, "for the averaging algorithms"},
		{AlgoLocal, adam, "for the averaging algorithms"},
		{AlgoLPSFed, adam, "for the averaging algorithms"},
	}
	for _, tc := range tests {
		err := tc.o.validate(tc.algo)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: %v, want %q", tc.algo, tc.o, err, tc.want)
		}
	}
	for _, rule := range ServerOptRules() {
		for _, algo := range []string{AlgoFedAvg, AlgoCEFedGNN, AlgoFedGNNST, AlgoFedProx, AlgoFedPer} {
			if err := DefaultServerOpt(rule).validate(algo); err != nil {
				t.Errorf("default %s with %s: %v", rule, algo, err)
			}
		}
	}
	// An optimizer on top of a robust rule is a step towards the robust
	// mean (Flower composes them too).
	cfg := Config{Algo: AlgoFedAvg, Rounds: 1, MinClients: 1, RoundTimeout: 1, Robust: Robust{Rule: RobustMedian}, ServerOpt: adam}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
}
