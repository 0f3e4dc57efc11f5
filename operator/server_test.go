package operator

import (
	"testing"
)

func TestDefaultStoreDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/var/state")
	if d, err := DefaultStoreDir(); err != nil || d != "/var/state/graphfed/jetstream" {
		t.Fatalf("with XDG_STATE_HOME: %q, %v", d, err)
	}
	t.Setenv("XDG_STATE_HOME", "relative") // ignored, as the XDG spec says
	t.Setenv("HOME", "/home/x")
	if d, err := DefaultStoreDir(); err != nil || d != "/home/x/.local/state/graphfed/jetstream" {
		t.Fatalf("without: %q, %v", d, err)
	}
}
