package envoybench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tlbproject/tlb/internal/benchchild"
)

func TestZZEnvoyCPUPerRouteUpdate(t *testing.T) {
	n := 3000
	if v := os.Getenv("ZZ_ROUTES"); v != "" {
		fmt.Sscan(v, &n)
	}
	o := Options{Dir: t.TempDir(), Net: netip.MustParseAddr("127.0.27.64"), Port: 27300}
	b, err := startBackend("127.0.27.64:27301")
	if err != nil {
		t.Fatal(err)
	}
	defer b.stop()
	root := filepath.Join(o.Dir, "p")
	cfg, _ := newConfigDir(root)
	vip := o.addr(propagationVIP)
	_ = cfg.put("gateway.yaml", gatewayYAML(listenerDef{"web", vip, o.Port + 80}))
	for i := range n {
		_ = cfg.put(fmt.Sprintf("r%05d.yaml", i), propagationService(fmt.Sprintf("r%05d", i), "127.0.27.64:27301").yaml())
	}
	ctx := context.Background()
	g, err := startGateway(ctx, root, o.addr(propagationHost), []string{"--config=" + cfg.path, "--debounce=0s"}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Stop()
	addr := fmt.Sprintf("%s:%d", vip, o.Port+80)
	if err := waitStatus(ctx, addr, getHost(fmt.Sprintf("r%05d.bench", n-1)), 200, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	pid := g.EnvoyCmd.Process.Pid
	c0, _ := benchchild.ProcessCPU(pid)
	l0, _ := benchchild.ProcessCPU(g.L7Cmd.Process.Pid)
	k := 20
	profDone := make(chan struct{})
	go func() {
		defer close(profDone)
		if a := os.Getenv("L7_PPROF"); a != "" {
			resp, err := http.Get("http://" + a + "/debug/pprof/profile?seconds=8")
			if err == nil {
				f, _ := os.Create("/tmp/perfl7/zz.cpu.pprof")
				_, _ = io.Copy(f, resp.Body)
				f.Close()
				resp.Body.Close()
			}
		}
	}()
	for i := range k {
		acked, _ := readAckDelays(ctx, g.Metrics, rdsType)
		_ = cfg.put(fmt.Sprintf("new%03d.yaml", i), propagationService(fmt.Sprintf("new%03d", i), "127.0.27.64:27301").yaml())
		if _, err := nextAck(ctx, g.Metrics, rdsType, acked); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	<-profDone
	c1, _ := benchchild.ProcessCPU(pid)
	l1, _ := benchchild.ProcessCPU(g.L7Cmd.Process.Pid)
	// idle baseline
	time.Sleep(time.Duration(k) * 300 * time.Millisecond)
	c2, _ := benchchild.ProcessCPU(pid)
	t.Logf("routes %d: envoy CPU per new route %v (idle over the same time %v), l7 CPU per new route %v", n, (c1-c0)/time.Duration(k), (c2-c1)/time.Duration(k), (l1-l0)/time.Duration(k))
}
