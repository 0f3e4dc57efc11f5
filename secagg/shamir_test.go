package secagg

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math/big"
	"testing"
)

func xsOf(n int) []uint32 {
	xs := make([]uint32, n)
	for i := range xs {
		xs[i] = uint32(i + 1)
	}
	return xs
}

// subsets calls f with every k-subset of 0..n-1.
func subsets(n, k int, f func([]int)) {
	idx := make([]int, k)
	var rec func(start, depth int)
	rec = func(start, depth int) {
		if depth == k {
			f(idx)
			return
		}
		for i := start; i < n; i++ {
			idx[depth] = i
			rec(i+1, depth+1)
		}
	}
	rec(0, 0)
}

func TestShamirEveryTSubset(t *testing.T) {
	rng := newDetRand("shamir")
	secrets := [][]byte{
		bytes.Repeat([]byte{0xff}, 32), // above p as one 256-bit integer: must round-trip
		make([]byte, 32),
		[]byte("a 32-byte self-mask seed, here!!"),
		{1}, bytes.Repeat([]byte{0xab}, 31), bytes.Repeat([]byte{0xcd}, 63),
	}
	for n := 2; n <= 7; n++ {
		for tt := 2; tt <= n; tt++ {
			for _, secret := range secrets {
				shares, err := Split(secret, tt, xsOf(n), rng)
				if err != nil {
					t.Fatal(err)
				}
				for k := tt; k <= n; k++ {
					subsets(n, k, func(idx []int) {
						sub := make([]Share, len(idx))
						for i, j := range idx {
							sub[i] = shares[j]
						}
						got, err := Combine(sub, tt, len(secret))
						if err != nil {
							t.Fatalf("n=%d t=%d %v: %v", n, tt, idx, err)
						}
						if !bytes.Equal(got, secret) {
							t.Fatalf("n=%d t=%d %v: %x, want %x", n, tt, idx, got, secret)
						}
					})
				}
			}
		}
	}
}

func TestShamirRefusals(t *testing.T) {
	rng := newDetRand("shamir-refuse")
	secret := make([]byte, 32)
	for _, c := range []struct {
		name string
		t    int
		xs   []uint32
	}{
		{"t below 2", 1, xsOf(3)}, {"t above n", 4, xsOf(3)},
		{"duplicate x", 2, []uint32{1, 2, 2}}, {"x zero", 2, []uint32{0, 1, 2}},
	} {
		if _, err := Split(secret, c.t, c.xs, rng); err == nil {
			t.Errorf("split with %s accepted", c.name)
		}
	}
	shares, _ := Split(secret, 3, xsOf(5), rng)
	if _, err := Combine(shares[:2], 3, 32); !errors.Is(err, ErrBelowThreshold) {
		t.Errorf("combine of t−1 shares: %v", err)
	}
	if _, err := Combine([]Share{shares[0], shares[1], shares[0]}, 3, 32); err == nil {
		t.Error("combine with a duplicate x accepted")
	}
	bad := append([]Share(nil), shares...)
	bad[4] = Share{X: bad[4].X, Y: append([]byte(nil), bad[4].Y...)}
	bad[4].Y[5] ^= 1
	if _, err := Combine(bad, 3, 32); !errors.Is(err, ErrMalformed) {
		t.Errorf("a corrupted extra share: %v", err)
	}
	over := Share{X: shares[0].X, Y: bytes.Repeat([]byte{0xff}, 64)}
	if _, err := Combine([]Share{over, shares[1], shares[2]}, 3, 32); !errors.Is(err, ErrMalformed) {
		t.Errorf("an element ≥ p: %v", err)
	}
}

// A hand-computed vector: f(x) = 5 − x over GF(p), the coefficient −1 = p−1
// exercising the reduction; shares at x = 1, 2, 3 are 4, 3, 2.
func TestShamirKnownVector(t *testing.T) {
	elem := func(v int64) []byte {
		b := make([]byte, 32)
		new(big.Int).Mod(big.NewInt(v), fieldP()).FillBytes(b)
		return b
	}
	shares := []Share{{X: 3, Y: elem(2)}, {X: 1, Y: elem(4)}, {X: 2, Y: elem(3)}}
	got, err := Combine(shares, 2, 1)
	if err != nil || !bytes.Equal(got, []byte{5}) {
		t.Fatalf("combine: %x, %v; want 05", got, err)
	}
	// p itself and the pinned encoding of p.
	if h := hex.EncodeToString(fieldP().Bytes()); h != "7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed" {
		t.Fatalf("p = %s", h)
	}
	// Pinned split of a fixed secret under a fixed stream.
	s, err := Split([]byte("graphfed secagg shamir vector 01"), 2, []uint32{1, 2}, newDetRand("kat"))
	if err != nil {
		t.Fatal(err)
	}
	got2 := hex.EncodeToString(s[0].Y) + ":" + hex.EncodeToString(s[1].Y)
	if got2 != pinnedShamir {
		t.Fatalf("pinned split: %s\nwant %s", got2, pinnedShamir)
	}
	// Independently of Combine: for t = 2, 2·f(1) − f(2) = f(0) per chunk,
	// and the chunks are the secret's 31 + 1 bytes.
	for c, want := range [][]byte{[]byte("graphfed secagg shamir vector 0"), []byte("1")} {
		y1 := new(big.Int).SetBytes(s[0].Y[32*c : 32*c+32])
		y2 := new(big.Int).SetBytes(s[1].Y[32*c : 32*c+32])
		f0 := new(big.Int).Sub(new(big.Int).Lsh(y1, 1), y2)
		f0.Mod(f0, fieldP())
		if f0.Cmp(new(big.Int).SetBytes(want)) != 0 {
			t.Fatalf("chunk %d: f(0) = %x, want %x", c, f0, want)
		}
	}
}

