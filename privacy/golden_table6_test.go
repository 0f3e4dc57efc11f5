package privacy

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// table6Row is one row of golden/metric_dp_table6.tsv: CE-FedGNN Table 6.
type table6Row struct {
	percentile, rho, sigma float64
	releases               int
	delta                  float64
	reported, rdp, exact   float64
}

const (
	sharedTable6 = "../../shared/golden/metric_dp_table6.tsv"
	localTable6  = "testdata/metric_dp_table6.tsv"
)

func readTable6(t *testing.T, path string) []table6Row {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []table6Row
	sc := bufio.NewScanner(bytes.NewReader(b))
	header := true
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if header {
			header = false
			if !strings.HasPrefix(line, "percentile\trho\tsigma0\treleases\tdelta\treported_eps\trdp_eps\texact_eps") {
				t.Fatalf("%s: unexpected header %q", path, line)
			}
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 8 {
			t.Fatalf("%s: %d fields in %q", path, len(f), line)
		}
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return v
		}
		rows = append(rows, table6Row{
			percentile: num(f[0]), rho: num(f[1]), sigma: num(f[2]), releases: int(num(f[3])),
			delta: num(f[4]), reported: num(f[5]), rdp: num(f[6]), exact: num(f[7]),
		})
	}
	if len(rows) != 35 {
		t.Fatalf("%s: %d rows, want 35", path, len(rows))
	}
	return rows
}

// checkTable6 replays each row as `releases` embedding releases of one node
// through the accountant (not just the closed form), then compares.
func checkTable6(t *testing.T, rows []table6Row) {
	var worstRep, worstRDP, worstExact float64
	for _, r := range rows {
		for _, kind := range []AccountantKind{RDP, Exact} {
			a, err := NewAccountant(kind, r.delta, Budget{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range r.releases {
				e := Entry{Seq: uint64(i + 1), Job: "table6", Client: "hi-small", Channel: ChannelEmb,
					Round: uint64(i), NodeIDs: []int64{7}, Count: 1, Dim: 64, Sigma: r.sigma, Clip: 1}
				if err := a.Charge(e); err != nil {
					t.Fatal(err)
				}
			}
			got := a.Epsilon(a.Node(NodeKey{"table6", "hi-small", 7}), r.rho)
			if kind == RDP {
				dRep, dRDP := math.Abs(got-r.reported), math.Abs(got-r.rdp)
				worstRep, worstRDP = math.Max(worstRep, dRep), math.Max(worstRDP, dRDP)
				if dRep > 5e-4 || dRDP > 1e-6 {
					t.Errorf("q=%v σ=%v: rdp ε=%.9f, reported %.3f (diff %.2e), rdp_eps %.6f (diff %.2e)",
						r.percentile, r.sigma, got, r.reported, dRep, r.rdp, dRDP)
				}
			} else {
				d := math.Abs(got - r.exact)
				worstExact = math.Max(worstExact, d)
				if d > 1e-6 {
					t.Errorf("q=%v σ=%v: exact ε=%.9f, want %.6f (diff %.2e)", r.percentile, r.sigma, got, r.exact, d)
				}
			}
		}
	}
	t.Logf("max |diff|: rdp vs reported %.2e, rdp vs rdp_eps %.2e, exact vs exact_eps %.2e", worstRep, worstRDP, worstExact)
}

func TestTable6Golden(t *testing.T) {
	if _, err := os.Stat(sharedTable6); err != nil {
		t.Skipf("shared golden %s absent (%v); TestTable6GoldenLocal covers the copy in testdata", sharedTable6, err)
	}
	checkTable6(t, readTable6(t, sharedTable6))
	shared, _ := os.ReadFile(sharedTable6)
	local, _ := os.ReadFile(localTable6)
	if !bytes.Equal(shared, local) {
		t.Errorf("%s differs from %s: refresh the copy", localTable6, sharedTable6)
	}
}

func TestTable6GoldenLocal(t *testing.T) {
	checkTable6(t, readTable6(t, localTable6))
}
