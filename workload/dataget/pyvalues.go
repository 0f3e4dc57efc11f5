package dataget

import (
	"errors"
	"fmt"
)

// The modules numpy and scipy have pickled their types under: numpy 2
// moved numpy.core to numpy._core, scipy 1.8 csr to _csr.
func isGlobal(g pyGlobal, name string, modules ...string) bool {
	if g.Name != name {
		return false
	}
	for _, m := range modules {
		if g.Module == m {
			return true
		}
	}
	return false
}

// pickledArray reads a pickled numpy.ndarray: _reconstruct(ndarray, (0,),
// b'b') with the BUILD state (version, shape, dtype, fortran, raw bytes).
func pickledArray(v any) (Array, error) {
	c, ok := v.(*pyCall)
	if !ok || !isGlobal(c.Fn, "_reconstruct", "numpy.core.multiarray", "numpy._core.multiarray") {
		return Array{}, fmt.Errorf("want a numpy array, have %s", describe(v))
	}
	st, ok := c.State.(pyTuple)
	if !ok || len(st) != 5 {
		return Array{}, errors.New("numpy array: state is not (version, shape, dtype, fortran, data)")
	}
	shapeT, ok1 := st[1].(pyTuple)
	fortran, ok2 := st[3].(bool)
	raw, ok3 := st[4].(string)
	if !ok1 || !ok2 || !ok3 {
		return Array{}, errors.New("numpy array: malformed state")
	}
	shape := make([]int, len(shapeT))
	for i, d := range shapeT {
		n, ok := d.(int64)
		if !ok || n < 0 || n > maxNPYElements {
			return Array{}, fmt.Errorf("numpy array: bad dimension %v", d)
		}
		shape[i] = int(n)
	}
	kind, err := pickledDtype(st[2])
	if err != nil {
		return Array{}, err
	}
	a, err := newArray(kind, shape, fortran, []byte(raw))
	if err != nil {
		return Array{}, fmt.Errorf("numpy array: %w", err)
	}
	return a, nil
}

// pickledDtype reads numpy.dtype('i4', 0, 1) with its BUILD state
// (version, byte order, ...) as a type code such as "i4". Only
// little-endian (or byte-order-free) types are accepted.
func pickledDtype(v any) (string, error) {
	c, ok := v.(*pyCall)
	if !ok || !isGlobal(c.Fn, "dtype", "numpy") || len(c.Args) == 0 {
		return "", fmt.Errorf("want a numpy dtype, have %s", describe(v))
	}
	kind, ok := c.Args[0].(string)
	if !ok {
		return "", errors.New("numpy dtype: type is not a string")
	}
	size, known := itemSize(kind)
	if !known {
		return "", fmt.Errorf("numpy dtype %q not supported", kind)
	}
	order := "|"
	if st, ok := c.State.(pyTuple); ok && len(st) > 1 {
		if s, ok := st[1].(string); ok {
			order = s
		}
	}
	if order != "<" && order != "|" && !(order == "=" && size == 1) {
		return "", fmt.Errorf("numpy dtype %q with byte order %q (want little-endian)", kind, order)
	}
	return kind, nil
}

// sparseRows is a CSR matrix read from a pickle.
type sparseRows struct {
	Rows, Cols      int
	Indptr, Indices []int64
	Data            []float32
}

