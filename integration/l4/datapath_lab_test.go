//go:build lab

package l4

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestClientReachesBothGatewaysWithDirectReturn is proof 1: requests to the
// VIP go through the director to both gateways, and replies go from the
// gateways to the client without passing through the director.
func TestClientReachesBothGatewaysWithDirectReturn(t *testing.T) {
	l, _, h := upDSR(t, 2)
	dir, dirIf := l.directors[0], l.dirIfs[0]

	counts := map[string]int{}
	const requests = 40
	for range requests {
		counts[l.get(t, "/")]++ // a new connection, so a new source port, each time
	}
	t.Logf("answers over %d requests: %v", requests, counts)
	for _, g := range l.gateways {
		if counts[g.Name] == 0 {
			t.Errorf("gateway %s answered none of %d requests: %v", g.Name, requests, counts)
		}
	}

	// Downloads: the served bytes must not cross the director.
	rx0, tx0 := linkBytes(t, dir, dirIf)
	const size = 256 << 10
	served := 0
	for range 4 {
		served += len(l.get(t, fmt.Sprintf("/download?bytes=%d", size)))
	}
	rx1, tx1 := linkBytes(t, dir, dirIf)
	st := serviceStats(t, h, 80)
	dirBytes := (rx1 - rx0) + (tx1 - tx0)
	t.Logf("served %d bytes to the client; director link moved %d bytes (rx %d, tx %d); IPVS in %d pkts/%d bytes, out %d pkts/%d bytes",
		served, dirBytes, rx1-rx0, tx1-tx0, st.PacketsIn, st.BytesIn, st.PacketsOut, st.BytesOut)
	if served != 4*size {
		t.Fatalf("client received %d bytes, want %d", served, 4*size)
	}
	if st.PacketsIn == 0 {
		t.Fatalf("IPVS saw no incoming packets: the traffic did not pass the director")
	}
	if st.PacketsOut != 0 || st.BytesOut != 0 {
		t.Errorf("IPVS forwarded %d reply packets: replies went through the director", st.PacketsOut)
	}
	if dirBytes > uint64(served)/5 {
		t.Errorf("director link moved %d bytes for %d served: replies seem to pass it", dirBytes, served)
	}
}

// TestUploadAndDownloadAtMTU1500 is proof 2: with MTU 1500 on every link a
// 1 MiB upload and a 1 MiB download both complete, thanks to netd's MSS
// clamp, even where ICMP "fragmentation needed" never reaches the client
// (filtered on the way, or sent by a director the client's flow hashes
// away from). The router here drops those ICMP messages; without the
// clamp the same upload stalls.
func TestUploadAndDownloadAtMTU1500(t *testing.T) {
	l, _, _ := upDSR(t, 2)
	for _, n := range append(append(l.gateways, l.directors...), l.client, l.router) {
		links, err := n.Netlink().LinkList()
		if err != nil {
			t.Fatal(err)
		}
		for _, lk := range links {
			if lk.Type() == "veth" && lk.Attrs().MTU != 1500 {
				t.Fatalf("link %s in node %s has MTU %d, want 1500", lk.Attrs().Name, n.Name, lk.Attrs().MTU)
			}
		}
	}
	l.router.Run(t, "nft", "add table inet lab; add chain inet lab icmpdrop { type filter hook forward priority 0; }; "+
		"add rule inet lab icmpdrop icmp type destination-unreachable icmp code 4 counter drop")
	const size = 1 << 20

	got := l.get(t, fmt.Sprintf("/download?bytes=%d", size))
	if len(got) != size {
		t.Fatalf("download: got %d bytes, want %d", len(got), size)
	}

	body, err := upload(l, size, 120*time.Second)
	if err != nil {
		t.Fatalf("1 MiB upload with the MSS clamp: %v", err)
	}
	if !strings.HasSuffix(body, fmt.Sprint(size)) {
		t.Fatalf("upload answer %q, want the gateway to have received %d bytes", body, size)
	}
	t.Logf("with the clamp: 1 MiB download and 1 MiB upload completed (upload answered %q); router: %s",
		body, strings.TrimSpace(l.router.Run(t, "nft", "list", "chain", "inet", "lab", "icmpdrop")))

	// Control: stop netd and remove its clamp on every gateway. The same
	// upload must now stall (bounded by a short timeout).
	for i, g := range l.gateways {
		l.netd[i].stop()
		g.Run(t, "nft", "delete", "table", "inet", "tlb_netd")
	}
	l.client.Run(t, "ip", "route", "flush", "cache")
	if body, err := upload(l, size, 15*time.Second); err == nil {
		t.Fatalf("upload without the MSS clamp completed (%q); the test cannot show the clamp matters", body)
	} else {
		t.Logf("control: without the clamp the 1 MiB upload failed as expected: %v", err)
	}
	t.Logf("router dropped ICMP frag-needed: %s", strings.TrimSpace(l.router.Run(t, "nft", "list", "chain", "inet", "lab", "icmpdrop")))
}

func upload(l *dsrLab, size int, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+vip.String()+"/upload", bytes.NewReader(make([]byte, size)))
	if err != nil {
		return "", err
	}
	resp, err := l.client.HTTPClient().Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %s: %s", resp.Status, b)
	}
	return strings.TrimSpace(string(b)), nil
}
