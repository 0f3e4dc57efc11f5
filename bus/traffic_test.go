package bus

import "testing"

func TestChannelOf(t *testing.T) {
	for _, c := range []struct{ subject, want string }{
		{Subject("job-1", KindUpdate, "bank-1"), "update"},
		{Subject("job-1", KindModel, "all"), "model"},
		{Subject("job-1", KindEmb, "a", "b"), "emb"},
		{Subject("job-1", KindRound), "round"},
		{Subject("job-1", KindDone), "done"},
		{"gf.job-1.invented.x", ChannelOther},
		{"gf.job-1", ChannelOther},
		{"gf.", ChannelOther},
		{"$JS.API.STREAM.INFO.x", ChannelJetStream},
		{"$KV.bucket.key", ChannelJetStream},
		{"_INBOX.abc.def", ChannelInbox},
		{"", ChannelOther},
		{"other.subject", ChannelOther},
	} {
		if got := ChannelOf(c.subject); got != c.want {
			t.Errorf("ChannelOf(%q) = %q, want %q", c.subject, got, c.want)
		}
	}
}
