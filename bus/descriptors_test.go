package bus

import (
	"math"
	"testing"
)

func TestValidatorDescriptors(t *testing.T) {
	schema := Schema{Job: "job1", NumParams: 3, Senders: map[string]bool{"bank-1": true}}
	env := Envelope{Job: "job1", Kind: KindUpdate, From: "bank-1", Round: 1, Seq: 1}
	desc := func(k, kpr, dim, n int) *Update {
		u := &Update{Round: 1, Weight: 1, Params: Sensitive{v: []float32{1, 2, 3}}, DescOrders: k, DescPrincipal: kpr, DescDim: dim}
		if n > 0 {
			u.Descriptors = Sensitive{v: make([]float32, n)}
			for i := range u.Descriptors.v {
				u.Descriptors.v[i] = float32(i%7) / 7
			}
		}
		return u
	}
	nan := desc(1, 1, 2, 8)
	nan.Descriptors.v[5] = float32(math.NaN())
	withGrad := desc(1, 1, 2, 8)
	withGrad.Grad = Sensitive{v: []float32{1, 2, 3}}
	tests := []struct {
		name   string
		u      *Update
		reason string
	}{
		{"none", desc(0, 0, 0, 0), ""},
		{"K=2 kpr=3 dim=5", desc(2, 3, 5, 4*2*3*5), ""},
		{"the floor", desc(1, 1, MinDescriptorValues/4, MinDescriptorValues), ""},
		{"over the floor", desc(1, 1, MinDescriptorValues/4+1, MinDescriptorValues+4), ReasonShape},
		{"shape without rows", desc(1, 1, 2, 0), ReasonShape},
		{"rows without shape", desc(0, 0, 0, 8), ReasonShape},
		{"negative dim", desc(1, 1, -2, 8), ReasonShape},
		{"one value short", desc(2, 3, 5, 4*2*3*5-1), ReasonShape},
		{"rows of another width", desc(2, 3, 6, 4*2*3*5), ReasonShape},
		{"another principal count", desc(2, 2, 5, 4*2*3*5), ReasonShape},
		{"huge factors", desc(1<<40, 1<<40, 1<<40, 8), ReasonShape},
		{"NaN", nan, ReasonNonFinite},
		{"beside a gradient estimator", withGrad, ReasonShape},
	}
	v := NewValidator(schema)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, body, err := v.Open("gf.job1.update.bank-1", sealT(t, env, tc.u))
			if got := ReasonOf(err); got != tc.reason || (tc.reason == "") != (err == nil) {
				t.Fatalf("reason %q (%v), want %q", got, err, tc.reason)
			}
			if err != nil {
				return
			}
			u := body.(*Update)
			if u.Descriptors.Len() != tc.u.Descriptors.Len() || u.DescOrders != tc.u.DescOrders || u.DescDim != tc.u.DescDim {
				t.Fatalf("descriptors did not round-trip: %d values %d/%d", u.Descriptors.Len(), u.DescOrders, u.DescDim)
			}
		})
	}
	// A bigger job takes descriptors up to its parameter count.
	big := NewValidator(Schema{Job: "job1", NumParams: MinDescriptorValues * 2, Senders: map[string]bool{"bank-1": true}})
	u := desc(1, 1, MinDescriptorValues/2, MinDescriptorValues*2)
	u.Params = Sensitive{v: make([]float32, MinDescriptorValues*2)}
	if _, _, err := big.Open("gf.job1.update.bank-1", sealT(t, env, u)); err != nil {
		t.Fatalf("descriptors of the job's parameter count rejected: %v", err)
	}
}
