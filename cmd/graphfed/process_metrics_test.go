package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"graphfed/bus"
	"graphfed/deploy"
)

// metricsProc is a graphfed process serving --metrics-addr: the address
// it logged, its JSON report once written, its stderr so far.
type metricsProc struct {
	name   string
	cmd    *exec.Cmd
	addr   chan string
	report chan map[string]any
	mu     sync.Mutex
	stderr strings.Builder
}

var servingAddr = regexp.MustCompile(`serving metrics addr=(\S+)`)

// startMetricsProc starts graphfed with args plus --metrics-addr on a
// free port and a linger long enough for the test to scrape the final
// figures after the report.
func startMetricsProc(t *testing.T, name string, args ...string) *metricsProc {
	t.Helper()
	args = append(args, "--json", "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "2m")
	p := &metricsProc{name: name, cmd: graphfedCmd(t, args...), addr: make(chan string, 1), report: make(chan map[string]any, 1)}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			if m := servingAddr.FindStringSubmatch(line); m != nil {
				p.addr <- m[1]
			}
		}
	}()
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var r map[string]any
			if strings.HasPrefix(sc.Text(), "{") && json.Unmarshal(sc.Bytes(), &r) == nil {
				p.report <- r
			}
		}
	}()
	return p
}

func (p *metricsProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitReport waits for the process's JSON report, and returns it with the
// metrics scraped after it: the final figures of the same run.
func (p *metricsProc) waitReport(t *testing.T, addr string) (map[string]any, map[string]*dto.MetricFamily) {
	t.Helper()
	select {
	case r := <-p.report:
		return r, scrape(t, addr)
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s wrote no report\n%s", p.name, p.log())
	}
	return nil, nil
}

func (p *metricsProc) waitAddr(t *testing.T) string {
	t.Helper()
	select {
	case a := <-p.addr:
		return a
	case <-time.After(time.Minute):
		t.Fatalf("%s logged no metrics address\n%s", p.name, p.log())
	}
	return ""
}

// scrape reads http://addr/metrics with the Prometheus text parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", addr, err)
	}
	return fams
}

