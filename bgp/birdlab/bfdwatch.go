package birdlab

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// adminDownTable is the nftables table CountBFDAdminDown adds in the
// router's namespace.
const adminDownTable = "tlbbirdlab_bfdwatch"

// adminDownPackets reads the counter out of `nft list counter`.
var adminDownPackets = regexp.MustCompile(`packets (\d+)`)

// CountBFDAdminDown counts, from now on, the BFD control packets (UDP
// 3784) the router receives with State AdminDown (RFC 5880 section
// 4.1: the two top bits of the second byte are 0): what a director sends
// when it closes a session on purpose. It returns a func that reads the
// count and one that removes the counter (an nftables table in the
// router's namespace).
func (l *Lab) CountBFDAdminDown(ctx context.Context) (count func() (int, error), remove func() error, err error) {
	// @th,72,2: the transport header's bits 72-73, past the 8 bytes of
	// UDP header, the Vers and Diag byte: the State field.
	script := fmt.Sprintf(`table inet %[1]s {
  counter admindown {}
  chain in { type filter hook input priority -300; policy accept; iifname "%[2]s" udp dport 3784 @th,72,2 0 counter name "admindown"; }
}
`, adminDownTable, l.RouterIf)
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", l.Router, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("count bfd admin down in %s (nft): %w: %s", l.Router, err, out)
	}
	count = func() (int, error) {
		out, err := exec.Command("ip", "netns", "exec", l.Router, "nft", "list", "counter", "inet", adminDownTable, "admindown").CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("read the bfd admin down counter in %s (nft): %w: %s", l.Router, err, out)
		}
		m := adminDownPackets.FindSubmatch(out)
		if m == nil {
			return 0, fmt.Errorf("no packet count in %q", out)
		}
		return strconv.Atoi(string(m[1]))
	}
	remove = func() error {
		out, err := exec.Command("ip", "netns", "exec", l.Router, "nft", "delete", "table", "inet", adminDownTable).CombinedOutput()
		if err != nil {
			return fmt.Errorf("remove the bfd admin down counter in %s (nft): %w: %s", l.Router, err, out)
		}
		return nil
	}
	return count, remove, nil
}
