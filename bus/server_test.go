package bus

import (
	"bytes"
	"context"
	"testing"
	"time"
)

func startTestServer(t testing.TB) *Server {
	t.Helper()
	s, err := StartServer(ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func natsTransport(t testing.TB, url, name string) *NATSTransport {
	t.Helper()
	nc, err := Connect(url, ConnectOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	tr := NewNATSTransport(nc, true)
	t.Cleanup(func() { tr.Close() })
	return tr
}

// Both transports deliver across subjects of one subscription in order and
// answer requests; a large payload (8 MiB) passes the raised limit.
func TestTransports(t *testing.T) {
	srv := startTestServer(t)
	inmem := NewInmemNetwork()
	for _, tc := range []struct {
		name string
		pub  Transport
		sub  Transport
	}{
		{"nats", natsTransport(t, srv.ClientURL(), "pub"), natsTransport(t, srv.ClientURL(), "sub")},
		{"inmem", inmem.Transport(), inmem.Transport()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got := make(chan Msg, 100)
			sub, err := tc.sub.Subscribe(func(m Msg) { got <- m }, "gf.j.model.all", "gf.j.round")
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			tc.sub.Flush(ctx)
			big := bytes.Repeat([]byte{7}, 8<<20)
			subjects := []string{"gf.j.model.all", "gf.j.round", "gf.j.model.all", "gf.j.round"}
			for i, s := range subjects {
				data := []byte{byte(i)}
				if i == 2 {
					data = big
				}
				if err := tc.pub.Publish(ctx, s, data); err != nil {
					t.Fatal(err)
				}
			}
			tc.pub.Flush(ctx)
			for i, s := range subjects {
				select {
				case m := <-got:
					if m.Subject != s {
						t.Fatalf("message %d on %s, want %s", i, m.Subject, s)
					}
					if i == 2 && len(m.Data) != len(big) {
						t.Fatalf("big message truncated to %d", len(m.Data))
					}
				case <-ctx.Done():
					t.Fatalf("message %d not delivered", i)
				}
			}
			rs, _ := tc.sub.Subscribe(func(m Msg) { tc.sub.Respond(m, append([]byte("re:"), m.Data...)) }, "gf.j.hello.*")
			defer rs.Unsubscribe()
			tc.sub.Flush(ctx)
			reply, err := tc.pub.Request(ctx, "gf.j.hello.a", []byte("hi"))
			if err != nil || string(reply) != "re:hi" {
				t.Fatalf("reply %q, %v", reply, err)
			}
			if n, b := tc.pub.Stats(); n < 5 || b < int64(len(big)) {
				t.Fatalf("stats %d msgs %d bytes", n, b)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	tests := []struct {
		subj string
		ok   bool
		want ParsedSubject
	}{
		{"gf.job.update.bank-1", true, ParsedSubject{"job", KindUpdate, "bank-1", ""}},
		{"gf.job.emb.a.b", true, ParsedSubject{"job", KindEmb, "a", "b"}},
		{"gf.job.round", true, ParsedSubject{"job", KindRound, "", ""}},
		{"gf.Job.round", false, ParsedSubject{}},
		{"xx.job.round", false, ParsedSubject{}},
		{"gf.job", false, ParsedSubject{}},
		{"gf.job.emb.a.b.c", false, ParsedSubject{}},
	}
	for _, tc := range tests {
		got, err := ParseSubject(tc.subj)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseSubject(%q) = %+v, %v", tc.subj, got, err)
		}
	}
	if !SubjectMatches("gf.j.update.*", "gf.j.update.a") || SubjectMatches("gf.j.update.*", "gf.j.update.a.b") ||
		!SubjectMatches("gf.j.>", "gf.j.emb.a.b") || SubjectMatches("gf.j.>", "gf.j") {
		t.Fatal("wildcard matching")
	}
}
