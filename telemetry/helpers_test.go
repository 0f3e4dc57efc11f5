package telemetry

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// value is the value of the sample of name whose labels include labels
// (a counter's, a gauge's, or a histogram's count); ok is false when no
// sample matches.
func value(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue(), true
			case m.Gauge != nil:
				return m.GetGauge().GetValue(), true
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount()), true
			}
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := map[string]string{}
	for _, lp := range m.GetLabel() {
		got[lp.GetName()] = lp.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// expect checks a table of samples.
func expect(t *testing.T, reg *prometheus.Registry, want []sample) {
	t.Helper()
	for _, s := range want {
		got, ok := value(t, reg, s.name, s.labels)
		if !ok {
			t.Errorf("%s%v: no sample", s.name, s.labels)
			continue
		}
		if got != s.value {
			t.Errorf("%s%v = %v, want %v", s.name, s.labels, got, s.value)
		}
	}
}

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

func labels(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}
