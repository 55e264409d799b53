//go:build conformance

package gatewayconformance

import (
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/integration/tlstest"
)

// startKubeletLogs serves the one kubelet endpoint the suite reaches
// through the API server, a container's log
// (/containerLogs/NAMESPACE/POD/CONTAINER?sinceTime=...), from the echo
// processes' output, over TLS on 127.0.0.1 (the API server does not check
// a kubelet's certificate unless told its CA). The suite reads the mirror
// backends' logs this way. It returns the port.
func startKubeletLogs(t *testing.T, pods *PodProcesses) int32 {
	t.Helper()
	chain, key := tlstest.SelfSigned(t, "conformance-node", "127.0.0.1")
	cert, err := tls.X509KeyPair(chain, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{ns}/{pod}/{container}", func(w http.ResponseWriter, r *http.Request) {
		var since time.Time
		if s := r.URL.Query().Get("sinceTime"); s != "" {
			if since, err = time.Parse(time.RFC3339, s); err != nil {
				http.Error(w, "sinceTime: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		logs, ok := pods.Logs(r.PathValue("ns"), r.PathValue("pod"), r.PathValue("container"), since)
		if !ok {
			http.Error(w, "no such container running: "+strings.TrimPrefix(r.URL.Path, "/containerLogs/"), http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(logs)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return int32(ln.Addr().(*net.TCPAddr).Port)
}
