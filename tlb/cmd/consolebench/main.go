// Command consolebench measures the console's inventory page (GET /) with
// a fleet of N VIPs from fake sources: the API server's pools, clusters,
// Services and Events and every director's GTM answer, BGP sessions and
// per-VIP traffic, served over a real loopback HTTP connection. The
// sources answer at once, so the figure is the console's own cost
// (joining, escaping, rendering). It ends with `BENCH <name> <value> <unit>`
// lines: console_page_ms_<N>_vips is the median of the rounds.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tlbproject/tlb/internal/console"
)

func main() {
	vips := flag.Int("vips", 1000, "VIPs in the fleet (one Service each)")
	directors := flag.Int("directors", 4, "directors, each serving every VIP")
	rounds := flag.Int("rounds", 20, "page loads measured (after one warm-up)")
	flag.Parse()
	if err := run(os.Stdout, *vips, *directors, *rounds); err != nil {
		_, _ = fmt.Fprintf(os.Stderr, "consolebench: %v\n", err)
		os.Exit(1)
	}
}

func run(w io.Writer, vips, directors, rounds int) error {
	if vips < 1 || vips > 65536 || directors < 1 || rounds < 1 {
		return fmt.Errorf("want 1..65536 VIPs, at least one director and one round")
	}
	api, comps := fleet(vips, directors)
	h, err := console.NewHandler(&console.Collector{API: api, Components: comps, Timeout: 5 * time.Second, Now: time.Now},
		slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		return err
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var times []time.Duration
	var size int
	for i := 0; i <= rounds; i++ {
		start := time.Now()
		n, err := load(srv.URL+"/", vips)
		if err != nil {
			return err
		}
		if i > 0 { // the first load warms up
			times = append(times, time.Since(start))
		}
		size = n
	}
	slices.Sort(times)
	median := times[len(times)/2]
	_, _ = fmt.Fprintf(w, "inventory page: %d VIPs, %d directors, %d bytes; min %v median %v max %v over %d loads\n",
		vips, directors, size, times[0], median, times[len(times)-1], len(times))
	_, _ = fmt.Fprintf(w, "BENCH console_page_ms_%d_vips %.3f ms\n", vips, float64(median.Microseconds())/1000)
	return nil
}

func load(url string, vips int) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	if !strings.Contains(string(b), fmt.Sprintf("VIPs (%d)", vips)) {
		return 0, fmt.Errorf("GET %s: not the inventory page of %d VIPs", url, vips)
	}
	return len(b), nil
}

type fakeAPI console.APIState

func (f fakeAPI) ReadAPI(context.Context) (console.APIState, error) { return console.APIState(f), nil }

type fakeComponents []console.Component

func (f fakeComponents) ListEndpoints(context.Context) ([]console.Endpoint, error) {
	eps := make([]console.Endpoint, 0, len(f))
	for _, c := range f {
		eps = append(eps, console.Endpoint{Role: c.Role, Name: c.Name, URL: c.URL})
	}
	return eps, nil
}

func (f fakeComponents) ReadComponent(_ context.Context, ep console.Endpoint) console.Component {
	for _, c := range f {
		if c.Role == ep.Role && c.Name == ep.Name {
			return c
		}
	}
	return console.Component{Role: ep.Role, Name: ep.Name, Err: "unknown"}
}

// fleet builds n VIPs in /24 pools of 250 over two environments, one
// Service each (every fourth one L7 with a TLS Secret), served by every
// director, with six traffic series per VIP and director.
func fleet(n, directors int) (fakeAPI, fakeComponents) {
	var api console.APIState
	envs := []string{"production", "staging"}
	for i, env := range envs {
		api.Clusters = append(api.Clusters, console.L4Cluster{Name: fmt.Sprintf("tlb-%d", i), Environment: env, Capacity: int32(n)})
	}
	addr := func(i int) string { return fmt.Sprintf("10.%d.%d.%d", 100+i/(250*256), i/250%256, i%250+1) }
	for i := 0; i < n; i++ {
		if i%250 == 0 {
			c := &api.Clusters[(i/250)%len(envs)]
			api.Pools = append(api.Pools, console.Pool{Name: fmt.Sprintf("pool-%d", i/250), L4Cluster: c.Name,
				CIDRs: []string{fmt.Sprintf("10.%d.%d.0/24", 100+i/(250*256), i/250%256)}, Used: int64(min(250, n-i)), Free: int64(254 - min(250, n-i))})
		}
		p := api.Pools[len(api.Pools)-1]
		svc := console.Service{Namespace: fmt.Sprintf("team-%d", i%37), Name: fmt.Sprintf("svc-%d", i), VIPs: []string{addr(i)},
			Pool: p.Name, L4Cluster: p.L4Cluster, Ports: []string{"80/tcp", "443/tcp"}, Requested: "environment=production"}
		if i%4 == 0 {
			svc.L7 = &console.L7Intent{Group: "edge", Hosts: []string{fmt.Sprintf("svc-%d.example.com", i)}, PathPrefix: "/", TLSSecret: "tls"}
		}
		api.Services = append(api.Services, svc)
	}
	for i := range api.Clusters {
		for _, p := range api.Pools {
			if p.L4Cluster == api.Clusters[i].Name {
				api.Clusters[i].Used += p.Used
				api.Clusters[i].Free += p.Free
			}
		}
	}
	for i := 0; i < 50; i++ {
		api.Events = append(api.Events, console.Event{Namespace: "team-1", Kind: "Service", Name: fmt.Sprintf("bad-%d", i),
			Reason: "InvalidAnnotation", Message: `annotation tlb.io/vip: "x" is not a unicast IP address`, Count: 1, Last: time.Now()})
	}
	var comps fakeComponents
	for d := 0; d < directors; d++ {
		c := console.Component{Role: console.RoleDirector, Name: fmt.Sprintf("dir-%d", d), URL: fmt.Sprintf("http://198.18.1.%d:9100", d+2),
			Ready: true, Announced: float64(len(api.Pools)), Sessions: []console.BGPSession{{Peer: "198.18.1.1", Established: true}},
			GTM: map[string]console.GTMAnswer{}, Traffic: map[string][]console.Sample{}}
		for g := 0; g < 32; g++ {
			c.RealServers = append(c.RealServers, console.RealServer{Address: fmt.Sprintf("198.18.2.%d", g+2), Up: g != 5})
		}
		for i := 0; i < n; i++ {
			a := addr(i)
			c.GTM[a] = console.GTMAnswer{Up: i%100 != 0, Line: a + " up healthy=31 total=32"}
			for _, m := range []string{"connections_total", "packets_in_total", "bytes_in_total"} {
				for _, port := range []string{"80", "443"} {
					c.Traffic[a] = append(c.Traffic[a], console.Sample{Metric: m, Labels: "port=" + port + " protocol=tcp", Value: float64(i * 1000)})
				}
			}
		}
		comps = append(comps, c)
	}
	return fakeAPI(api), comps
}
