package secagg

import (
	"fmt"
	"testing"
)

// go test ./secagg -run XXX -bench . -benchtime 1x
//
// BenchmarkMaskInput: one party's masking (self mask and n−1 pairwise
// masks over d+1 words). BenchmarkUnmask: the server's unmasking (the sum
// of n inputs and n self masks; with a dropout, also its pairwise masks
// with every survivor). bytes/party is what one party uploads in a round:
// advertisement, sealed shares, masked input and reveal, with 64-byte ids.

const benchDim = 1_000_000

func benchRound(b *testing.B, n int, drop map[string]int) *round {
	t := &testing.T{}
	r := newRound(t, n, n/2+1, benchDim, fmt.Sprintf("bench-%d-%d", n, len(drop)))
	r.t = t
	if _, err := r.toList(drop); err != nil {
		b.Fatal(err)
	}
	return r
}

func BenchmarkMaskInput(b *testing.B) {
	for _, n := range []int{8, 16, 30} {
		b.Run(fmt.Sprintf("d=1e6/n=%d", n), func(b *testing.B) {
			p := newOneParty(b, n, benchDim, 2, fmt.Sprintf("maskbench-%d", n))
			var m MaskedInput
			var c Client
			for b.Loop() {
				c = *p.client
				m = must(c.MaskInput(p.x))
			}
			b.StopTimer()
			up, _ := p.upload(b, m, c)
			b.ReportMetric(float64(p.enc.Bits), "b")
			b.ReportMetric(float64(up), "bytes/party")
			b.ReportMetric(float64(up)/float64(4*benchDim), "×float32")
		})
	}
}

func BenchmarkUnmask(b *testing.B) {
	cases := []struct {
		n    int
		drop map[string]int
	}{{8, nil}, {16, nil}, {30, nil}, {8, map[string]int{"bank-03": beforeInput}}, {30, map[string]int{"bank-03": beforeInput}}}
	for _, c := range cases {
		b.Run(fmt.Sprintf("d=1e6/n=%d/dropouts=%d", c.n, len(c.drop)), func(b *testing.B) {
			r := benchRound(b, c.n, c.drop)
			l := must(r.server.CloseInputs())
			r.reveal(l, c.drop)
			base := r.server
			for b.Loop() {
				s := *base
				s.result = nil
				must(s.Result())
			}
		})
	}
}

func BenchmarkEncode(b *testing.B) {
	enc, _ := NewEncoding(1, 1000, 30, benchDim, 32)
	x := make([]float32, benchDim)
	for i := range x {
		x[i] = float32(i%7) * 1e-4
	}
	rng := newDetRand("bench-encode")
	for b.Loop() {
		must(enc.Encode(x, 500, rng))
	}
}
