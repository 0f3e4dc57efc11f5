package secagg

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// oneParty is a round at full size set up to the point where party 0
// masks: every party advertised and shared, and party 0 accepted every
// neighbour's share. Only party 0's input is encoded.
type oneParty struct {
	cfg    Config
	enc    Encoding
	agg    Signer
	client *Client
	x      []uint32
	ad     SignedAdvertisement // party 0's
	shares []SealedShare       // party 0's, to its neighbours
}

// longIDs are n party ids of 64 bytes, the bus's largest, so that the
// lists and reveals weigh what they can.
func longIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		p := fmt.Sprintf("bank-%02d-", i)
		out[i] = p + strings.Repeat("x", 64-len(p))
	}
	return out
}

func newOneParty(tb testing.TB, n, dim int, clip float64, label string) *oneParty {
	tb.Helper()
	ids := longIDs(n)
	kr, signers := newKeyring(tb, append([]string{"agg"}, ids...)...)
	enc, err := NewEncoding(clip, 50, n, dim, 0)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := Config{Job: "job-" + label, Round: 9, Aggregator: "agg", Parties: ids, Threshold: n/2 + 1,
		VectorLen: enc.Len(), Bits: enc.Bits}
	copy(cfg.GraphSeed[:], label)
	srv := must(NewServer(cfg, signers["agg"], kr))
	clients := make([]*Client, n)
	for i, id := range ids {
		clients[i] = must(NewClient(cfg, id, signers[id], kr, newDetRand("client-"+label+id)))
		must(0, srv.AddAdvertisement(must(clients[i].Advertise())))
	}
	ads := must(srv.Keys())
	p := &oneParty{cfg: cfg, enc: enc, agg: signers["agg"], client: clients[0], ad: ads[0]}
	for i, c := range clients {
		for _, ad := range ads {
			must(0, c.AcceptKey(ad))
		}
		for _, s := range must(c.ShareKeys()) {
			if i == 0 {
				p.shares = append(p.shares, s)
			}
			if s.To == ids[0] {
				must(0, clients[0].AcceptShare(s))
			}
		}
	}
	x := make([]float32, dim)
	for j := range x {
		x[j] = float32(j%13-6) * 1e-4
	}
	p.x = must(enc.Encode(x, 40, newDetRand("input-"+label)))
	return p
}

// upload is what party 0 sends in a round, encoded: its advertisement,
// its sealed shares, its masked input (masked from c, a copy of the
// party) and its reveal of a list naming everyone a survivor; and the
// number of messages.
func (p *oneParty) upload(tb testing.TB, m MaskedInput, c Client) (bytes, msgs int) {
	tb.Helper()
	bytes, msgs = len(p.ad.Encode()), 1
	for _, s := range p.shares {
		bytes += len(s.Encode())
		msgs++
	}
	bytes += len(m.Encode())
	l := SignedList{List: List{Job: p.cfg.Job, Round: p.cfg.Round, ConfigDigest: p.cfg.Digest(), Survivors: p.cfg.Parties}}
	l.Sig = must(p.agg.Sign(l.Bytes()))
	rev := must(c.Unmask(l))
	bytes += len(rev.Encode())
	return bytes, msgs + 2
}

// busEnvelope is the bus's allowance for the envelope, signature and
// framing around one secure-aggregation message (bus.secAggEnvelope).
const busEnvelope = 1024

// The bar: at d = 10^6 and n = 8, 16, 30 with the default
// parameters (b chosen by NewEncoding; clip 2, a power of two, gives the
// fewest bits, clip 1.5 the most), what a party uploads in a round,
// counted from its real encoded messages, is at most the 4·d bytes of its
// float32 update, and still so with a bus envelope around each message.
func TestUploadAtMostFloat32(t *testing.T) {
	if testing.Short() {
		t.Skip("d = 10^6")
	}
	const d = 1_000_000
	for _, clip := range []float64{2, 1.5} {
		for _, n := range []int{8, 16, 30} {
			p := newOneParty(t, n, d, clip, fmt.Sprintf("upload-%d", n))
			c := *p.client
			m := must(c.MaskInput(p.x))
			up, msgs := p.upload(t, m, c)
			vec := packedLen(len(m.Vector), m.Bits)
			t.Logf("C=%g n=%d: b=%d, scale 2^%.0f; masked vector %d bytes, other messages %d bytes; %d bytes/party = %.4f× float32 (%.4f× with %d bus envelopes)",
				clip, n, p.enc.Bits, math.Log2(p.enc.Scale), vec, up-vec, up, float64(up)/(4*d), float64(up+msgs*busEnvelope)/(4*d), msgs)
			if m.Bits != p.enc.Bits || p.enc.Bits >= 32 {
				t.Fatalf("n=%d: masked at b=%d, encoding b=%d", n, m.Bits, p.enc.Bits)
			}
			if up+msgs*busEnvelope > 4*d {
				t.Fatalf("n=%d: %d bytes (%d with envelopes) per party per round, above 4·d = %d", n, up, up+msgs*busEnvelope, 4*d)
			}
			if p.enc.Clip*p.enc.Scale < 1<<Precision {
				t.Fatalf("n=%d: C·s = %g below 2^%d", n, p.enc.Clip*p.enc.Scale, Precision)
			}
		}
	}
}
