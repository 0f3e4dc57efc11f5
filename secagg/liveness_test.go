package secagg

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// A party that crashes while sending its shares costs the round the inputs
// masked with it when fewer than t survivors hold its mask key, not the
// round: those survivors are demoted to dropouts, only their mask keys are
// asked for, and the rest are summed.
func TestRoundCrashMidShares(t *testing.T) {
	cases := []struct {
		name      string
		n, t      int
		partial   map[string][]string
		survivors int      // 0: the round closes below t
		demoted   []string // Server.Demoted
		dropouts  []string
	}{
		{"share reaches t: a plain dropout", 8, 5,
			map[string][]string{"bank-03": {"bank-00", "bank-01", "bank-02", "bank-04", "bank-05"}},
			7, nil, []string{"bank-03"}},
		{"share reaches two: they are left out", 8, 5,
			map[string][]string{"bank-03": {"bank-00", "bank-01"}},
			5, []string{"bank-00", "bank-01"}, []string{"bank-00", "bank-01"}},
		{"share reaches nobody: nothing to remove", 8, 5,
			map[string][]string{"bank-03": {}},
			7, nil, nil},
		{"share reaches four: three remain, below t", 8, 5,
			map[string][]string{"bank-03": {"bank-00", "bank-01", "bank-02", "bank-04"}},
			0, []string{"bank-00", "bank-01", "bank-02", "bank-04"}, nil},
		{"two crash mid-shares", 10, 6,
			map[string][]string{"bank-03": {"bank-00"}, "bank-06": {"bank-07"}},
			6, []string{"bank-00", "bank-07"}, []string{"bank-00", "bank-07"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRound(t, c.n, c.t, 7, c.name)
			r.partial = c.partial
			drop := map[string]int{}
			for p := range c.partial {
				drop[p] = beforeInput
			}
			l, err := r.toList(drop)
			if got := r.server.Demoted(); !slices.Equal(got, c.demoted) {
				t.Errorf("demoted %v, want %v", got, c.demoted)
			}
			for _, p := range c.demoted {
				why := r.server.DemotedWhy(p)
				names := func(crashed string) bool { return strings.Contains(why, crashed) }
				if !slices.ContainsFunc(slices.Collect(maps.Keys(c.partial)), names) {
					t.Errorf("%s demoted for %q: names no crashed party", p, why)
				}
			}
			if c.survivors == 0 {
				if !errors.Is(err, ErrBelowThreshold) {
					t.Fatalf("list: %v, want ErrBelowThreshold", err)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Survivors) != c.survivors || !slices.Equal(l.Dropouts, c.dropouts) {
				t.Fatalf("survivors %v dropouts %v, want %d survivors, dropouts %v", l.Survivors, l.Dropouts, c.survivors, c.dropouts)
			}
			for _, p := range c.demoted {
				if slices.Contains(l.Survivors, p) {
					t.Fatalf("demoted %s listed a survivor", p)
				}
				// A demoted party still up refuses the list that drops it.
				var re *RefusalError
				if _, err := r.clients[p].Unmask(l); !errors.As(err, &re) || re.Reason != RefusedSelfDropped {
					t.Fatalf("%s answered the list that demotes it: %v", p, err)
				}
			}
			r.reveal(l, drop)
			sum, err := r.server.Result()
			if err != nil {
				t.Fatal(err)
			}
			// Only mask-key shares of a demoted party were asked for.
			for _, p := range c.demoted {
				if _, ok := r.server.selfShare[r.cfg.Index(p)]; ok {
					t.Fatalf("self-mask shares of demoted %s revealed", p)
				}
			}
			want := r.plainSum(l.Survivors)
			if !slices.Equal(sum, want) {
				t.Fatalf("unmasked %v, the survivors' plain sum %v", sum, want)
			}
		})
	}
}
