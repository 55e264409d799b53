package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// runRunDir handles "l7 rundir --owner UID:GID DIR": it gives DIR, the
// node directory (a hostPath) through which a gateway group's l7 and
// Envoy pods share their unix sockets and Envoy's bootstrap, to the
// pods' user, mode 0750. The kubelet creates a missing hostPath as root,
// mode 0755, where the pods' user could create nothing. The l7 pod's
// first init container runs it as root with CAP_CHOWN and CAP_FOWNER only.
func runRunDir(args []string) error {
	fs := flag.NewFlagSet("rundir", flag.ExitOnError)
	owner := fs.String("owner", "", "UID:GID to give the directory to (required)")
	_ = fs.Parse(args)
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return errors.New("rundir: want exactly one argument, the directory")
	}
	uid, gid, err := parseOwner(*owner)
	if err != nil {
		return err
	}
	if err := prepareRunDir(fs.Arg(0), uid, gid); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "l7: %s owned by %d:%d, mode 0750\n", fs.Arg(0), uid, gid)
	return nil
}

// parseOwner reads "UID:GID" (numbers: the images have no user database).
func parseOwner(v string) (uid, gid int, err error) {
	u, g, ok := strings.Cut(v, ":")
	if ok {
		uid, err = strconv.Atoi(u)
	}
	if ok && err == nil {
		gid, err = strconv.Atoi(g)
	}
	if !ok || err != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("rundir: --owner %q: want UID:GID, two numbers", v)
	}
	return uid, gid, nil
}

// prepareRunDir makes dir a directory (it must exist) owned by uid:gid
// with mode 0750: the pods' user may create sockets in it, nobody else
// on the node but root may enter it.
func prepareRunDir(dir string, uid, gid int) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("rundir %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("rundir %s: not a directory", dir)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return fmt.Errorf("rundir %s: give it to %d:%d: %w", dir, uid, gid, err)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		return fmt.Errorf("rundir %s: set mode 0750: %w", dir, err)
	}
	return nil
}
