package bus

import "testing"

func TestTrafficByKind(t *testing.T) {
	var tr trafficByKind
	tr.add("gf.j.emb.a.b", 10)
	tr.add("gf.j.emb.b.a", 5)
	tr.add("gf.j.model.all", 7)
	sum := map[Kind]Traffic{KindEmb: {Messages: 1, Bytes: 1}}
	AddTraffic(sum, tr.snapshot())
	if sum[KindEmb] != (Traffic{3, 16}) || sum[KindModel] != (Traffic{1, 7}) {
		t.Fatalf("traffic %+v", sum)
	}
}
