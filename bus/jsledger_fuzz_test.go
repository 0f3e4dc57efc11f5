package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"graphfed/privacy"
)

// FuzzDecodeLedgerMsg: a message on a ledger subject is judged by the
// reader as the file ledger's reader judges the same line, plus the
// filing rule: it never panics, and it is accepted if and only if the
// file ledger reads the line as one entry of this job and of the client
// the subject names, decoded to the same entry.
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
	l := &JetStreamLedger{job: job}
	// One file, rewritten for every input: a worker runs inputs one at a
	// time, and a directory per input would cost more than the decoding.
	path := filepath.Join(f.TempDir(), "l.jsonl")
	f.Fuzz(func(t *testing.T, client string, data []byte) {
		subject := "gf." + job + ".ledger." + client
		r := privacy.Record{Pos: 1, Where: "subject " + subject, Data: data}
		r.Job, r.Client = l.filing(subject)
		rd := privacy.Verify([]privacy.Record{r}, privacy.VerifyOptions{})
		ok := len(rd.Entries) == 1
		if ok != (len(rd.Rejected) == 0) {
			t.Fatalf("one record: %d accepted, %d rejected", len(rd.Entries), len(rd.Rejected))
		}
		if ok {
			e := rd.Entries[0]
			if e.Job != job || e.Client != client || subject != LedgerSubject(job, e.Client) {
				t.Fatalf("accepted job %q client %q on %q", e.Job, e.Client, subject)
			}
		}
		if bytes.IndexByte(data, '\n') >= 0 {
			return // the file ledger would see several lines
		}
		// Differential check against the file ledger's reader.
		if err := os.WriteFile(path, append(append([]byte(nil), data...), '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
		fl, err := privacy.OpenFileLedgerReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		fileEntries, err := fl.Entries(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		fileOK := len(fileEntries) == 1 && fileEntries[0].Job == job && fileEntries[0].Client == client
		if ok != fileOK {
			t.Fatalf("JetStream reader accepted=%v (%v), file ledger accepted=%v", ok, rd.Rejected, fileOK)
		}
		if ok {
			a, _ := json.Marshal(rd.Entries[0])
			b, _ := json.Marshal(fileEntries[0])
			if !bytes.Equal(a, b) {
				t.Fatalf("decoders disagree:\n%s\n%s", a, b)
			}
		}
	})
}
