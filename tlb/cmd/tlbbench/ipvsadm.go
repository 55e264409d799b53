package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/ipvs"

	"github.com/tlbproject/tlb/tlb/model"
)

// timeIPVSAdmRestore is step 1: it times ipvsadm --restore of the rules
// of desired (total destinations) from empty, in the initial namespace,
// and leaves that namespace's IPVS table empty.
func timeIPVSAdmRestore(r *report, tmp, ipvsadmPath string, desired model.Desired, total int) (time.Duration, error) {
	root, err := ipvs.New("")
	if err != nil {
		return 0, fmt.Errorf("open IPVS netlink socket: %w", err)
	}
	defer root.Close()
	if err := root.Flush(); err != nil {
		return 0, fmt.Errorf("flush IPVS: %w", err)
	}
	defer func() { _ = root.Flush() }()
	rules := filepath.Join(tmp, "rules")
	if err := writeRestoreFile(rules, desired); err != nil {
		return 0, err
	}
	restore, err := timeRestore(ipvsadmPath, rules)
	if err != nil {
		return 0, err
	}
	r.info("ipvsadm --restore from empty: %v", restore)
	if err := checkKernel(root, len(desired.Services), total); err != nil {
		return 0, fmt.Errorf("after ipvsadm restore: %w", err)
	}
	if err := root.Flush(); err != nil {
		return 0, fmt.Errorf("flush IPVS: %w", err)
	}
	return restore, nil
}

// writeRestoreFile writes the rules of d to path in `ipvsadm --restore` form.
func writeRestoreFile(path string, d model.Desired) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := writeRestore(bw, d); err != nil {
		_ = f.Close()
		return fmt.Errorf("write restore file: %w", err)
	}
	if err := bw.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("write restore file: %w", err)
	}
	return f.Close()
}

// timeRestore times `ipvsadm --restore` reading the rules file.
func timeRestore(ipvsadmPath, rules string) (time.Duration, error) {
	in, err := os.Open(rules)
	if err != nil {
		return 0, err
	}
	defer func() { _ = in.Close() }()
	cmd := exec.Command(ipvsadmPath, "--restore")
	cmd.Stdin = in
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("ipvsadm --restore: %w: %s", err, stderr.String())
	}
	return elapsed, nil
}
