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

// Damage anywhere but the final unterminated line is kept in the file and
// skipped by readers, which count it: the ledger opens, reads and appends
// as before, and nothing is silently lost.
func TestFileLedgerSkipsDamage(t *testing.T) {
	valid := func(seq uint64) string {
		var b bytes.Buffer
		path := filepath.Join(t.TempDir(), "v.jsonl")
		l := openTestLedger(t, path)
		appendModel(t, l, seq)
		b.Write(must(os.ReadFile(path)))
		return b.String()
	}
	for name, tc := range map[string]struct {
		content                   string
		entries, rejected, breaks int
	}{
		"garbage mid-file":   {valid(1) + "not json\n" + valid(2), 2, 1, 1},
		"bad final line":     {valid(1) + "{\"seq\":2}\n", 1, 1, 0},
		"blank line":         {valid(1) + "\n" + valid(2), 2, 1, 1},
		"out of order":       {valid(2) + valid(1), 1, 1, 1},
		"duplicate":          {valid(1) + valid(1), 1, 1, 0},
		"unknown field":      {strings.Replace(valid(1), `"seq":1`, `"seq":1,"extra":true`, 1), 0, 1, 0},
		"trailing data":      {strings.Replace(valid(1), "}\n", "} []\n", 1), 0, 1, 0},
		"invalid entry":      {strings.Replace(valid(1), `"sigma":1`, `"sigma":-1`, 1), 0, 1, 0},
		"two objects a line": {strings.TrimSuffix(valid(1), "\n") + valid(2), 0, 1, 0},
	} {
		path := filepath.Join(t.TempDir(), "l.jsonl")
		os.WriteFile(path, []byte(tc.content), 0o600)
		ro, err := OpenFileLedgerReadOnly(path)
		if err != nil {
			t.Fatalf("%s: read: %v", name, err)
		}
		l, err := OpenFileLedger(path)
		if err != nil {
			t.Fatalf("%s: open: %v", name, err)
		}
		for _, src := range []Ledger{ro, l} {
			rd, err := ReadLedger(context.Background(), src, VerifyOptions{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(rd.Entries) != tc.entries || len(rd.Rejected) != tc.rejected || len(rd.Breaks) != tc.breaks {
				t.Errorf("%s: %d entries, rejects %v, breaks %v; want %d, %d, %d",
					name, len(rd.Entries), rd.Rejected, rd.Breaks, tc.entries, tc.rejected, tc.breaks)
			}
			for _, r := range rd.Rejected {
				if r.Pos == 0 || r.Where != fmt.Sprintf("line %d", r.Pos) {
					t.Errorf("%s: rejection without its line: %+v", name, r)
				}
			}
		}
		// The writer continues after the highest accepted seq.
		if err := l.Append(context.Background(), modelEntry(9, ChannelModel, 1, 1)); err != nil {
			t.Errorf("%s: append after damage: %v", name, err)
		}
		l.Close()
		if got, _ := os.ReadFile(path); !strings.HasPrefix(string(got), tc.content) {
			t.Errorf("%s: the damaged lines were modified", name)
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
		if err != nil || len(es) != int(want) || es[want-1].Seq != want || es[want-1].NodeIDs[0] != KeyedNodeID(InsecureNodeKey("job-1", "bank-3"), 42) {
			t.Fatalf("after kill %d: %+v %v", want, es, err)
		}
		l.Close()
	}
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
