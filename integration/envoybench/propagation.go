package envoybench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tlbproject/tlb/integration/envoyproc"
)

// deployedDebounce is l7 serve's --debounce default, as deploy/envoy runs it.
const deployedDebounce = 200 * time.Millisecond

// Propagation is the propagation run's figures: each new route's time
// from its DSL file renamed into l7's directory to its first 200 through
// Envoy, with l7 reacting to the file at once (--debounce 0: the
// Kubernetes source has no debounce either) and with the deployed
// debounce.
type Propagation struct {
	Routes                int
	NoDebounce, Debounced []float64
	// NoDebouncePublishMs are l7's publishes of the NoDebounce routes
	// (tlb_l7_push_duration_seconds: resolve, translate, validate, swap),
	// and NoDebounceRoutesAckMs the times from the start of each such
	// publish to Envoy's ACK of the route table it sent
	// (tlb_l7_xds_ack_delay_seconds of RouteConfiguration): l7's publish,
	// the push and Envoy's apply.
	NoDebouncePublishMs   []float64
	NoDebounceRoutesAckMs []float64
}

// Churn is the churn run's figures.
type Churn struct {
	Hosts int
	// Load is wrk's result on the unchanged routes.
	Load wrkResult
	// Added and Removed count the routes added (each waited for until
	// served) and removed (each waited for until gone) meanwhile;
	// AddedMs are the adds' times to their first 200 under load.
	Added, Removed int
	AddedMs        []float64
}

func propagationService(name string, endpoint string) serviceDef {
	return serviceDef{name: name, host: name + ".bench", listener: "web", endpoints: []string{endpoint}}
}

// measurePropagation serves o.PropagationRoutes routes and times new
// ones to their first 200, first with l7 at --debounce 0, then as
// deployed, where it also churns routes under load.
func measurePropagation(ctx context.Context, o Options, backend string) (Propagation, Churn, error) {
	p := Propagation{Routes: o.PropagationRoutes}
	c := Churn{Hosts: o.ChurnHosts}
	for _, debounce := range []time.Duration{0, deployedDebounce} {
		root := filepath.Join(o.Dir, "prop"+strconv.Itoa(int(debounce/time.Millisecond)))
		cfg, err := newConfigDir(root)
		if err != nil {
			return p, c, err
		}
		vip := o.addr(propagationVIP)
		port := o.Port + 80
		if err := cfg.put("gateway.yaml", gatewayYAML(listenerDef{"web", vip, port})); err != nil {
			return p, c, err
		}
		for i := range o.PropagationRoutes {
			if err := cfg.put(fmt.Sprintf("r%05d.yaml", i), propagationService(fmt.Sprintf("r%05d", i), backend).yaml()); err != nil {
				return p, c, err
			}
		}
		o.progress("propagation: starting l7 (--debounce %v) and Envoy with %d routes", debounce, o.PropagationRoutes)
		g, err := startGateway(ctx, root, o.addr(propagationHost), []string{"--config=" + cfg.path, "--debounce=" + debounce.String()}, false)
		if err != nil {
			return p, c, err
		}
		addr := net.JoinHostPort(vip.String(), strconv.Itoa(port))
		fail := func(err error) (Propagation, Churn, error) {
			err = fmt.Errorf("%w\n--- envoy log:\n%s\n--- l7 log:\n%s", err, g.LogTail("envoy", 2000), g.LogTail("l7", 2000))
			g.Stop()
			return p, c, err
		}
		if err := waitStatus(ctx, addr, getHost(fmt.Sprintf("r%05d.bench", o.PropagationRoutes-1)), 200, 5*time.Minute); err != nil {
			return fail(err)
		}
		client := envoyproc.ClientTo(addr, nil, true)
		var samples, publishes, acks []float64
		for i := range o.PropagationSamples {
			before, err := readPushes(ctx, g.Metrics)
			if err != nil {
				return fail(err)
			}
			acked, err := readAckDelays(ctx, g.Metrics, rdsType)
			if err != nil {
				return fail(err)
			}
			ms, err := addRoute(ctx, client, cfg, fmt.Sprintf("new%03d", i), backend)
			if err != nil {
				return fail(err)
			}
			after, err := readPushes(ctx, g.Metrics)
			if err != nil {
				return fail(err)
			}
			ack, err := nextAck(ctx, g.Metrics, rdsType, acked)
			if err != nil {
				return fail(err)
			}
			samples, publishes, acks = append(samples, ms), append(publishes, perEvent(before, after)), append(acks, ack)
		}
		o.progress("propagation (--debounce %v): p50 %.0f ms, p99 %.0f ms (l7's publish p50 %.0f ms)", debounce, percentile(samples, 50), percentile(samples, 99), percentile(publishes, 50))
		if debounce == 0 {
			p.NoDebounce, p.NoDebouncePublishMs, p.NoDebounceRoutesAckMs = samples, publishes, acks
			g.Stop()
			continue
		}
		p.Debounced = samples
		if c, err = churn(ctx, o, root, addr, client, cfg, backend); err != nil {
			return fail(err)
		}
		g.Stop()
	}
	return p, c, nil
}

