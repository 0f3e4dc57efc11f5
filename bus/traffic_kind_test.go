package bus

import "testing"

func TestTrafficByKind(t *testing.T) {
	var tr trafficByKind
	tr.add(DirectionSent, "gf.j.emb.a.b", 10)
	tr.add(DirectionSent, "gf.j.emb.b.a", 5)
	tr.add(DirectionSent, "gf.j.model.all", 7)
	tr.add(DirectionReceived, "gf.j.emb.c.a", 100) // counted apart
	if got := tr.snapshot(DirectionReceived)[KindEmb]; got != (Traffic{1, 100}) {
		t.Fatalf("received emb traffic %+v", got)
	}
	sum := map[Kind]Traffic{KindEmb: {Messages: 1, Bytes: 1}}
	AddTraffic(sum, tr.snapshot(DirectionSent))
	if sum[KindEmb] != (Traffic{3, 16}) || sum[KindModel] != (Traffic{1, 7}) {
		t.Fatalf("traffic %+v", sum)
	}
}
