package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"graphfed/privacy"
)

// FuzzDecodeLedgerMsg: the JetStream ledger's entry decoder never panics,
// accepts only valid entries filed under their own job and client, and is
// exactly as strict as the file ledger's reader: a one-line message is
// accepted here if and only if the file ledger reads the same line as one
// entry of this job and client, decoded to the same entry. What it accepts
// re-encodes (as Append stores it) to a message it accepts unchanged.
func FuzzDecodeLedgerMsg(f *testing.F) {
	const job = "job-1"
	golden, err := os.ReadFile(filepath.Join("..", "privacy", "testdata", "ledger_golden.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range bytes.Split(golden, []byte("\n")) {
		var e struct {
			Client string `json:"client"`
		}
		_ = json.Unmarshal(line, &e)
		f.Add(e.Client, line)
	}
	f.Add("bank-1", []byte(`{"seq":1,"job":"job-1","client":"bank-1","channel":"margin","round":0,"count":1,"dim":1,"sigma":1,"clip":1,"rho":2,"time":"0001-01-01T00:00:00Z","seeded":false} `))
	f.Add("bank-1", []byte(`{"seq":1,"job":"job-1","client":"bank-1","channel":"model","count":1,"dim":1,"sigma":1,"clip":1,"rho":2,"extra":1}`))
	f.Add("bank-1", []byte(`{"seq":1,"job":"job-1","client":"bank-1","channel":"model","count":1,"dim":1,"sigma":1,"clip":1,"rho":2}{}`))
	f.Add("a.b", []byte(`{"seq":1,"job":"job-1","client":"a","channel":"model","count":1,"dim":1,"sigma":1,"clip":1,"rho":2}`))
	f.Add("", []byte("null"))
	// One file, rewritten for every input: a worker runs inputs one at a
	// time, and a directory per input would cost more than the decoding.
	path := filepath.Join(f.TempDir(), "l.jsonl")
	f.Fuzz(func(t *testing.T, client string, data []byte) {
		subject := "gf." + job + ".ledger." + client
		e, err := decodeLedgerMsg(job, subject, data)
		ok := err == nil
		if ok {
			if err := e.Validate(); err != nil {
				t.Fatalf("accepted an invalid entry: %v", err)
			}
			if e.Job != job || e.Client != client || subject != LedgerSubject(job, e.Client) {
				t.Fatalf("accepted job %q client %q on %q", e.Job, e.Client, subject)
			}
			enc, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("cannot encode an accepted entry: %v", err)
			}
			back, err := decodeLedgerMsg(job, subject, enc)
			if err != nil {
				t.Fatalf("re-encoded entry %s rejected: %v", enc, err)
			}
			if enc2, _ := json.Marshal(back); !bytes.Equal(enc, enc2) {
				t.Fatalf("entry changed through re-encoding:\n%s\n%s", enc, enc2)
			}
		}
		if bytes.IndexByte(data, '\n') >= 0 {
			return // the file ledger would see several lines
		}
		// Differential check against the file ledger's reader.
		if err := os.WriteFile(path, append(append([]byte(nil), data...), '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
		r, ferr := privacy.OpenFileLedgerReadOnly(path)
		var fileEntries []privacy.Entry
		if ferr == nil {
			if fileEntries, ferr = r.Entries(context.Background()); ferr != nil {
				t.Fatal(ferr)
			}
			if len(fileEntries) != 1 {
				t.Fatalf("file ledger read %d entries from one line", len(fileEntries))
			}
		} else if !errors.Is(ferr, privacy.ErrCorrupt) {
			t.Fatalf("file ledger failed without ErrCorrupt: %v", ferr)
		}
		fileOK := ferr == nil && fileEntries[0].Job == job && fileEntries[0].Client == client
		if ok != fileOK {
			t.Fatalf("JetStream decoder accepted=%v (%v), file ledger accepted=%v (%v)", ok, err, fileOK, ferr)
		}
		if ok {
			a, _ := json.Marshal(e)
			b, _ := json.Marshal(fileEntries[0])
			if !bytes.Equal(a, b) {
				t.Fatalf("decoders disagree:\n%s\n%s", a, b)
			}
		}
	})
}
