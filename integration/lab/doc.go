// Package lab runs commands as root on a real Linux kernel: Debian's stock
// kernel booted under qemu, with the host's root file system shared
// read-only over 9p and a writable tmpfs overlay on top.
//
// The machines that build and test TLB have no IPVS, no IPIP and no dummy
// links in their own kernel; Debian's kernel has them as modules. A lab boot
// loads those modules, chroots into the overlaid host root and runs one
// command, streaming its output and returning its exit status. Host binaries
// (test binaries, ip, ipvsadm, bird) run inside unchanged.
//
// The package owns only files under its cache directory and the qemu
// processes it starts; it never installs anything (tools/deps.sh does).
package lab
