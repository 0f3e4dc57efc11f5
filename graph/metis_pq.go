package graph

// gainPQ is an indexed binary max-heap of vertices keyed by gain, with
// update and removal by vertex: the priority queue FM refinement and greedy
// graph growing need. Equal gains pop in an order fixed by the sequence of
// operations, so runs are deterministic.
type gainPQ struct {
	heap []int32
	pos  []int32 // position of each vertex in heap, -1 when absent
	key  []int
}

func newGainPQ(n int) *gainPQ {
	q := &gainPQ{pos: make([]int32, n), key: make([]int, n)}
	for i := range q.pos {
		q.pos[i] = -1
	}
	return q
}

func (q *gainPQ) len() int              { return len(q.heap) }
func (q *gainPQ) contains(v int32) bool { return q.pos[v] >= 0 }

// reset empties the queue in time proportional to its length.
func (q *gainPQ) reset() {
	for _, v := range q.heap {
		q.pos[v] = -1
	}
	q.heap = q.heap[:0]
}

// set inserts v with key k, or changes its key.
func (q *gainPQ) set(v int32, k int) {
	if q.pos[v] < 0 {
		q.key[v] = k
		q.pos[v] = int32(len(q.heap))
		q.heap = append(q.heap, v)
		q.up(len(q.heap) - 1)
		return
	}
	old := q.key[v]
	q.key[v] = k
	if k > old {
		q.up(int(q.pos[v]))
	} else {
		q.down(int(q.pos[v]))
	}
}

// remove drops v if present.
func (q *gainPQ) remove(v int32) {
	i := int(q.pos[v])
	if i < 0 {
		return
	}
	last := len(q.heap) - 1
	q.swap(i, last)
	q.heap = q.heap[:last]
	q.pos[v] = -1
	if i < last {
		q.down(i)
		q.up(i)
	}
}

// pop removes and returns the vertex of largest key; the queue must not be
// empty.
func (q *gainPQ) pop() int32 {
	v := q.heap[0]
	q.remove(v)
	return v
}

func (q *gainPQ) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.pos[q.heap[i]] = int32(i)
	q.pos[q.heap[j]] = int32(j)
}

func (q *gainPQ) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if q.key[q.heap[p]] >= q.key[q.heap[i]] {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *gainPQ) down(i int) {
	n := len(q.heap)
	for {
		l, big := 2*i+1, i
		if l < n && q.key[q.heap[l]] > q.key[q.heap[big]] {
			big = l
		}
		if r := l + 1; r < n && q.key[q.heap[r]] > q.key[q.heap[big]] {
			big = r
		}
		if big == i {
			return
		}
		q.swap(i, big)
		i = big
	}
}
