package cli

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func parse(t *testing.T, format string, args ...string) (*Common, *Kube, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := Register(fs, "tlb", format, "schema", 7)
	k := RegisterKube(fs, KubeDefaults{QPS: 200, Burst: 400})
	return c, k, fs.Parse(args)
}

// TestLoggerFollowsTheFlags: the binary's default format, --log-format
// and --log-level decide what the logger writes.
func TestLoggerFollowsTheFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		format    string
		args      []string
		want      string
		wantDebug bool
	}{
		"text by default": {FormatText, nil, "level=INFO msg=hello", false},
		"json by default": {FormatJSON, nil, `"msg":"hello"`, false},
		"json by flag":    {FormatText, []string{"--log-format=json"}, `"msg":"hello"`, false},
		"debug":           {FormatText, []string{"--log-level=debug"}, "level=INFO msg=hello", true},
	} {
		c, _, err := parse(t, tc.format, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b bytes.Buffer
		log := c.Logger(&b)
		log.Info("hello")
		log.Debug("details")
		if !strings.Contains(b.String(), tc.want) || strings.Contains(b.String(), "details") != tc.wantDebug {
			t.Errorf("%s: logged %q; want %q, debug %v", name, b.String(), tc.want, tc.wantDebug)
		}
	}
	for _, bad := range []string{"--log-level=loud", "--log-format=xml"} {
		if _, _, err := parse(t, FormatText, bad); err == nil || !strings.Contains(err.Error(), strings.Split(bad, "=")[0]) {
			t.Errorf("%s: error %v, want one naming the flag", bad, err)
		}
	}
}

// TestVersionPrintsTheBuild: --version prints the binary's build and the
// extra words; without it nothing is printed.
func TestVersionPrintsTheBuild(t *testing.T) {
	c, _, _ := parse(t, FormatText)
	var b bytes.Buffer
	if c.Version(&b) || b.Len() != 0 {
		t.Fatalf("without --version: printed %q", b.String())
	}
	c, _, _ = parse(t, FormatText, "--version")
	if !c.Version(&b) || !strings.HasPrefix(b.String(), "tlb ") || !strings.HasSuffix(b.String(), " schema 7\n") {
		t.Fatalf("--version printed %q", b.String())
	}
}

// TestKubeFlagsMakeTheConfig: --kubeconfig names the server, the rate
// limit comes from the flags (or the binary's defaults), the user agent
// from the caller; --in-cluster outside a pod fails rather than falling
// back to the file.
func TestKubeFlagsMakeTheConfig(t *testing.T) {
	_, k, _ := parse(t, FormatText)
	if k.Enabled() || k.QPS != 200 || k.Burst != 400 {
		t.Fatalf("defaults: %+v", k)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://192.0.2.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	_, k, _ = parse(t, FormatText, "--kubeconfig", path, "--kube-api-qps=50", "--kube-api-burst=60")
	cfg, err := k.RESTConfig("tlb-test/a")
	if err != nil {
		t.Fatal(err)
	}
	if !k.Enabled() || cfg.Host != "https://192.0.2.1:6443" || cfg.QPS != 50 || cfg.Burst != 60 || cfg.UserAgent != "tlb-test/a" {
		t.Errorf("config host %s qps %g burst %d agent %q", cfg.Host, cfg.QPS, cfg.Burst, cfg.UserAgent)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, k, _ = parse(t, FormatText, "--kubeconfig", path, "--in-cluster")
	if _, err := k.RESTConfig("tlb-test"); err == nil {
		t.Error("--in-cluster outside a pod gave a config")
	}
}