var pinnedShamir = "512ef4d66afd32710909575417884d68739d4202f9b636cad215bab0ce1d52481a710034743e4b6ea0716e892432d07615614cdc6914dfd61f673378d775edc0:" +
	"21f6774b6591fe7cadf23b42cbaf3369c6c71ba48602fb752dc611ed2cc8847334e20068e87c96dd40e2dd124865a0ec2ac299b8d229bfac3ece66f1aeebdb4f"

// Perfect hiding, shown for small cases: any t−1 shares are consistent with
// every secret. For each alternative secret s′ there is a polynomial of
// degree t−1 through (0, s′) and the t−1 shares; the share it gives a t-th
// party, with the t−1 real ones, reconstructs s′.
func TestShamirTMinusOneRevealNothing(t *testing.T) {
	p := fieldP()
	rng := newDetRand("hiding")
	for n := 3; n <= 5; n++ {
		for tt := 2; tt <= n; tt++ {
			shares, _ := Split([]byte{42}, tt, xsOf(n), rng)
			subsets(n, tt-1, func(idx []int) {
				seen := make([]Share, len(idx))
				xs := []uint32{0}
				for i, j := range idx {
					seen[i] = shares[j]
					xs = append(xs, shares[j].X)
				}
				// A t-th x not among the seen ones.
				var other uint32
				for x := uint32(1); other == 0; x++ {
					if !containsX(xs, x) {
						other = x
					}
				}
				l := lagrange(xs, other, p)
				for alt := range 256 {
					acc := new(big.Int).Mul(l[0], big.NewInt(int64(alt)))
					for i, s := range seen {
						acc.Add(acc, new(big.Int).Mul(l[i+1], new(big.Int).SetBytes(s.Y)))
					}
					acc.Mod(acc, p)
					forged := Share{X: other, Y: make([]byte, 32)}
					acc.FillBytes(forged.Y)
					got, err := Combine(append(append([]Share(nil), seen...), forged), tt, 1)
					if err != nil || got[0] != byte(alt) {
						t.Fatalf("n=%d t=%d seen %v: secret %d not consistent: %x, %v", n, tt, idx, alt, got, err)
					}
				}
			})
		}
	}
}

func containsX(xs []uint32, x uint32) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// The barycentric basis equals the textbook product formula, for nodes
// with 0 among them, far-apart nodes and the point on a node.
func TestLagrangeMatchesTextbook(t *testing.T) {
	p := fieldP()
	naive := func(xs []uint32, at uint32) []*big.Int {
		out := make([]*big.Int, len(xs))
		for i, xi := range xs {
			num, den := big.NewInt(1), big.NewInt(1)
			for j, xj := range xs {
				if j != i {
					num.Mul(num, big.NewInt(int64(at)-int64(xj)))
					den.Mul(den, big.NewInt(int64(xi)-int64(xj)))
				}
			}
			num.Mod(num, p)
			den.Mod(den, p)
			out[i] = num.Mul(num, den.ModInverse(den, p))
			out[i].Mod(out[i], p)
		}
		return out
	}
	sets := [][]uint32{{0, 1}, {1, 2, 3}, {0, 5, 9, 2}, xsOf(16), xsOf(40), {1, 65536, 1 << 31, 1<<32 - 1, 77}}
	for _, xs := range sets {
		for _, at := range []uint32{0, 1, 17, 65535, 1<<32 - 2, xs[len(xs)-1]} {
			got, want := lagrange(xs, at, p), naive(xs, at)
			for i := range want {
				if got[i].Cmp(want[i]) != 0 {
					t.Fatalf("nodes %v at %d: l_%d = %v, want %v", xs, at, i, got[i], want[i])
				}
			}
		}
	}
}