// sumOf adds up the samples of a counter or gauge family whose labels
// include want.
func sumOf(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	var s float64
	for _, m := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		ok := true
		for i := 0; i+1 < len(want); i += 2 {
			ok = ok && got[want[i]] == want[i+1]
		}
		if ok {
			s += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return s
}

// byLabel maps a counter family's samples by one label's value.
func byLabel(fams map[string]*dto.MetricFamily, name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range fams[name].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label {
				out[lp.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// sameCounts compares a report's map of counts with metric samples.
func sameCounts(t *testing.T, who string, report any, metrics map[string]float64) {
	t.Helper()
	rm, _ := report.(map[string]any)
	if len(rm) != len(metrics) {
		t.Errorf("%s: report %v, metrics %v", who, rm, metrics)
		return
	}
	for k, v := range rm {
		if v.(float64) != metrics[k] {
			t.Errorf("%s %s: report %v, metrics %v", who, k, v, metrics[k])
		}
	}
}

// An aggregator and three agents as separate processes, each serving
// --metrics-addr; garbage is published on an update subject and on the
// round subject. After each process writes its JSON report, its endpoint
// is scraped with the Prometheus text parser: rounds, accepted updates,
// rejects by reason, bytes, messages and ε agree with the report.
func TestProcessMetricsAgreeWithReports(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const job, rounds = "metrics", 4
	dirs := writeClients(t, 3)
	srv, err := bus.StartServer(bus.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	url := srv.ClientURL()

	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	opened := watchRoundOpen(t, nc, job)

	agg := startMetricsProc(t, "aggregator", "aggregator", "--insecure", "--nats", url, "--job", job, "--rounds", fmt.Sprint(rounds),
		"--min-clients", "3", "--round-timeout", "60s", "--log-level", "info")
	aggAddr := agg.waitAddr(t)
	agents := make([]*metricsProc, len(dirs))
	addrs := make([]string, len(dirs))
	for i, dir := range dirs {
		agents[i] = startMetricsProc(t, deploy.ClientID(i), "agent", "--insecure", "--nats", url, "--job", job,
			"--client", deploy.ClientID(i), "--data", dir, "--local-epochs", "2", "--log-level", "info")
		addrs[i] = agents[i].waitAddr(t)
	}
	// Live: the endpoint answers while the job runs.
	if fams := scrape(t, aggAddr); fams["graphfed_transport_bytes_total"] == nil && fams["go_goroutines"] == nil {
		t.Fatal("the aggregator's endpoint serves nothing while the job runs")
	}

	select {
	case <-opened:
	case <-time.After(time.Minute):
		t.Fatalf("round 1 never opened\n%s", agg.log())
	}
	for _, subj := range []string{bus.Subject(job, bus.KindUpdate, "client-1"), bus.Subject(job, bus.KindRound)} {
		if err := nc.Publish(subj, []byte("not an envelope")); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	// The aggregator.
	r, fams := agg.waitReport(t, aggAddr)
	m := r["metrics"].(map[string]any)
	if r["rounds"].(float64) != rounds {
		t.Fatalf("the run did not finish: %v", r)
	}
	if got := sumOf(fams, "graphfed_rounds_closed_total"); got != r["rounds"].(float64) {
		t.Errorf("rounds closed: metrics %v, report %v", got, r["rounds"])
	}
	if got := sumOf(fams, "graphfed_rounds_closed_total", "reason", "deadline"); got != m["rounds_closed_at_deadline"].(float64) {
		t.Errorf("rounds closed at the deadline: metrics %v, report %v", got, m["rounds_closed_at_deadline"])
	}
	sameCounts(t, "aggregator rejects", m["rejects"], byLabel(fams, "graphfed_messages_rejected_total", "reason"))
	if got := sumOf(fams, "graphfed_messages_rejected_total", "reason", bus.ReasonGarbage); got < 1 {
		t.Errorf("the garbage update was not counted as a reject: %v", got)
	}
	sameCounts(t, "aggregator drops", m["dropped"], byLabel(fams, "graphfed_updates_dropped_total", "reason"))
	comm := r["comm"].(map[string]any)
	if got := sumOf(fams, "graphfed_transport_bytes_total", "direction", "sent"); got != comm["bytes"].(float64) {
		t.Errorf("aggregator bytes sent: metrics %v, report %v", got, comm["bytes"])
	}
	if got := sumOf(fams, "graphfed_transport_messages_total", "direction", "sent"); got != comm["messages"].(float64) {
		t.Errorf("aggregator messages sent: metrics %v, report %v", got, comm["messages"])
	}
	if got := sumOf(fams, "graphfed_transport_bytes_total", "channel", "model", "direction", "sent"); got <= 0 {
		t.Errorf("no model bytes sent: %v", got)
	}
	conn := m["flow"].(map[string]any)["conn"].(map[string]any)
	if got := sumOf(fams, "graphfed_nats_reconnects_total"); got != conn["reconnects"].(float64) {
		t.Errorf("reconnects: metrics %v, report %v", got, conn["reconnects"])
	}
	if got := sumOf(fams, "graphfed_nats_slow_consumer_events_total"); got != conn["slow_consumer"].(float64) {
		t.Errorf("slow-consumer events: metrics %v, report %v", got, conn["slow_consumer"])
	}
	accepted := sumOf(fams, "graphfed_updates_accepted_total") + sumOf(fams, "graphfed_updates_stale_total")

	// The agents.
	var trained float64
	for i, a := range agents {
		ar, af := a.waitReport(t, addrs[i])
		am, id := ar["metrics"].(map[string]any), deploy.ClientID(i)
		trained += am["rounds_trained"].(float64)
		sameCounts(t, id+" rejects", am["rejects"], byLabel(af, "graphfed_messages_rejected_total", "reason"))
		if got := sumOf(af, "graphfed_messages_rejected_total", "reason", bus.ReasonGarbage); got < 1 {
			t.Errorf("%s: the garbage round was not counted as a reject: %v", id, got)
		}
		ac := ar["comm"].(map[string]any)
		if got := sumOf(af, "graphfed_transport_bytes_total", "party", id, "direction", "sent"); got != ac["bytes"].(float64) {
			t.Errorf("%s bytes sent: metrics %v, report %v", id, got, ac["bytes"])
		}
		if got := sumOf(af, "graphfed_transport_messages_total", "party", id, "direction", "sent"); got != ac["messages"].(float64) {
			t.Errorf("%s messages sent: metrics %v, report %v", id, got, ac["messages"])
		}
		if got := sumOf(af, "graphfed_agent_updates_sent_total", "party", id); got != am["rounds_trained"].(float64) {
			t.Errorf("%s updates sent: metrics %v, rounds trained %v", id, got, am["rounds_trained"])
		}
		if got := sumOf(af, "graphfed_ledger_appends_total", "party", id, "channel", "model", "result", "ok"); got != am["rounds_trained"].(float64) {
			t.Errorf("%s model ledger appends: metrics %v, rounds trained %v", id, got, am["rounds_trained"])
		}
		pr := ar["privacy"].(map[string]any)
		eps := sumOf(af, "graphfed_privacy_client_epsilon_spent", "client", id)
		if want := pr["epsilon_client"].(float64); eps != want || eps <= 0 {
			t.Errorf("%s ε: metrics %v, report %v", id, eps, want)
		}
		if got := sumOf(af, "graphfed_privacy_delta", "client", id); got != pr["delta"].(float64) {
			t.Errorf("%s δ: metrics %v, report %v", id, got, pr["delta"])
		}
	}
	if accepted != trained || trained != rounds*3 {
		t.Errorf("updates accepted by the aggregator %v, trained by the agents %v, want %d", accepted, trained, rounds*3)
	}

	// The linger ends at a signal: every process exits cleanly.
	for _, p := range append([]*metricsProc{agg}, agents...) {
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("%s after SIGINT in the linger: %v\n%s", p.name, err, p.log())
		}
	}
}
