package inbox

import (
	"fmt"
	"slices"
	"testing"
)

// item is a test message: its sender and size.
type item struct {
	from string
	n    int
}

func itemSize(it item) int { return it.n }

func drain(q *Queue[item]) []string {
	var order []string
	for {
		it, ok := q.Pop()
		if !ok {
			return order
		}
		order = append(order, it.from)
	}
}

// push is one Push of a test case.
type push struct {
	from string
	n    int
	keep bool
}

func flood(from string, k, n int) []push {
	var out []push
	for range k {
		out = append(out, push{from: from, n: n})
	}
	return out
}

// boundsCase pushes its messages in order and checks what was kept, what
// each sender was charged and what the queue held at most.
type boundsCase struct {
	name     string
	reserve  map[string]Allowance
	pushes   []push
	kept     map[string]int // messages queued per sender
	dropped  map[string]uint64
	wantPeak int // PeakBytes
}

// TestQueueBounds runs every case in both orders: the bounds do not
// depend on the order of service.
func TestQueueBounds(t *testing.T) {
	lim := Limits{SenderMsgs: 4, SenderBytes: 200, TotalBytes: 300}
	tests := []boundsCase{
		{name: "a flood by bytes keeps what fits its sender's bytes",
			pushes: flood("x", 10, 90), kept: map[string]int{"x": 2}, dropped: map[string]uint64{"x": 8}, wantPeak: 180},
		{name: "a flood by messages keeps its sender's messages",
			pushes: flood("x", 10, 1), kept: map[string]int{"x": 4}, dropped: map[string]uint64{"x": 6}, wantPeak: 4},
		{name: "the shared total drops the third sender",
			pushes: append(append(flood("a", 2, 80), flood("b", 2, 80)...), push{from: "c", n: 80}),
			kept:   map[string]int{"a": 2, "b": 1, "c": 0}, dropped: map[string]uint64{"b": 1, "c": 1}, wantPeak: 240},
		{name: "a reserved sender is not crowded out by the shared total",
			reserve: map[string]Allowance{"agg": {Msgs: 8, Bytes: 400}},
			pushes:  append(append(flood("a", 4, 75), flood("b", 4, 75)...), flood("agg", 5, 75)...),
			kept:    map[string]int{"a": 2, "b": 2, "agg": 5}, dropped: map[string]uint64{"a": 2, "b": 2}, wantPeak: 675},
		{name: "a reserved sender is bounded by its own allowance",
			reserve: map[string]Allowance{"agg": {Msgs: 2, Bytes: 1000}},
			pushes:  flood("agg", 3, 10), kept: map[string]int{"agg": 2}, dropped: map[string]uint64{"agg": 1}, wantPeak: 20},
		{name: "a message that must be kept is kept past every bound",
			pushes: append(flood("d", 3, 90), push{from: "d", n: 90, keep: true}),
			kept:   map[string]int{"d": 3}, dropped: map[string]uint64{"d": 1}, wantPeak: 270},
	}
	for _, tc := range tests {
		for _, order := range []Order{RoundRobin, Arrival} {
			t.Run(fmt.Sprintf("%s, order %d", tc.name, order), func(t *testing.T) { testBounds(t, New(lim, order, itemSize), tc) })
		}
	}
}

func testBounds(t *testing.T, q *Queue[item], tc boundsCase) {
	for s, a := range tc.reserve {
		q.Reserve(s, a)
	}
	for _, p := range tc.pushes {
		q.Push(p.from, item{p.from, p.n}, p.keep)
	}
	st := q.Stats()
	for s, want := range tc.dropped {
		if st[s].Dropped != want {
			t.Errorf("%s: dropped %d, want %d (%+v)", s, st[s].Dropped, want, st[s])
		}
	}
	if q.PeakBytes() != tc.wantPeak || q.PeakBytes() > q.Bound() {
		t.Errorf("peak %d bytes, want %d (bound %d)", q.PeakBytes(), tc.wantPeak, q.Bound())
	}
	got := map[string]int{}
	for _, s := range drain(q) {
		got[s]++
	}
	for s, want := range tc.kept {
		if got[s] != want {
			t.Errorf("%s: %d messages kept, want %d", s, got[s], want)
		}
	}
	if q.Len() != 0 || q.Bytes() != 0 || q.shared != 0 {
		t.Errorf("drained queue holds %d messages, %d bytes, %d shared", q.Len(), q.Bytes(), q.shared)
	}
}

