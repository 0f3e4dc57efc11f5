package privacy

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzEntryDecode: DecodeEntry never panics and accepts only valid
// entries; what it accepts re-encodes to bytes it decodes to the same
// encoding and the same Digest (the digest a writer signed is the digest a
// reader recomputes). Run it with
//
//	go test ./privacy -run XXX -fuzz '^FuzzEntryDecode$' -fuzztime 10m -parallel 1
func FuzzEntryDecode(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "ledger_golden.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range bytes.Split(golden, []byte("\n")) {
		f.Add(line)
	}
	f.Add([]byte(`{"seq":1,"job":"j","client":"c","channel":"margin","count":1,"dim":1,"sigma":1,"clip":1,"rho":2,"sig":"AAEC"}`))
	f.Add([]byte(`{"seq":2,"job":"j","client":"c","channel":"margin","count":1,"dim":1,"sigma":1,"clip":1,"rho":2,"prev":"ZZ"}`))
	f.Add([]byte(`{"seq":1,"job":"j","client":"c","channel":"model","count":1,"dim":1,"sigma":1,"clip":1,"rho":2,"time":"2026-01-01T00:00:00+01:00"}`))
	f.Add([]byte("null"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEntry(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("decode failed without ErrInvalid: %v", err)
			}
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("accepted an invalid entry: %v", err)
		}
		d1, err := e.Digest()
		if err != nil {
			t.Fatalf("no digest for an accepted entry: %v", err)
		}
		enc, err := EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeEntry(enc)
		if err != nil {
			t.Fatalf("re-encoded entry %s rejected: %v", enc, err)
		}
		enc2, _ := EncodeEntry(back)
		d2, _ := back.Digest()
		if !bytes.Equal(enc, enc2) || d1 != d2 {
			t.Fatalf("entry changed through re-encoding:\n%s\n%s", enc, enc2)
		}
	})
}

// fuzzKeys is a keyed-hash stand-in for the keyring: client c's
// signature over d is SHA-256(c, d).
type fuzzKeys struct{}

func (fuzzKeys) sign(client string, d []byte) []byte {
	h := sha256.Sum256(append([]byte(client+"\x00"), d...))
	return h[:]
}

func (k fuzzKeys) VerifyEntry(_, client string, d, sig []byte) error {
	if !bytes.Equal(sig, k.sign(client, d)) {
		return errors.New("bad signature")
	}
	return nil
}

// fuzzChain is a signed chain of n entries over two clients.
func fuzzChain(t *testing.T, n int) []Entry {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var es []Entry
	seqs := map[string]uint64{}
	for i := 0; i < n; i++ {
		c := []string{"bank-a", "bank-b"}[i%3/2]
		seqs[c]++
		es = append(es, Entry{Seq: seqs[c], Job: "j", Client: c, Channel: ChannelModel, Round: uint64(i/2 + 1),
			Count: 1, Dim: 3, Sigma: 1, Clip: 1, Rho: 2, Time: at.Add(time.Duration(i) * time.Second)})
	}
	es, err := LinkEntries(es)
	if err != nil {
		t.Fatal(err)
	}
	for i := range es {
		d, _ := es[i].Digest()
		es[i].Sig = fuzzKeys{}.sign(es[i].Client, d[:])
	}
	return es
}

func chainRecords(t *testing.T, es []Entry) []Record {
	recs := make([]Record, len(es))
	for i, e := range es {
		b, err := EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = Record{Pos: uint64(i + 1), Where: "line", Data: b}
	}
	return recs
}

// FuzzVerifyChain: a signed chain of up to 12 entries, tampered with as
// the input says (rewrite a field of entry i, remove it, swap it with the
// next, replay it later, or insert junk bytes), read by Verify with and
// without the keys. Verify never panics; every record is accepted or
// rejected exactly once; accepted entries ascend in seq per client and
// the audit takes them; an untouched chain reads clean; and every
// tampering that changes what is stored is seen, as a rejection or a
// chain break, except the removal of a client's last entry, which a hash
// chain cannot see. Run it with
//
//	go test ./privacy -run XXX -fuzz '^FuzzVerifyChain$' -fuzztime 10m -parallel 1
func FuzzVerifyChain(f *testing.F) {
	for op := byte(0); op < 6; op++ {
		f.Add(uint8(8), op, uint8(3), []byte("junk"), true)
	}
	f.Add(uint8(12), byte(1), uint8(11), []byte{}, false)
	f.Fuzz(func(t *testing.T, n uint8, op byte, at uint8, junk []byte, signed bool) {
		size := int(n%12) + 1
		es := fuzzChain(t, size)
		recs := chainRecords(t, es)
		i := int(at) % size
		var keys KeyVerifier
		if signed {
			keys = fuzzKeys{}
		}
		lastOfClient := true
		for _, e := range es[i+1:] {
			if e.Client == es[i].Client {
				lastOfClient = false
			}
		}
		tampered := true
		switch op % 6 {
		case 0: // untouched
			tampered = false
		case 1: // rewrite: a smaller σ, the old signature kept
			e := es[i]
			e.Sigma = 0.5
			b, _ := EncodeEntry(e)
			recs[i].Data = b
			tampered = signed || !lastOfClient
		case 2: // remove
			recs = append(recs[:i:i], recs[i+1:]...)
			tampered = !lastOfClient
		case 3: // swap with the next record
			if i+1 >= len(recs) || es[i].Client != es[i+1].Client {
				tampered = false // other clients' entries interleave freely
				break
			}
			recs[i], recs[i+1] = recs[i+1], recs[i]
		case 4: // replay at the end
			recs = append(recs, recs[i])
		case 5: // junk: unsigned, it may be a valid first entry of a new client
			tampered = signed
			recs = append(recs[:i:i], append([]Record{{Pos: 99, Where: "junk", Data: junk}}, recs[i:]...)...)
		}
		rd := Verify(recs, VerifyOptions{Keys: keys})
		if len(rd.Entries)+len(rd.Rejected) != len(recs) || rd.Records != len(recs) {
			t.Fatalf("%d records: %d accepted, %d rejected", len(recs), len(rd.Entries), len(rd.Rejected))
		}
		last := map[string]uint64{}
		for _, e := range rd.Entries {
			if e.Seq <= last[e.Client] {
				t.Fatalf("accepted seq %d of %s after %d", e.Seq, e.Client, last[e.Client])
			}
			last[e.Client] = e.Seq
		}
		if _, err := AuditReading(rd, AuditOptions{Delta: 1e-4}); err != nil {
			t.Fatalf("audit refused verified entries: %v", err)
		}
		clean := len(rd.Rejected) == 0 && len(rd.Breaks) == 0
		switch {
		case !tampered && op%6 != 5 && !clean:
			t.Fatalf("untouched chain flagged: %v %v", rd.Rejected, rd.Breaks)
		case tampered && clean:
			t.Fatalf("tampering %d at %d of %d (signed %v) not seen", op%6, i, size, signed)
		}
	})
}