// nextAck waits (5 s at most) until l7 has seen an ACK of typ after
// before, and returns the mean delay of those since (ms).
func nextAck(ctx context.Context, metrics, typ string, before ackDelays) (float64, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		cur, err := readAckDelays(ctx, metrics, typ)
		if err != nil {
			return 0, err
		}
		if cur.count > before.count {
			return perEvent(before, cur), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no ACK of %s within 5 s", typ)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func getHost(host string) wrkRequest {
	return wrkRequest{Method: "GET", Path: "/", Headers: map[string]string{"Host": host}}
}

// addRoute writes a new service of one route and returns the time from
// its file's rename into the directory to its first 200 through Envoy.
func addRoute(ctx context.Context, client *http.Client, cfg configDir, name, backend string) (float64, error) {
	req := getHost(name + ".bench")
	if code, err := send(ctx, client, req); err != nil || code != http.StatusNotFound {
		return 0, fmt.Errorf("route %s before it is written: %s; want 404", name, outcome(code, err))
	}
	t0 := time.Now()
	if err := cfg.put(name+".yaml", propagationService(name, backend).yaml()); err != nil {
		return 0, err
	}
	if err := untilStatus(ctx, client, req, http.StatusOK); err != nil {
		return 0, fmt.Errorf("new route %s: %w", name, err)
	}
	return float64(time.Since(t0)) / float64(time.Millisecond), nil
}

// removeRoute removes a service's file and waits until Envoy answers 404.
func removeRoute(ctx context.Context, client *http.Client, cfg configDir, name string) error {
	if err := cfg.remove(name + ".yaml"); err != nil {
		return err
	}
	return untilStatus(ctx, client, getHost(name+".bench"), http.StatusNotFound)
}

// untilStatus sends req every millisecond until it is answered status,
// for a minute at most.
func untilStatus(ctx context.Context, client *http.Client, req wrkRequest, status int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		code, err := send(ctx, client, req)
		if err == nil && code == status {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not answered %d within a minute (last: %s)", status, outcome(code, err))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// churn loads o.ChurnHosts unchanged routes with wrk for o.ChurnDuration
// while routes are added and removed one after another.
func churn(ctx context.Context, o Options, root, addr string, client *http.Client, cfg configDir, backend string) (Churn, error) {
	c := Churn{Hosts: o.ChurnHosts}
	var reqs []wrkRequest
	for i := range o.ChurnHosts {
		reqs = append(reqs, getHost(fmt.Sprintf("r%05d.bench", i*(o.PropagationRoutes/o.ChurnHosts))))
	}
	script, err := wrkScript(root, "churn", reqs)
	if err != nil {
		return c, err
	}
	o.progress("churn: %d unchanged routes under load for %v while routes are added and removed", o.ChurnHosts, o.ChurnDuration)
	type result struct {
		r   wrkResult
		err error
	}
	done := make(chan result, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		r, err := runWrk(wctx, "http://"+addr+"/", script, o.Threads, o.Connections, o.ChurnDuration)
		done <- result{r, err}
	}()
	for i := 0; ; i++ {
		select {
		case res := <-done:
			c.Load = res.r
			o.progress("churn: %d requests to unchanged routes, %d not 2xx, %d socket errors; %d routes added, %d removed",
				c.Load.Requests, c.Load.Non2xx, c.Load.SocketErrors, c.Added, c.Removed)
			return c, res.err
		default:
		}
		name := fmt.Sprintf("churn%04d", i)
		ms, err := addRoute(ctx, client, cfg, name, backend)
		if err != nil {
			return c, err
		}
		c.Added++
		c.AddedMs = append(c.AddedMs, ms)
		if err := removeRoute(ctx, client, cfg, name); err != nil {
			return c, err
		}
		c.Removed++
	}
}