// pickledCSR reads a pickled scipy.sparse.csr_matrix (its instance dict
// as the BUILD state) and checks its structure.
func pickledCSR(v any) (sparseRows, error) {
	var m sparseRows
	c, ok := v.(*pyCall)
	if !ok || !isGlobal(c.Fn, "csr_matrix", "scipy.sparse.csr", "scipy.sparse._csr") {
		return m, fmt.Errorf("want a scipy csr_matrix, have %s", describe(v))
	}
	st, ok := c.State.(*pyDict)
	if !ok {
		return m, errors.New("csr_matrix: state is not a dict")
	}
	shape, ok := st.get("_shape").(pyTuple)
	if !ok || len(shape) != 2 {
		return m, errors.New("csr_matrix: no 2-d _shape")
	}
	for i, p := range []*int{&m.Rows, &m.Cols} {
		n, ok := shape[i].(int64)
		if !ok || n < 0 || n > maxNPYElements {
			return m, fmt.Errorf("csr_matrix: bad shape %v", shape)
		}
		*p = int(n)
	}
	var err error
	get := func(key string) (Array, error) {
		a, err := pickledArray(st.get(key))
		if err != nil {
			return a, fmt.Errorf("csr_matrix %s: %w", key, err)
		}
		return a, nil
	}
	ip, err := get("indptr")
	if err != nil {
		return m, err
	}
	ix, err := get("indices")
	if err != nil {
		return m, err
	}
	dv, err := get("data")
	if err != nil {
		return m, err
	}
	if m.Indptr, err = ip.Int64s(); err != nil {
		return m, fmt.Errorf("csr_matrix indptr: %w", err)
	}
	if m.Indices, err = ix.Int64s(); err != nil {
		return m, fmt.Errorf("csr_matrix indices: %w", err)
	}
	if m.Data, err = dv.Float32s(); err != nil {
		return m, fmt.Errorf("csr_matrix data: %w", err)
	}
	return m, m.check()
}

func (m sparseRows) check() error {
	if len(m.Indptr) != m.Rows+1 || m.Indptr[0] != 0 {
		return fmt.Errorf("csr_matrix: indptr of %d entries for %d rows", len(m.Indptr), m.Rows)
	}
	for i := 1; i <= m.Rows; i++ {
		if m.Indptr[i] < m.Indptr[i-1] {
			return fmt.Errorf("csr_matrix: indptr decreases at row %d", i-1)
		}
	}
	nnz := m.Indptr[m.Rows]
	if int64(len(m.Indices)) != nnz || int64(len(m.Data)) != nnz {
		return fmt.Errorf("csr_matrix: %d indices and %d values for %d entries", len(m.Indices), len(m.Data), nnz)
	}
	for _, c := range m.Indices {
		if c < 0 || c >= int64(m.Cols) {
			return fmt.Errorf("csr_matrix: column %d outside [0,%d)", c, m.Cols)
		}
	}
	return nil
}

// pickledAdjacency reads a dict (or defaultdict) of int node id to a list
// of int neighbour ids, in the pickle's order.
func pickledAdjacency(v any) (keys []int64, lists [][]int64, err error) {
	var d *pyDict
	switch t := v.(type) {
	case *pyDict:
		d = t
	case *pyCall:
		if !isGlobal(t.Fn, "defaultdict", "collections") || t.Items == nil {
			return nil, nil, fmt.Errorf("want a dict of lists, have %s", describe(v))
		}
		d = t.Items
	default:
		return nil, nil, fmt.Errorf("want a dict of lists, have %s", describe(v))
	}
	for i, k := range d.Keys {
		id, ok := k.(int64)
		if !ok {
			return nil, nil, fmt.Errorf("dict key %s is not an int", describe(k))
		}
		l, ok := d.Values[i].(*pyList)
		if !ok {
			return nil, nil, fmt.Errorf("dict value of %d is %s, not a list", id, describe(d.Values[i]))
		}
		ns := make([]int64, len(l.Items))
		for j, x := range l.Items {
			if ns[j], ok = x.(int64); !ok {
				return nil, nil, fmt.Errorf("neighbour %s of %d is not an int", describe(x), id)
			}
		}
		keys = append(keys, id)
		lists = append(lists, ns)
	}
	return keys, lists, nil
}

// describe names a decoded value's type for error messages.
func describe(v any) string {
	switch t := v.(type) {
	case *pyCall:
		return t.Fn.Module + "." + t.Fn.Name + "(...)"
	case nil:
		return "None"
	}
	return fmt.Sprintf("%T", v)
}
