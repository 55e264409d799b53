// Command pause is the sandbox ("pause") container of the lab VM's
// Kubernetes nodes, which cannot pull registry.k8s.io/pause: it holds the
// pod's namespaces open until it is told to stop, and reaps any child that
// is reparented to it. lab-test.sh packs it into an image with tools/image.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}
