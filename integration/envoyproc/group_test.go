package envoyproc

import (
	"slices"
	"testing"
)

// TestManifestForGroup: the manifest for another group is the shipped one
// with the bootstrap's group changed, so Envoy declares that group.
func TestManifestForGroup(t *testing.T) {
	p, err := ManifestForGroup(t.TempDir(), "default")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSpec(p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(s.Bootstrap, "--group=default") || slices.Contains(s.Bootstrap, "--group=edge") {
		t.Errorf("bootstrap command %q, want --group=default only", s.Bootstrap)
	}
	if s.Envoy[0] != "/usr/local/bin/envoy" || len(s.PreStop) == 0 {
		t.Errorf("the rest of the manifest changed: envoy %q, preStop %q", s.Envoy, s.PreStop)
	}
}
