package authzbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

// Result is one run's figures.
type Result struct {
	// Checks are the checks measured (after the warmup), All every check.
	Checks int
	All    int
	// Failed are the measured checks not allowed.
	Failed    int
	PerSecond float64
	P50Ms     float64
	P99Ms     float64
	// ServiceCPUPerCheck is the service child's CPU time per check.
	ServiceCPUPerCheck time.Duration
}

// perCore is how many checks per second one core of the service answers.
func (r Result) perCore() float64 {
	if r.ServiceCPUPerCheck <= 0 {
		return 0
	}
	return float64(time.Second) / float64(r.ServiceCPUPerCheck)
}

// load keeps streams Check calls in flight on conns connections for warmup
// then d, on a route with chain value, and measures the calls after the
// warmup. Every call should be allowed: a refused one (an interceptor that
// timed out under load answers 503) is counted in Failed and in the
// latencies; an RPC error stops the run.
func load(ctx context.Context, addr, value string, streams, conns, sessions int, warmup, d time.Duration) (Result, error) {
	ccs := make([]*grpc.ClientConn, conns)
	for i := range ccs {
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return Result{}, err
		}
		defer func() { _ = cc.Close() }()
		ccs[i] = cc
	}
	start := time.Now()
	measureFrom, end := start.Add(warmup), start.Add(warmup+d)
	lat := make([][]time.Duration, streams)
	all := make([]int, streams)
	failed := make([]int, streams)
	errs := make(chan error, streams)
	var wg sync.WaitGroup
	for w := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := authv3.NewAuthorizationClient(ccs[w%conns])
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				req := checkRequest(value, sessionID(rng.IntN(sessions)))
				t0 := time.Now()
				if t0.After(end) {
					return
				}
				resp, err := client.Check(ctx, req)
				t1 := time.Now()
				if err != nil {
					errs <- fmt.Errorf("calling Check: %w", err)
					return
				}
				all[w]++
				if t0.After(measureFrom) {
					lat[w] = append(lat[w], t1.Sub(t0))
					if codes.Code(resp.GetStatus().GetCode()) != codes.OK {
						failed[w]++
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return Result{}, err
	}
	var measured []time.Duration
	total, nfailed := 0, 0
	for w, l := range lat {
		measured = append(measured, l...)
		total += all[w]
		nfailed += failed[w]
	}
	if len(measured) == 0 {
		return Result{}, fmt.Errorf("no checks completed")
	}
	slices.Sort(measured)
	return Result{Checks: len(measured), All: total, Failed: nfailed, PerSecond: float64(len(measured)) / d.Seconds(),
		P50Ms: ms(rank(measured, 50)), P99Ms: ms(rank(measured, 99))}, nil
}

// rank is the nearest-rank percentile of sorted s.
func rank(s []time.Duration, p float64) time.Duration {
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// checkRequest is what Envoy sends for a same-origin POST with a session
// cookie on a route whose chain is value.
func checkRequest(value, session string) *authv3.CheckRequest {
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		ContextExtensions: map[string]string{chain.Key: value},
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "POST", Path: "/api/tasks/create?list=7", Host: "app.example.com", Scheme: "https",
			Protocol: "HTTP/1.1",
			Headers: map[string]string{
				":method": "POST", ":path": "/api/tasks/create?list=7", ":authority": "app.example.com", ":scheme": "https",
				"origin": "https://app.example.com", "cookie": "session=" + session + "; theme=dark",
				"content-type": "application/json", "user-agent": "authzbench", "accept": "*/*",
			},
		}},
	}}
}
