package privacy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func openTestLedger(t *testing.T, path string) *FileLedger {
	t.Helper()
	l, err := OpenFileLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func appendModel(t *testing.T, l Ledger, seqs ...uint64) {
	t.Helper()
	for _, s := range seqs {
		if err := l.Append(context.Background(), modelEntry(s, ChannelModel, 1, 1)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFileLedgerReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l := openTestLedger(t, path)
	appendModel(t, l, 1, 2, 3)
	if _, torn := l.TornTail(); torn {
		t.Error("fresh ledger reports a torn tail")
	}
	l.Close()
	if err := l.Append(context.Background(), modelEntry(4, ChannelModel, 1, 1)); !errors.Is(err, ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
	if _, err := l.Entries(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("entries after close: %v", err)
	}
	l2 := openTestLedger(t, path)
	appendModel(t, l2, 4)
	if err := l2.Append(context.Background(), modelEntry(2, ChannelModel, 1, 1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("reopened ledger accepted a stale seq: %v", err)
	}
	es, err := l2.Entries(context.Background())
	if err != nil || len(es) != 4 || es[3].Seq != 4 {
		t.Fatalf("%d entries, %v", len(es), err)
	}
	ro, err := OpenFileLedgerReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if es2, err := ro.Entries(context.Background()); err != nil || len(es2) != 4 {
		t.Errorf("read-only: %d entries, %v", len(es2), err)
	}
	if err := ro.Append(context.Background(), modelEntry(5, ChannelModel, 1, 1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("read-only append: %v", err)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("ledger mode %v, want 0600", info.Mode().Perm())
	}
}

// A crash mid-append leaves a final line without its newline: it is
// reported, truncated, and appends continue after it.
func TestFileLedgerTornTail(t *testing.T) {
	for name, tail := range map[string]string{
		"half json":     `{"seq":3,"job":"job-1","cli`,
		"complete json": `{"seq":3,"job":"job-1","client":"bank-3","channel":"model","round":3,"count":1,"dim":10,"sigma":1,"clip":1,"rho":2,"time":"1970-01-01T00:00:00Z","seeded":false}`,
		"zeros":         "\x00\x00\x00\x00",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "l.jsonl")
			l := openTestLedger(t, path)
			appendModel(t, l, 1, 2)
			l.Close()
			good, _ := os.ReadFile(path)
			f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(tail)
			f.Close()

			ro, err := OpenFileLedgerReadOnly(path)
			if err != nil {
				t.Fatal(err)
			}
			if rt, torn := ro.TornTail(); !torn || rt.Offset != int64(len(good)) || rt.Bytes != len(tail) {
				t.Errorf("read-only torn tail %+v %v", rt, torn)
			}
			if es, _ := ro.Entries(context.Background()); len(es) != 2 {
				t.Errorf("read-only: %d entries", len(es))
			}
			if b, _ := os.ReadFile(path); len(b) != len(good)+len(tail) {
				t.Error("read-only open modified the file")
			}

			l2 := openTestLedger(t, path)
			tt, torn := l2.TornTail()
			if !torn || tt.Offset != int64(len(good)) || tt.Bytes != len(tail) || !strings.HasPrefix(tail, tt.Head) {
				t.Fatalf("torn tail %+v %v (good prefix %d bytes)", tt, torn, len(good))
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, good) {
				t.Fatal("torn tail not truncated")
			}
			appendModel(t, l2, 3)
			es, err := l2.Entries(context.Background())
			if err != nil || len(es) != 3 {
				t.Fatalf("%d entries, %v", len(es), err)
			}
		})
	}
}

// Damage anywhere but the final unterminated line is corruption: the
// ledger refuses to open rather than drop entries.
func TestFileLedgerCorrupt(t *testing.T) {
	valid := func(seq uint64) string {
		var b bytes.Buffer
		path := filepath.Join(t.TempDir(), "v.jsonl")
		l := openTestLedger(t, path)
		appendModel(t, l, seq)
		b.Write(must(os.ReadFile(path)))
		return b.String()
	}
	for name, content := range map[string]string{
		"garbage mid-file":   valid(1) + "not json\n" + valid(2),
		"bad final line":     valid(1) + "{\"seq\":2}\n",
		"blank line":         valid(1) + "\n" + valid(2),
		"out of order":       valid(2) + valid(1),
		"duplicate":          valid(1) + valid(1),
		"unknown field":      strings.Replace(valid(1), `"seq":1`, `"seq":1,"extra":true`, 1),
		"trailing data":      strings.Replace(valid(1), "}\n", "} []\n", 1),
		"invalid entry":      strings.Replace(valid(1), `"sigma":1`, `"sigma":-1`, 1),
		"two objects a line": strings.TrimSuffix(valid(1), "\n") + valid(2),
	} {
		path := filepath.Join(t.TempDir(), "l.jsonl")
		os.WriteFile(path, []byte(content), 0o600)
		if _, err := OpenFileLedger(path); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: open: %v, want ErrCorrupt", name, err)
		}
		if _, err := OpenFileLedgerReadOnly(path); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: read: %v, want ErrCorrupt", name, err)
		}
		if got, _ := os.ReadFile(path); string(got) != content {
			t.Errorf("%s: a corrupt ledger was modified", name)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

const crashEnv = "GRAPHFED_PRIVACY_CRASH_LEDGER"

// TestCrashChild is the child half of TestCrashDurability: it releases
// through a gate backed by a FileLedger, says so, and waits to be killed.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("child process of TestCrashDurability only")
	}
	l, err := OpenFileLedger(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	g, err := NewGate(context.Background(), Config{Job: "job-1", Client: "bank-3", Delta: 1e-5}, l, nil)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	r, err := g.Release(context.Background(), Request{Channel: ChannelEmb, Rows: [][]float32{{1, 2}}, NodeIDs: []int64{42}, Sigma: 1})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Printf("released %d\n", r.Entry().Seq)
	time.Sleep(time.Minute) // the parent kills us long before
	os.Exit(3)
}

// TestCrashDurability: a child process releases and is killed with SIGKILL
// right after; the parent reopens the ledger and finds the entry. Twice, so
// the second child also resumes the sequence from the ledger.
func TestCrashDurability(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	path := filepath.Join(t.TempDir(), "crash.jsonl")
	for want := uint64(1); want <= 2; want++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || line != fmt.Sprintf("released %d\n", want) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child said %q (%v)", line, err)
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child did not die of SIGKILL: %v", err)
		}
		l := openTestLedger(t, path)
		es, err := l.Entries(context.Background())
		if err != nil || len(es) != int(want) || es[want-1].Seq != want || es[want-1].NodeIDs[0] != 42 {
			t.Fatalf("after kill %d: %+v %v", want, es, err)
		}
		l.Close()
	}
}

// FuzzDecodeLedger: the ledger decoder never panics, its good prefix ends
// at a newline, and what it accepts re-encodes to input it decodes the same.
func FuzzDecodeLedger(f *testing.F) {
	golden, err := os.ReadFile("testdata/ledger_golden.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add(golden[:len(golden)-7])
	f.Add([]byte("{}\n"))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"seq":1,"job":"j","client":"c","channel":"emb","count":1,"dim":1,"sigma":1,"clip":1,"node_ids":[1,1]}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, good, err := decodeLedger(b)
		if err != nil {
			return
		}
		if good > len(b) || (good > 0 && b[good-1] != '\n') || bytes.IndexByte(b[good:], '\n') >= 0 {
			t.Fatalf("good prefix %d of %d bytes", good, len(b))
		}
		var re bytes.Buffer
		path := filepath.Join(t.TempDir(), "f.jsonl")
		l, err := OpenFileLedger(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for _, e := range entries {
			if err := l.Append(context.Background(), e); err != nil {
				t.Fatalf("decoded entry does not append: %v", err)
			}
		}
		re.Write(must(os.ReadFile(path)))
		again, good2, err := decodeLedger(re.Bytes())
		if err != nil || good2 != re.Len() || len(again) != len(entries) {
			t.Fatalf("re-encoded ledger: %d entries, %v", len(again), err)
		}
	})
}

// BenchmarkFileLedgerAppend: one durable (fsynced) append of a model entry.
func BenchmarkFileLedgerAppend(b *testing.B) {
	l, err := OpenFileLedger(filepath.Join(b.TempDir(), "l.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	seq := uint64(0)
	for b.Loop() {
		seq++
		if err := l.Append(context.Background(), modelEntry(seq, ChannelModel, 1, 1)); err != nil {
			b.Fatal(err)
		}
	}
}
