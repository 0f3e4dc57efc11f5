package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/spf13/cobra"
)

// executeForReport runs root in this process with stdout captured and
// returns the JSON report from the last stdout line, or the command's error.
func executeForReport(t *testing.T, root *cobra.Command) (Report, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	runErr := root.Execute()
	w.Close()
	os.Stdout = stdout
	out := <-done
	var rep Report
	if runErr != nil {
		return rep, runErr
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &rep); err != nil {
		t.Fatalf("last stdout line is not a JSON report: %q: %v", out, err)
	}
	return rep, nil
}
