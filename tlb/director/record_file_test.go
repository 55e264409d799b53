package director

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/ipvs"
	"github.com/prometheus/client_golang/prometheus"
)

// TestStartsAfterUnreadableRecord: an empty, truncated or corrupt record
// is moved aside, counted, and the director starts with an empty record
// that adopts only the services in its model.
func TestStartsAfterUnreadableRecord(t *testing.T) {
	tests := map[string]string{
		"empty":     "",
		"truncated": `{"version":1,"services":["203.0.113.10:80/t`,
		"not json":  "\x00\x00\x00garbage",
		"bad key":   `{"version":1,"services":["nonsense"]}`,
	}
	clock := func() time.Time { return time.Date(2026, 12, 1, 2, 3, 4, 0, time.FixedZone("CET", 3600)) }
	tests["over the size cap"] = `{"version":1,"services":[]}` + strings.Repeat(" ", MaxRecordSize)
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, RecordFile)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			f := &fakeIPVS{}
			foreignService(t, f)
			reg := prometheus.NewRegistry()
			m, err := NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			d, err := New(f, nil, nil, Options{RuntimeDir: dir, Metrics: m, Now: clock})
			if err != nil {
				t.Fatalf("New with %s record: %v; want a start with an empty record", name, err)
			}
			if got := d.Owned(); len(got) != 0 {
				t.Errorf("owned = %v; want none", got)
			}
			aside := path + ".corrupt-20261201T010304.000000000Z"
			if data, err := os.ReadFile(aside); err != nil || string(data) != content {
				t.Errorf("moved-aside record: %d bytes, %v; want the old content (%d bytes)", len(data), err, len(content))
			}
			if n, _ := gather(reg, "tlb_director_record_corrupt_total"); n != 1 {
				t.Errorf("tlb_director_record_corrupt_total = %v; want 1", n)
			}
			// One service of the model is already in the kernel: adopted.
			// The foreign one stays untouched.
			pre := &ipvs.Service{Address: net.ParseIP("203.0.113.10").To4(), Protocol: 6, Port: 80, SchedName: "rr", AddressFamily: 2}
			if err := f.NewService(pre); err != nil {
				t.Fatal(err)
			}
			f.calls = nil
			res, err := d.Reconcile(context.Background(), desired(service("203.0.113.10", 80, mrs("198.18.2.2", 1))))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Plan.Adopt) != 1 || res.Plan.Foreign != 1 || len(res.Plan.DeleteServices) != 0 {
				t.Errorf("plan = %+v; want one adopted, one foreign, nothing deleted", res.Plan)
			}
			if got := writesTo(f.calls, "203.0.113.99:443"); len(got) != 0 {
				t.Errorf("writes to the foreign service: %v", got)
			}
			data, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(data), `"203.0.113.10:80/tcp"`) {
				t.Errorf("new record = %q, %v; want the adopted service", data, err)
			}
		})
	}
}

func TestOpenRecordRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := []string{filepath.Join(dir, RecordFile+".tmp123"), filepath.Join(dir, RecordFile+".tmp456")}
	for _, p := range stale {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(dir, "unrelated.tmp1")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	newDirector(t, &fakeIPVS{}, Options{RuntimeDir: dir})
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("stale %s still there (err %v)", p, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("unrelated file removed: %v", err)
	}
}

func TestOpenRecordEnforcesDirMode(t *testing.T) {
	tests := map[string]func(t *testing.T) string{
		"existing 0755": func(t *testing.T) string {
			dir := filepath.Join(t.TempDir(), "run")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
				t.Fatal(err)
			}
			return dir
		},
		"missing": func(t *testing.T) string { return filepath.Join(t.TempDir(), "a", "run") },
	}
	for name, mk := range tests {
		t.Run(name, func(t *testing.T) {
			dir := mk(t)
			d := newDirector(t, &fakeIPVS{}, Options{RuntimeDir: dir})
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("mode of %s = %o; want 700", dir, fi.Mode().Perm())
			}
			if _, err := d.Reconcile(context.Background(), desired(service("203.0.113.10", 80))); err != nil {
				t.Fatal(err)
			}
			fi, err = os.Stat(filepath.Join(dir, RecordFile))
			if err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("record file = %v, %v; want mode 600", fi, err)
			}
		})
	}
}

// TestSaveLeavesNoTemps: a write leaves only the record in the directory.
func TestSaveLeavesNoTemps(t *testing.T) {
	dir := t.TempDir()
	d := newDirector(t, &fakeIPVS{}, Options{RuntimeDir: dir})
	if _, err := d.Reconcile(context.Background(), desired(service("203.0.113.10", 80))); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != RecordFile {
		t.Errorf("directory holds %v; want only %s", ents, RecordFile)
	}
}

// TestLoadRecordLeavesCorruptFile: tlb status reads without repairing.
func TestLoadRecordLeavesCorruptFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, RecordFile)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRecord(dir); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v; want an error naming %s", err, path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("LoadRecord moved the record: %v", err)
	}
}

// TestOpenRecordRefusesSharedDir: a runtimeDir such as /tmp is refused,
// never chmodded.
func TestOpenRecordRefusesSharedDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	_, err := New(&fakeIPVS{}, nil, nil, Options{RuntimeDir: dir})
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "sticky") {
		t.Errorf("New err = %v; want an error naming %s as shared", err, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("shared directory mode = %v, %v; want 777 left alone", fi.Mode(), err)
	}
}