// TestQueueOrder: RoundRobin serves the senders one message each in
// turn, each sender's messages in their order, whatever one of them
// queued; Arrival serves them as they came.
func TestQueueOrder(t *testing.T) {
	pushes := append(flood("flood", 3, 1), push{from: "a", n: 100}, push{from: "b", n: 200}, push{from: "a", n: 101})
	tests := []struct {
		order Order
		want  []item
	}{
		{RoundRobin, []item{{"flood", 1}, {"a", 100}, {"b", 200}, {"flood", 1}, {"a", 101}, {"flood", 1}}},
		{Arrival, []item{{"flood", 1}, {"flood", 1}, {"flood", 1}, {"a", 100}, {"b", 200}, {"a", 101}}},
	}
	for _, tc := range tests {
		q := New(Limits{SenderMsgs: 100, SenderBytes: 1 << 20, TotalBytes: 1 << 20}, tc.order, itemSize)
		for _, p := range pushes {
			q.Push(p.from, item{p.from, p.n}, false)
		}
		var order []item
		for {
			it, ok := q.Pop()
			if !ok {
				break
			}
			order = append(order, it)
		}
		if !slices.Equal(order, tc.want) {
			t.Errorf("order %d: served %v, want %v", tc.order, order, tc.want)
		}
	}
}

// TestQueueArrivalInterleaved: in arrival order a sender that empties
// and comes back is served after what came before it, and a dropped
// message leaves no trace in the order.
func TestQueueArrivalInterleaved(t *testing.T) {
	q := New(Limits{SenderMsgs: 1, SenderBytes: 100, TotalBytes: 1000}, Arrival, itemSize)
	q.Push("a", item{"a", 1}, false)
	q.Push("b", item{"b", 2}, false)
	if ok, _ := q.Push("b", item{"b", 3}, false); ok {
		t.Fatal("b's second message fitted one message")
	}
	var got []item
	pop := func() {
		if it, ok := q.Pop(); ok {
			got = append(got, it)
		}
	}
	pop()
	q.Push("a", item{"a", 4}, false)
	q.Push("c", item{"c", 5}, false)
	pop()
	pop()
	pop()
	pop()
	if want := []item{{"a", 1}, {"b", 2}, {"a", 4}, {"c", 5}}; !slices.Equal(got, want) {
		t.Fatalf("served %v, want %v", got, want)
	}
	if q.Len() != 0 || len(q.arrivals) != 0 {
		t.Fatalf("%d messages, %d arrivals left", q.Len(), len(q.arrivals))
	}
}

// TestQueueReserveAfterQueued: a sender reserved while it has messages
// waiting takes them out of the shared total.
func TestQueueReserveAfterQueued(t *testing.T) {
	q := New(Limits{SenderMsgs: 10, SenderBytes: 100, TotalBytes: 100}, Arrival, itemSize)
	q.Push("agg", item{"agg", 60}, false)
	if ok, _ := q.Push("a", item{"a", 60}, false); ok {
		t.Fatal("the shared total let 120 bytes in of 100")
	}
	q.Reserve("agg", Allowance{Msgs: 10, Bytes: 100})
	if ok, _ := q.Push("a", item{"a", 60}, false); !ok {
		t.Fatal("the reserved sender's bytes still count in the shared total")
	}
	drain(q)
	if q.shared != 0 || q.Bytes() != 0 {
		t.Fatalf("drained: %d shared, %d bytes", q.shared, q.Bytes())
	}
	if q.Bound() != 200 {
		t.Fatalf("bound %d, want the total and the allowance, 200", q.Bound())
	}
}

// TestQueueQueued lists one sender's waiting messages, oldest first, and
// stops when told.
func TestQueueQueued(t *testing.T) {
	q := New(Limits{SenderMsgs: 10, SenderBytes: 100, TotalBytes: 100}, Arrival, itemSize)
	for i := range 3 {
		q.Push("agg", item{"agg", i}, false)
		q.Push("b", item{"b", 10 + i}, false)
	}
	var sizes []int
	for it := range q.Queued("agg") {
		sizes = append(sizes, it.n)
		if len(sizes) == 2 {
			break
		}
	}
	if !slices.Equal(sizes, []int{0, 1}) {
		t.Fatalf("queued of agg: %v", sizes)
	}
	for range q.Queued("nobody") {
		t.Fatal("a sender without messages has some")
	}
	if q.Len() != 6 {
		t.Fatalf("Queued took messages: %d left", q.Len())
	}
}
