package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// child is a controller the benchmark runs beside the API server, with
// its output in a log file.
type child struct {
	cmd *exec.Cmd
	log *os.File
}

// startChild starts bin with args, its output going to logPath, and waits
// (at most 30 s) until readyURL answers 200. what names it in errors.
func startChild(what, bin string, args []string, logPath, readyURL string) (*child, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("start %s: %w", what, err)
	}
	c := &child{cmd: cmd, log: logf}
	if err := waitHTTP(readyURL, 30*time.Second); err != nil {
		c.stop()
		return nil, fmt.Errorf("%s not ready: %w", what, err)
	}
	return c, nil
}

// stop kills the child, waits for it and closes its log.
func (c *child) stop() {
	_ = c.cmd.Process.Kill()
	_, _ = c.cmd.Process.Wait()
	_ = c.log.Close()
}

// createAtOnce runs every create concurrently, at most 50 at a time, as a
// burst of clients would, and returns the first error.
func createAtOnce(creates []func() error) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(creates))
	sem := make(chan struct{}, 50)
	for _, create := range creates {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs <- create()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
