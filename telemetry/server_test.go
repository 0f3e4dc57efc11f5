package telemetry

import (
	"testing"

	"graphfed/bus"
)

// fakeServer is a server's event counts, set by the test.
type fakeServer struct {
	events     map[bus.ServerEventKey]int64
	suppressed map[string]int64
}

func (f *fakeServer) Events() map[bus.ServerEventKey]int64 { return f.events }
func (f *fakeServer) LogSuppressed() map[string]int64      { return f.suppressed }

// The server's counts are read at every scrape, and a second server on
// the same metrics is refused.
func TestWatchServer(t *testing.T) {
	m := New()
	srv := &fakeServer{
		events: map[bus.ServerEventKey]int64{
			{Kind: bus.ServerEventPermission, Reason: "publish"}:           7,
			{Kind: bus.ServerEventAuthorization, Reason: "authentication"}: 2,
			{Kind: bus.ServerEventWarning}:                                 0,
		},
		suppressed: map[string]int64{bus.ServerEventPermission: 4},
	}
	if err := m.WatchServer(srv); err != nil {
		t.Fatal(err)
	}
	expect(t, m.Registry(), []sample{
		{"graphfed_server_events_total", labels("kind", "permission_violation", "reason", "publish"), 7},
		{"graphfed_server_events_total", labels("kind", "authorization_failure", "reason", "authentication"), 2},
		{"graphfed_server_events_total", labels("kind", "warning", "reason", ""), 0},
		{"graphfed_server_log_suppressed_total", labels("kind", "permission_violation"), 4},
	})
	srv.events[bus.ServerEventKey{Kind: bus.ServerEventPermission, Reason: "publish"}] = 9
	expect(t, m.Registry(), []sample{{"graphfed_server_events_total", labels("kind", "permission_violation", "reason", "publish"), 9}})
	if err := m.WatchServer(&fakeServer{}); err == nil {
		t.Error("a second server was watched on the same metrics")
	}
}
