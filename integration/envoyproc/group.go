package envoyproc

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// manifestGroup finds the gateway group a line of the manifest names:
// "--group=$(GATEWAY_GROUP)" in the bootstrap's and l7's commands.
var manifestGroup = regexp.MustCompile(`(?m)^(\s*- --group=)\S+$`)

// ManifestForGroup writes, into dir, deploy/envoy/gateway.yaml as an
// operator deploys it for another gateway group: every --group argument
// (the bootstrap's, so Envoy's node declares the group, and l7's) names
// group. Its path goes in Options.Manifest. The shipped manifest takes
// its group from the variable GATEWAY_GROUP (deploy/site), which Start
// sets to Options.Group; this writes it out as one literal word.
func ManifestForGroup(dir, group string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "envoy", "gateway.yaml"))
	if err != nil {
		return "", err
	}
	if n := len(manifestGroup.FindAll(b, -1)); n != 2 {
		return "", fmt.Errorf("envoyproc: deploy/envoy/gateway.yaml names a group %d times, want 2 (bootstrap and serve)", n)
	}
	out := manifestGroup.ReplaceAll(b, []byte("${1}"+group))
	p := filepath.Join(dir, "gateway-"+group+".yaml")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		return "", err
	}
	return p, nil
}
