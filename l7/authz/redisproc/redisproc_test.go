package redisproc

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestStartWithoutRedisSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Start(context.Background(), t.TempDir(), time.Second)
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y redis-server") {
		t.Fatalf("Start without redis-server: %v, want the install hint", err)
	}
}
