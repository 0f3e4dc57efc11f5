package privacy

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestReleasedSelect(t *testing.T) {
	seed := uint64(9)
	g := newTestGate(t, Config{Job: "j", Client: "c", Delta: 1e-5, Seed: &seed}, NewMemLedger())
	rel, err := g.Release(context.Background(), Request{Channel: ChannelEmb, Round: 1, Dim: 2,
		Flat: []float32{3, 4, 0, 2, 1, 0}, NodeIDs: []int64{10, 11, 12}, Sigma: 0.1, Clip: 1})
	if err != nil {
		t.Fatal(err)
	}
	all := rel.Data()
	tests := []struct {
		name    string
		rows    []int
		wantIDs []int64
		wantErr bool
	}{
		{"subset reordered", []int{2, 0}, []int64{12, 10}, false},
		{"one row twice", []int{1, 1}, []int64{11, 11}, false},
		{"empty", nil, nil, false},
		{"out of range", []int{3}, nil, true},
		{"negative", []int{-1}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			part, err := rel.Select(tc.rows)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("err %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(part.NodeIDs(), tc.wantIDs) || part.Rows() != len(tc.rows) {
				t.Fatalf("ids %v rows %d, want %v", part.NodeIDs(), part.Rows(), tc.wantIDs)
			}
			var want []float32
			for _, r := range tc.rows {
				want = append(want, all[2*r:2*r+2]...)
			}
			if got := part.Data(); !slices.Equal(got, want) {
				t.Fatalf("data %v, want %v", got, want)
			}
			// The subset is accounted for by the original ledger entry.
			if part.Entry().Seq != rel.Entry().Seq || part.Entry().Sigma != rel.Entry().Sigma {
				t.Fatalf("entry %+v does not point at the release %+v", part.Entry(), rel.Entry())
			}
		})
	}
	if _, err := (Released{}).Select([]int{0}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("zero Released selected: %v", err)
	}
}
