package dirwatch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWatchSeesAFileWrittenAfterItReturns: the watch is registered on
// return, so the first write after it is an event.
func TestWatchSeesAFileWrittenAfterItReturns(t *testing.T) {
	dir := t.TempDir()
	d, err := Watch(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-d.Events():
		if filepath.Base(ev.Name) != "a.yaml" {
			t.Fatalf("event for %s", ev.Name)
		}
	case err := <-d.Errors():
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("no event for a file written after Watch returned")
	}
	if _, err := Watch(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing directory was watched")
	}
}
