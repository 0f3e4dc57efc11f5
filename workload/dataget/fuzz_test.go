package dataget

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"testing"
)

// Seeds are small on purpose: the fuzzing engine slows to a few
// executions a second on inputs of tens of kilobytes such as the real
// files, which the unit tests read whole.

// pickleArray is a protocol-2 pickle of a numpy array as numpy writes it.
func pickleArray(kind string, shape []int, data []byte) []byte {
	b := []byte("cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85U\x01b\x87R(K\x01")
	b = append(b, '(')
	for _, d := range shape {
		b = append(b, 'M', byte(d), byte(d>>8))
	}
	b = append(b, 't')
	b = append(b, "cnumpy\ndtype\nU\x02"+kind+"K\x00K\x01\x87R(K\x03U\x01<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb\x89T"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(append(b, data...), "tb"...)
}

// pickleCSR is a protocol-2 pickle of a 2×3 scipy csr_matrix.
func pickleCSR() []byte {
	i32 := func(vs ...int32) []byte {
		var w bytes.Buffer
		binary.Write(&w, binary.LittleEndian, vs)
		return w.Bytes()
	}
	b := []byte("\x80\x02cscipy.sparse.csr\ncsr_matrix\n)\x81}(U\x06_shapeK\x02K\x03\x86U\x06indptr")
	b = append(b, pickleArray("i4", []int{3}, i32(0, 1, 3))...)
	b = append(b, "U\x07indices"...)
	b = append(b, pickleArray("i4", []int{3}, i32(2, 0, 1))...)
	b = append(b, "U\x04data"...)
	b = append(b, pickleArray("f4", []int{3}, i32(0x3f800000, 0x3f800000, 0x40000000))...)
	return append(b, "ub."...)
}

// npzBytes zips .npy members as numpy.savez_compressed does.
func npzBytes(members map[string][]byte) []byte {
	var w bytes.Buffer
	z := zip.NewWriter(&w)
	for name, b := range members {
		f, _ := z.Create(name + ".npy")
		f.Write(b)
	}
	z.Close()
	return w.Bytes()
}

// The pickle machine takes untrusted bytes: whatever they are, it returns
// a value or an error, never panics, and the readers of numpy, scipy and
// dict values built on it do the same.
func FuzzUnpickle(f *testing.F) {
	f.Add(pickleCSR())
	f.Add(append(append([]byte("\x80\x02"), pickleArray("i8", []int{2, 2}, make([]byte, 32))...), '.'))
	f.Add([]byte("\x80\x02ccollections\ndefaultdict\nc__builtin__\nlist\n\x85R}(K\x00]K\x01aK\x01]u."))
	f.Add([]byte("\x80\x02}(U\x01aK\x01U\x01bN\x88\x86u."))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Unpickle(b)
		if err != nil {
			return
		}
		pickledArray(v)
		pickledCSR(v)
		pickledAdjacency(v)
		oneHotRows(v)
	})
}

// .npy bytes give an array whose data matches its shape, or an error.
func FuzzParseNPY(f *testing.F) {
	f.Add(npyBytes("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", make([]byte, 24)))
	f.Add(npyBytes("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", []byte{1, 0, 1}))
	f.Add(npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", make([]byte, 8)))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseNPY(b)
		if err != nil {
			return
		}
		size, _ := itemSize(a.Kind)
		if a.Len()*size != len(a.Data) {
			t.Fatalf("shape %v of %s with %d bytes", a.Shape, a.Kind, len(a.Data))
		}
		a.Float32s()
		a.Int64s()
	})
}

// npzKeys are the members of a heterophilous-graphs npz, in order.
func npzKeys() []string {
	return []string{"node_features", "node_labels", "edges", "train_masks", "val_masks", "test_masks"}
}

// npzMembers is a three-node graph's npy members, in npzKeys order.
func npzMembers() [][]byte {
	hdr := func(kind, shape string) string {
		return "{'descr': '" + kind + "', 'fortran_order': False, 'shape': (" + shape + "), }"
	}
	return [][]byte{
		npyBytes(hdr("<f4", "3, 1"), []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0, 0, 0x80, 0x3f}),
		npyBytes(hdr("<i8", "3,"), []byte{0, 7: 0, 8: 1, 15: 0, 16: 1, 23: 0}),
		npyBytes(hdr("<i8", "2, 2"), []byte{0, 7: 0, 8: 1, 15: 0, 16: 1, 23: 0, 24: 2, 31: 0}),
		npyBytes(hdr("|b1", "1, 3"), []byte{1, 0, 0}),
		npyBytes(hdr("|b1", "1, 3"), []byte{0, 1, 0}),
		npyBytes(hdr("|b1", "1, 3"), []byte{0, 0, 1}),
	}
}

// npzSeed is npzMembers zipped.
func npzSeed() []byte {
	m := map[string][]byte{}
	for i, b := range npzMembers() {
		m[npzKeys()[i]] = b
	}
	return npzBytes(m)
}

// The six arrays of an npz convert to a valid dataset or fail. The
// members are fuzzed as npy bytes, not zipped: a zip's checksums would
// turn nearly every mutation into the same early error.
func FuzzNPZGraph(f *testing.F) {
	m := npzMembers()
	f.Add(m[0], m[1], m[2], m[3], m[4], m[5])
	f.Fuzz(func(t *testing.T, feat, labels, edges, train, val, test []byte) {
		arrs := map[string]Array{}
		for i, b := range [][]byte{feat, labels, edges, train, val, test} {
			a, err := ParseNPY(b)
			if err != nil {
				return
			}
			arrs[npzKeys()[i]] = a
		}
		if d, err := graphFromArrays("fuzz", arrs); err == nil {
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// Interaction lists parse or fail, and what parses builds a valid matrix.
func FuzzParsePairs(f *testing.F) {
	f.Add([]byte("1\t2\t10\r\n1\t1\t3\r\n3\t2\t1\r\n"))
	f.Add([]byte("2\t3\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := parsePairs(b)
		if err != nil || len(ps) > 1000 {
			return
		}
		users, items := 0, 0
		for _, p := range ps {
			users, items = max(users, int(p[0])+1), max(items, int(p[1])+1)
		}
		if err := pairsCSR(ps, users, items).Validate(); err != nil {
			t.Fatal(err)
		}
	})
}

// The hand-built seeds decode as the real files do.
func TestFuzzSeedsDecode(t *testing.T) {
	v, err := Unpickle(pickleCSR())
	if err != nil {
		t.Fatal(err)
	}
	m, err := pickledCSR(v)
	if err != nil || m.Rows != 2 || m.Cols != 3 || m.Data[2] != 2 {
		t.Fatalf("csr seed: %+v %v", m, err)
	}
	d, err := convertNPZGraph("seed", npzSeed())
	if err != nil || d.N() != 3 || d.Adj.NNZ() != 4 || d.Metric != "roc_auc" {
		t.Fatalf("npz seed: %v", err)
	}
}
