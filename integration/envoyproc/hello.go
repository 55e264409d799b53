package envoyproc

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// HelloDSL writes, into a new directory of the test, the smallest site a
// gateway of group edge serves: gateway public with an HTTP listener web
// on vip at a free port, and service hello (host hello.example.com) on
// it, every path to backend (host:port). It returns the directory (for
// l7 serve --config) and the port.
func HelloDSL(t testing.TB, vip, backend string) (dir string, port int) {
	t.Helper()
	l, err := net.Listen("tcp", vip+":0")
	if err != nil {
		t.Fatal(err)
	}
	port = l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dir = t.TempDir()
	files := map[string]string{
		"gw.yaml": fmt.Sprintf("kind: gateway/gateway/v1\nname: public\ngroup: edge\nlisteners:\n  - {name: web, vip: %s, port: %d, protocol: HTTP}\n", vip, port),
		"svc.yaml": fmt.Sprintf("kind: gateway/service/v1\nname: hello\ngroup: edge\nhosts: [hello.example.com]\nlisteners: [public/web]\n"+
			"upstreams:\n  - {name: main, endpoints: [%q]}\nroutes:\n  - {prefix: /, target: main}\n", backend),
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, port
}
