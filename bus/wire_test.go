package bus

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// Envelopes written by encode read back, through msgpack and through
// Open, as the envelope written; the largest float blob of the body lies
// at an offset that is a multiple of 4, whatever the lengths before it.
func TestEnvelopeEncodeAlignsTheBlob(t *testing.T) {
	for _, job := range []string{"j", "ingest", "job-with-a-longer-name", strings.Repeat("x", 40)} {
		for _, from := range []string{"a", "ab", "abc", "bank-0001"} {
			for _, signed := range []bool{false, true} {
				for _, n := range []int{0, 3, 100, 1000, minAlignedBlob/4 - 1, minAlignedBlob / 4, 100_001} {
					frame, body, err := marshalBody(&Update{Round: 2, Weight: 3, Params: Sensitive{v: make([]float32, n)}})
					if err != nil {
						t.Fatal(err)
					}
					env := Envelope{Version: SchemaVersion, Job: job, Kind: KindUpdate, From: from, Round: 2, Seq: 7, Time: -5, Body: body}
					if signed {
						env.Sig = bytes.Repeat([]byte{9}, 64)
						env.Ref = []byte{1, 2}
					}
					data := env.encode() // copied
					framed := env
					framed.frame = frame
					if inPlace := framed.encode(); !bytes.Equal(inPlace, data) || &inPlace[len(inPlace)-len(body)-tailSize(&env)] != &body[0] {
						t.Fatalf("%s/%s/%d: written in place, the envelope differs or moved", job, from, n)
					}
					var ref Envelope
					if err := msgpack.Unmarshal(data, &ref); err != nil || !fzSameEnvelope(ref, env) || !bytes.Equal(ref.Ref, env.Ref) {
						t.Fatalf("%s/%s/%d: msgpack reads %+v (%v)", job, from, n, ref, err)
					}
					if mp := fzMust(msgpack.Marshal(&env)); 4*n < minAlignedBlob && !bytes.Equal(data, mp) {
						t.Fatalf("%s/%s/%d: encode differs from msgpack.Marshal", job, from, n)
					}
					got, err := Open(data)
					if err != nil || !fzSameEnvelope(got, env) || !bytes.Equal(got.Ref, env.Ref) {
						t.Fatalf("%s/%s/%d: Open reads %+v (%v)", job, from, n, got, err)
					}
					if blob := largestBlob(body); 4*n >= minAlignedBlob {
						off := bytes.Index(data, body)
						if blob < 0 || (off+blob)%4 != 0 {
							t.Fatalf("%s/%s/%d: blob at %d+%d", job, from, n, off, blob)
						}
					}
				}
			}
		}
	}
}

// A body's vectors share the received bytes when they are 4-aligned, and
// are copied, equal, when they are not.
func TestUnmarshalBodyAliasesAlignedFloats(t *testing.T) {
	want := []float32{1, -2.5, 3e-8, float32(math.Pi)}
	for i := range minAlignedBlob / 4 {
		want = append(want, float32(i))
	}
	data, err := Seal(Envelope{Job: "j", Kind: KindUpdate, From: "abc"}, &Update{Round: 1, Weight: 1, Params: Sensitive{v: want}})
	if err != nil {
		t.Fatal(err)
	}
	for shift := range 4 {
		buf := make([]byte, len(data)+4)
		wire := buf[shift : shift+len(data)]
		copy(wire, data)
		env, err := Open(wire)
		if err != nil {
			t.Fatal(err)
		}
		var u Update
		if err := env.UnmarshalBody(&u); err != nil {
			t.Fatal(err)
		}
		got := u.Params.Floats()
		if !slicesEqual(got, want) {
			t.Fatalf("shift %d: %v", shift, got)
		}
		p := uintptr(unsafe.Pointer(&got[0]))
		inside := p >= uintptr(unsafe.Pointer(&wire[0])) && p < uintptr(unsafe.Pointer(&wire[0]))+uintptr(len(wire))
		if aligned := (uintptr(unsafe.Pointer(&wire[0])))%4 == 0; aligned != inside {
			t.Fatalf("shift %d: message aligned %v, floats share it %v", shift, aligned, inside)
		}
	}
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func TestFirstNonFinite(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, n := range []int{0, 1, 31, 32, 63, 64, 65, 200, 1023, 1024, 1025, 5000} {
		for _, at := range []int{-1, 0, 31, 32, 63, 64, 255, 256, 1023, 1024, 1040, n - 1} {
			for _, bad := range []float32{nan, inf, -inf} {
				xs := make([]float32, n)
				for i := range xs {
					xs[i] = math.MaxFloat32 * float32(i%3-1)
				}
				want := -1
				if at >= 0 && at < n {
					xs[at], want = bad, at
					if at+1 < n {
						xs[n-1] = bad // a later one does not count
					}
				}
				if got := firstNonFinite(xs); got != want {
					t.Fatalf("n=%d bad at %d: got %d", n, at, got)
				}
				if got := firstNonFiniteGo(xs); got != want {
					t.Fatalf("n=%d bad at %d: the Go loop got %d", n, at, got)
				}
			}
		}
	}
}
