package bus

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// Optional sensitive fields travel when set and stay off the wire when not.
func TestSensitiveOmitEmpty(t *testing.T) {
	for _, tc := range []struct {
		name      string
		rho, marg []float32
	}{{"both", []float32{1}, []float32{2}}, {"margin only", nil, []float32{2}}, {"none", nil, nil}} {
		b, err := msgpack.Marshal(&Update{Round: 1, Rho: Sensitive{v: tc.rho}, Margin: Sensitive{v: tc.marg}})
		if err != nil {
			t.Fatal(err)
		}
		var u Update
		if err := msgpack.Unmarshal(b, &u); err != nil {
			t.Fatal(err)
		}
		if u.Rho.Len() != len(tc.rho) || u.Margin.Len() != len(tc.marg) {
			t.Errorf("%s: decoded %d rho and %d margin values, sent %d and %d", tc.name, u.Rho.Len(), u.Margin.Len(), len(tc.rho), len(tc.marg))
		}
	}
}
