package bus

import "testing"

func TestSubjectKind(t *testing.T) {
	cases := map[string]Kind{
		"gf.job-1.update.client-0": KindUpdate,
		"gf.job-1.emb.a.b":         KindEmb,
		"gf.job-1.round":           KindRound,
		"gf.job-1.":                "other",
		"gf.job-1":                 "other",
		"_INBOX.abc":               "other",
		"":                         "other",
		"gf.j.model.all":           KindModel,
	}
	for subj, want := range cases {
		if got := subjectKind(subj); got != want {
			t.Errorf("subjectKind(%q) = %q, want %q", subj, got, want)
		}
	}
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
