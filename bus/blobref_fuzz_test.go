package bus

import (
	"bytes"
	"testing"
)

// FuzzParseBlobRef: the reference decoder never panics, accepts only
// references that pass its checks, and what it accepts encodes back to a
// reference it parses to the same fields.
func FuzzParseBlobRef(f *testing.F) {
	good, _ := NewBlobRef(BlobBucketName("j1", "bank-a"), "update-3-7", []byte("body")).Encode()
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte{0xc0})
	f.Add([]byte{0x80})
	f.Add([]byte{0x84, 0xa1, 'b', 0xdb, 0xff, 0xff, 0xff, 0xff})
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		ref, err := ParseBlobRef(data)
		if err != nil {
			if ReasonOf(err) != ReasonBlobRef {
				t.Fatalf("reject reason %q, want %q", ReasonOf(err), ReasonBlobRef)
			}
			return
		}
		if ref.check() != nil {
			t.Fatalf("accepted a reference that fails its checks: %+v", ref)
		}
		enc, err := ref.Encode()
		if err != nil {
			t.Fatalf("accepted %+v does not encode: %v", ref, err)
		}
		again, err := ParseBlobRef(enc)
		if err != nil || again.Bucket != ref.Bucket || again.Name != ref.Name || again.Size != ref.Size || !bytes.Equal(again.Digest, ref.Digest) {
			t.Fatalf("round trip of %+v: %+v, %v", ref, again, err)
		}
	})
}
