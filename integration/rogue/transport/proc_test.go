package transport

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// listening is what a process listens on: TCP host:ports and unix socket
// paths, read from /proc.
type listening struct {
	TCP  []string
	Unix []string
}

// listeningOf reads the listening sockets of pids from /proc/net and their
// file descriptors.
func listeningOf(t *testing.T, pids ...int) listening {
	t.Helper()
	inodes := map[string]bool{}
	for _, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			l, err := os.Readlink(dir + "/" + e.Name())
			if err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	var out listening
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		eachLine(t, f, func(fields []string) {
			// sl local rem st ... inode (field 9)
			if len(fields) > 9 && fields[3] == "0A" && inodes[fields[9]] {
				out.TCP = append(out.TCP, hexAddr(t, fields[1]))
			}
		})
	}
	eachLine(t, "/proc/net/unix", func(fields []string) {
		// Num RefCount Protocol Flags Type St Inode Path; flags 00010000: listening
		if len(fields) > 7 && fields[3] == "00010000" && inodes[fields[6]] {
			out.Unix = append(out.Unix, fields[7])
		}
	})
	slices.Sort(out.TCP) // each of Envoy's workers has its own socket
	out.TCP = slices.Compact(out.TCP)
	return out
}

func eachLine(t *testing.T, file string, f func([]string)) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Scan() // header
	for sc.Scan() {
		f(strings.Fields(sc.Text()))
	}
}

// hexAddr decodes /proc/net/tcp's "0100007F:1F90" (little-endian words).
func hexAddr(t *testing.T, s string) string {
	t.Helper()
	h, p, _ := strings.Cut(s, ":")
	raw, err := hex.DecodeString(h)
	if err != nil {
		t.Fatal(err)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		for j := range 4 {
			ip[i+j] = raw[i+3-j]
		}
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort(ip.String(), strconv.FormatUint(port, 10))
}

// memoryCount counts the occurrences of needle in the readable memory of
// pid (its heap, stacks and mappings), as an attacker with the process's
// memory would find it.
func memoryCount(t *testing.T, pid int, needle []byte) int {
	t.Helper()
	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		t.Fatalf("reading another process's memory needs root: %v", err)
	}
	defer func() { _ = mem.Close() }()
	n := 0
	for _, line := range strings.Split(string(maps), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1][0] != 'r' {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end-start > 1<<30 {
			continue
		}
		buf := make([]byte, end-start)
		if _, err := mem.ReadAt(buf, int64(start)); err != nil {
			continue // a mapping that went away or cannot be read ([vvar])
		}
		n += bytes.Count(buf, needle)
	}
	return n
}

// keyTraces are what of a PEM private key can be found in memory: its
// last base64 line (the public key's end, unique to this key) and the raw
// private scalar, which every parsed form holds.
func keyTraces(t *testing.T, pemKey []byte) [][]byte {
	t.Helper()
	block, _ := pem.Decode(pemKey)
	if block == nil {
		t.Fatal("not a PEM key")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("want an ECDSA key, got %T", k)
	}
	d, err := ec.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(pemKey), []byte("\n"))
	return [][]byte{lines[len(lines)-2], d}
}

// keyCount counts the traces of a key in pid's memory.
func keyCount(t *testing.T, pid int, pemKey []byte) int {
	t.Helper()
	n := 0
	for _, tr := range keyTraces(t, pemKey) {
		n += memoryCount(t, pid, tr)
	}
	return n
}
