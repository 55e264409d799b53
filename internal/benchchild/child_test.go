package benchchild

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// utime 250 and stime 50 ticks, after a command name with a space and
	// a parenthesis in it.
	line := "4242 (my (bench) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 3 0 100 1000 10"
	got, err := parseStatCPU(line)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * time.Second; got != want {
		t.Errorf("parseStatCPU = %v, want %v", got, want)
	}
	if _, err := parseStatCPU("4242 (x) S 1 2"); err == nil {
		t.Error("a short line parsed without an error")
	}
}

// TestChildLines runs a real child (the shell) that answers lines on
// stdout, skips what does not match and ends when stdin closes.
func TestChildLines(t *testing.T) {
	sh := "/bin/sh"
	if _, err := os.Stat(sh); err != nil {
		t.Fatalf("no %s: %v", sh, err)
	}
	c, err := Start(context.Background(), sh, []string{"-c", `echo noise; echo ready 127.0.0.1:1 x; read line; echo "got $line"; cat >/dev/null`})
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.ReadLine("ready")
	if err != nil || len(f) != 3 || f[1] != "127.0.0.1:1" {
		t.Fatalf("ReadLine(ready) = %q, %v", f, err)
	}
	if _, err := c.Stdin().Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	if f, err := c.ReadLine("got"); err != nil || len(f) != 2 || f[1] != "ping" {
		t.Fatalf("ReadLine(got) = %q, %v", f, err)
	}
	if cpu, err := c.CPU(); err != nil || cpu < 0 {
		t.Errorf("CPU() = %v, %v", cpu, err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if _, err := c.ReadLine("never"); err == nil {
		t.Error("ReadLine after the child ended returned no error")
	}
}
