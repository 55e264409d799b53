package sessionstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tlbproject/tlb/l7/authz/redisproc"
)

// TestClientAuthenticates: against a real Redis with requirepass, the
// store's client with the password from the Secret's file saves and
// loads; without it or with another, Redis refuses, and the error never
// holds the password.
func TestClientAuthenticates(t *testing.T) {
	rp := redisproc.StartForTest(t)
	const password = "s3cret-Pass_word"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin := redis.NewClient(&redis.Options{Addr: rp.Addr})
	if err := admin.ConfigSet(ctx, "requirepass", password).Err(); err != nil {
		t.Fatal(err)
	}
	_ = admin.Close()

	file := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(file, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPassword(file)
	if err != nil || got != password {
		t.Fatalf("ReadPassword = %q, %v", got, err)
	}
	rc := NewClient(rp.Addr, "", got)
	t.Cleanup(func() { _ = rc.Close() })
	store := NewRedis(rc, "")
	if err := store.Save(ctx, "abc", map[string]string{"user": "ada"}, time.Minute); err != nil {
		t.Fatalf("Save with the password: %v", err)
	}
	if fields, ok, err := store.Load(ctx, "abc"); err != nil || !ok || fields["user"] != "ada" {
		t.Fatalf("Load with the password = %v, %v, %v", fields, ok, err)
	}

	for name, pw := range map[string]string{"no password": "", "wrong password": "not-" + password} {
		c := NewClient(rp.Addr, "", pw)
		_, _, err := NewRedis(c, "").Load(ctx, "abc")
		_ = c.Close()
		if err == nil {
			t.Errorf("%s: Load succeeded", name)
		} else if strings.Contains(err.Error(), password) {
			t.Errorf("%s: the error holds the password: %v", name, err)
		}
	}
}

func TestReadPasswordErrors(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"empty": "\n", "two lines": "a\nb\n"} {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadPassword(f); err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), "a\nb") {
			t.Errorf("%s: the error holds the content: %v", name, err)
		}
	}
	if p, err := ReadPassword(""); p != "" || err != nil {
		t.Errorf("no file = %q, %v", p, err)
	}
	if _, err := ReadPassword(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file is no error")
	}
}
