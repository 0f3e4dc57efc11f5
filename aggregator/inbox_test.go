package aggregator

import (
	"bytes"
	"testing"

	"graphfed/bus"
)

func inboxMsg(from string, n int) queued {
	return queued{msg: bus.Msg{Subject: bus.Subject("j", bus.KindUpdate, from), Data: bytes.Repeat([]byte{1}, n)}}
}

// TestInboxFlooderLosesOnlyItsOwn: a sender over its limits loses its
// newest messages, counted against it, while the other senders' messages
// all stay and are served in turn.
func TestInboxFlooderLosesOnlyItsOwn(t *testing.T) {
	const payload = 1000
	lim := InboxLimits{SenderMsgs: 4, SenderBytes: 2 * payload, TotalBytes: 10 * payload}
	tests := []struct {
		name        string
		flood, size int
		wantKept    int
	}{
		{"by bytes: two full payloads fit", 30, payload - 30, 2},
		{"by messages", 30, 10, 4},
		{"within limits", 2, 10, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := NewInbox(lim)
			b.Push("bank-1", inboxMsg("bank-1", 100), false)
			for range tc.flood {
				b.Push("bank-0", inboxMsg("bank-0", tc.size), false)
			}
			if ok, _ := b.Push("bank-2", inboxMsg("bank-2", 100), false); !ok {
				t.Fatal("an honest bank's message was dropped after the flood")
			}
			st := b.Stats()
			if got := st["bank-0"]; got.Received != uint64(tc.flood) || got.Dropped != uint64(tc.flood-tc.wantKept) {
				t.Fatalf("flooder counters %+v, want %d received and %d dropped", got, tc.flood, tc.flood-tc.wantKept)
			}
			if st["bank-1"].Dropped+st["bank-2"].Dropped != 0 {
				t.Fatalf("honest banks lost messages: %+v", st)
			}
			// Round-robin: the honest banks are served within the first
			// three pops, whatever the flooder queued.
			var order []string
			for {
				q, ok := b.Pop()
				if !ok {
					break
				}
				order = append(order, senderOf(q.msg.Subject))
			}
			if len(order) != 2+tc.wantKept {
				t.Fatalf("popped %d messages, want %d", len(order), 2+tc.wantKept)
			}
			seen := map[string]bool{}
			for _, s := range order[:3] {
				seen[s] = true
			}
			if !seen["bank-1"] || !seen["bank-2"] {
				t.Fatalf("service order %v: the honest banks waited behind the flooder", order)
			}
			if b.Len() != 0 || b.Bytes() != 0 {
				t.Fatalf("drained inbox holds %d messages, %d bytes", b.Len(), b.Bytes())
			}
		})
	}
}

// TestInboxTotalAndMustKeep: the total bound drops what would exceed it,
// except messages that must be kept (the durable log's).
func TestInboxTotalAndMustKeep(t *testing.T) {
	b := NewInbox(InboxLimits{SenderMsgs: 100, SenderBytes: 1 << 20, TotalBytes: 350}) // three messages of 90 bytes and their subjects
	for i, from := range []string{"a", "b", "c", "d"} {
		ok, _ := b.Push(from, inboxMsg(from, 90), false)
		if want := i < 3; ok != want {
			t.Fatalf("push %d from %s: queued %v, want %v", i, from, ok, want)
		}
	}
	if ok, _ := b.Push("d", inboxMsg("d", 90), true); !ok {
		t.Fatal("a message that must be kept was dropped")
	}
	if st := b.Stats()["d"]; st.Received != 2 || st.Dropped != 1 {
		t.Fatalf("counters of d: %+v", st)
	}
}

func TestSenderOf(t *testing.T) {
	for subj, want := range map[string]string{
		"gf.j.update.bank-0":     "bank-0",
		"gf.j.hello.bank-1":      "bank-1",
		"gf.j.round":             "?gf.j.round",
		"nonsense":               "?nonsense",
		"gf.j.update.Bad*Token!": "?gf.j.update.Bad*Token!",
	} {
		if got := senderOf(subj); got != want {
			t.Errorf("senderOf(%q) = %q, want %q", subj, got, want)
		}
	}
}
