package telemetry

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestServeAndShutdownWithContext(t *testing.T) {
	m := New()
	m.Aggregator().Stepped(nil, 0, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := Serve(ctx, "127.0.0.1:0", m.Handler())
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr().String() + "/metrics"
	if strings.HasSuffix(srv.Addr().String(), ":0") {
		t.Fatalf("address %s: the chosen port is not reported", srv.Addr())
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	if _, ok := families["graphfed_round"]; !ok {
		t.Fatalf("graphfed_round missing from %d families", len(families))
	}
	cancel()
	select {
	case <-srv.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the server kept serving after its context ended")
	}
	if _, err := http.Get(url); err == nil {
		t.Fatal("still answering after shutdown")
	}
}

func TestServeRefusesABusyAddress(t *testing.T) {
	ctx := context.Background()
	a, err := Serve(ctx, "127.0.0.1:0", New().Handler())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown(ctx)
	if _, err := Serve(ctx, a.Addr().String(), New().Handler()); err == nil {
		t.Fatal("a second server on the same address")
	}
}
