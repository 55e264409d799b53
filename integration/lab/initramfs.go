package lab

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// bootModules are loaded by the initramfs, before the host root is mounted.
var bootModules = []string{"virtio_pci", "virtio_console", "9pnet_virtio", "9p", "overlay"}

// initScript is the initramfs's /init. It mounts the host root over 9p,
// overlays a tmpfs, chroots and runs the command file named on the kernel
// command line (tlb.run=PATH), then prints the exit marker and powers off.
const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules.order); do insmod "$m" 2>/dev/null; done
run=""; ver=""
for a in $(cat /proc/cmdline); do
  case "$a" in tlb.run=*) run="${a#tlb.run=}";; tlb.kver=*) ver="${a#tlb.kver=}";; tlb.moddir=*) moddir="${a#tlb.moddir=}";; esac
done
fail() { echo "TLB-LAB-ERROR: $*"; echo "TLB-LAB-EXIT: 125"; poweroff -f; }
mkdir -p /host /ovl /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /host || fail "mount 9p"
mount -t tmpfs -o size=75% tmpfs /ovl || fail "mount tmpfs"
mkdir -p /ovl/upper /ovl/work
mount -t overlay -o lowerdir=/host,upperdir=/ovl/upper,workdir=/ovl/work overlay /newroot || fail "mount overlay"
mount -t proc proc /newroot/proc
mount -t sysfs sys /newroot/sys
mount -t devtmpfs dev /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs tmpfs /newroot/dev/shm
mount -t tmpfs tmpfs /newroot/run
mkdir -p /newroot/lib/modules
mount --bind "/newroot$moddir" /newroot/lib/modules || fail "bind modules"
# The kernel loads modules on demand (nft_nat, ...) by running the
# modprobe helper from this initramfs root: hand it to the host's modprobe.
printf '#!/bin/busybox sh\nexec /bin/busybox chroot /newroot /sbin/modprobe "$@"\n' > /bin/tlb-modprobe
chmod 755 /bin/tlb-modprobe
echo /bin/tlb-modprobe > /proc/sys/kernel/modprobe
mount -t cgroup2 none /newroot/sys/fs/cgroup 2>/dev/null
ip link set lo up 2>/dev/null
chroot /newroot /bin/sh -c 'ip link set lo up; sh "$0"; echo "TLB-LAB-EXIT: $?"' "$run"
sync
poweroff -f
`

// buildInitramfs writes (or reuses) a gzip'd newc cpio holding busybox,
// the init script and the modules needed to reach the host root.
func buildInitramfs(k Kernel, cacheDir string) (string, error) {
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		return "", fmt.Errorf("find busybox (install busybox-static): %w", err)
	}
	var mods []string
	seen := map[string]bool{}
	for _, m := range bootModules {
		out, err := exec.Command("modprobe", "-d", k.Root, "-S", k.Version, "--show-depends", m).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("resolve module %s for kernel %s: %w: %s", m, k.Version, err, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "insmod" && !seen[f[1]] {
				seen[f[1]] = true
				mods = append(mods, f[1])
			}
		}
	}
	h := sha256.New()
	_, _ = io.WriteString(h, initScript+k.Version+strings.Join(mods, ","))
	sum := hex.EncodeToString(h.Sum(nil))[:16]
	path := filepath.Join(cacheDir, "initramfs-"+sum+".cpio.gz")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}

	files := map[string][]byte{}
	bb, err := os.ReadFile(busybox)
	if err != nil {
		return "", fmt.Errorf("read busybox: %w", err)
	}
	files["bin/busybox"] = bb
	files["init"] = []byte(initScript)
	var order []string
	for i, m := range mods {
		b, err := os.ReadFile(m)
		if err != nil {
			return "", fmt.Errorf("read module %s: %w", m, err)
		}
		name := fmt.Sprintf("mod/%02d-%s", i, filepath.Base(m))
		files[name] = b
		order = append(order, "/"+name)
	}
	files["modules.order"] = []byte(strings.Join(order, "\n") + "\n")

	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	w := newCpioWriter(gz)
	for _, d := range []string{"bin", "dev", "proc", "sys", "mod", "tmp"} {
		if err := w.dir(d); err != nil {
			return "", err
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		mode := uint32(0o644)
		if n == "init" || n == "bin/busybox" {
			mode = 0o755
		}
		if err := w.file(n, mode, files[n]); err != nil {
			return "", err
		}
	}
	if err := w.close(); err != nil {
		return "", err
	}
	if err := gz.Close(); err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("write initramfs: %w", err)
	}
	return path, os.Rename(tmp, path)
}
