package xdsbench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/tlbproject/tlb/l7/gcpercent"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/xds"
	"github.com/tlbproject/tlb/l7/xdsbuild"
)

// Child is the server side: it publishes n services, serves ADS on
// loopback and then obeys commands from in, one per line:
//
//	round K   change Changed endpoints and publish; prints "published K <ms>"
//	stats     prints "hwm <KiB>"
//
// It first prints "ready <addr> <build ms>". With applyRounds > 0 the
// config it first publishes is the one rounds 1..applyRounds lead to, as
// a replica started after them would read it.
func Child(ctx context.Context, n, applyRounds int, kinds []translate.Kind, in io.Reader, out io.Writer) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gcpercent.Set(gcpercent.Default) // as l7 serve does

	srv := xds.New(ctx, log, nil, time.Now, xds.Options{Group: "edge", Kinds: kinds})
	pub := pipeline.New(model.NewResolver(), model.Options{}, time.Now, xdsbuild.New(srv))
	gs := grpc.NewServer(grpc.MaxConcurrentStreams(10000))
	srv.Register(gs)
	// A unix socket, as in the gateway pod: l7 serves no plain TCP.
	dir, err := os.MkdirTemp("", "xdsbench")
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	sock := filepath.Join(dir, "xds.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	go func() { _ = gs.Serve(lis) }()
	defer gs.Stop()

	cfg := Config(n)
	for k := 1; k <= applyRounds; k++ {
		Mutate(&cfg, k)
	}
	start := time.Now()
	rep := pub.Publish(ctx, cfg)
	build := time.Since(start)
	if len(rep.Problems) > 0 || len(rep.Invalid) > 0 {
		return fmt.Errorf("bench config rejected: %v %v", rep.Problems, rep.Invalid)
	}
	_, _ = fmt.Fprintf(out, "ready unix://%s %.1f\n", sock, ms(build))
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "round":
			k, _ := strconv.Atoi(f[1])
			t := time.Now()
			Mutate(&cfg, k)
			pub.Publish(ctx, cfg)
			_, _ = fmt.Fprintf(out, "published %d %.1f\n", k, ms(time.Since(t)))
		case len(f) == 1 && f[0] == "stats":
			_, _ = fmt.Fprintf(out, "hwm %d\n", VmHWM())
		}
	}
	return sc.Err()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// VmHWM returns this process's peak resident set in KiB (0 if unknown).
func VmHWM() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			v, _ := strconv.Atoi(strings.Fields(l)[1])
			return v
		}
	}
	return 0
}
