package envoybench

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// listenerDef is one HTTP listener of the bench gateway "bench".
type listenerDef struct {
	name string
	vip  netip.Addr
	port int
}

func gatewayYAML(ls ...listenerDef) string {
	var b strings.Builder
	b.WriteString("kind: gateway/gateway/v1\nname: bench\ngroup: edge\nlisteners:\n")
	for _, l := range ls {
		fmt.Fprintf(&b, "  - {name: %s, vip: %s, port: %d, protocol: HTTP}\n", l.name, l.vip, l.port)
	}
	return b.String()
}

// serviceDef is a service of one host and one route to one upstream.
type serviceDef struct {
	name, host, listener string
	endpoints            []string
	// extra is YAML added at the service's top level (jwt, accessLog).
	extra string
	// route is YAML added to the route (interceptors).
	route string
}

func (s serviceDef) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kind: gateway/service/v1\nname: %s\ngroup: edge\nhosts: [%s]\nlisteners: [bench/%s]\n", s.name, s.host, s.listener)
	b.WriteString(s.extra)
	b.WriteString("upstreams:\n  - name: main\n    endpoints: [")
	for i, e := range s.endpoints {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", e)
	}
	b.WriteString("]\nroutes:\n  - prefix: /\n    target: main\n")
	b.WriteString(s.route)
	return b.String()
}

// configDir is a DSL directory written the way a change should reach
// l7: each file written beside the directory, then renamed into it, so
// the watch sees one event per file and never a half-written file.
type configDir struct {
	path, staging string
}

func newConfigDir(root string) (configDir, error) {
	c := configDir{path: filepath.Join(root, "dsl"), staging: filepath.Join(root, "dsl-staging")}
	for _, d := range []string{c.path, c.staging} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return c, err
		}
	}
	return c, nil
}

// put writes name with content into the directory, atomically.
func (c configDir) put(name, content string) error {
	tmp := filepath.Join(c.staging, name)
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(c.path, name))
}

func (c configDir) remove(name string) error { return os.Remove(filepath.Join(c.path, name)) }
