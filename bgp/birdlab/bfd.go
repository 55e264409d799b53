package birdlab

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// BFD is the router's `protocol bfd` timers, on every interface.
type BFD struct {
	// MinRxMilliseconds and MinTxMilliseconds are BIRD's min rx and min tx intervals.
	MinRxMilliseconds, MinTxMilliseconds int
	// Multiplier is BIRD's detection multiplier.
	Multiplier int
}

// BFDSession is one BFD session as `birdc show bfd sessions` lists it.
type BFDSession struct {
	// Address is the neighbour's address.
	Address string
	// State is "Up", "Down", "Init" or "AdminDown".
	State string
	// Since is when it entered State, as BIRD prints it.
	Since string
}

// BFDSessions returns the router's BFD sessions.
func (r *Router) BFDSessions(ctx context.Context) ([]BFDSession, error) {
	out, err := r.Birdc(ctx, "show", "bfd", "sessions")
	if err != nil {
		return nil, err
	}
	return ParseBFDSessions(out), nil
}

// ParseBFDSessions reads `birdc show bfd sessions` output: one line per
// session, "ADDRESS IFACE STATE SINCE INTERVAL TIMEOUT".
func ParseBFDSessions(out string) []BFDSession {
	var ss []BFDSession
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.Contains(f[0], ".") || strings.HasSuffix(f[0], ":") {
			continue
		}
		switch f[2] {
		case "Up", "Down", "Init", "AdminDown":
			ss = append(ss, BFDSession{Address: f[0], State: f[2], Since: f[3]})
		}
	}
	return ss
}

// LastError returns the "Last error" line of neighbor name's protocol, or
// "" when BIRD shows none: why the session last went down.
func (r *Router) LastError(ctx context.Context, name string) (string, error) {
	out, err := r.Birdc(ctx, "show", "protocols", "all", name)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if _, msg, ok := strings.Cut(line, "Last error:"); ok {
			return strings.TrimSpace(msg), nil
		}
	}
	return "", nil
}

// cutTable is the nftables table CutDirectors adds in the directors' namespace.
const cutTable = "tlbbirdlab_cut"

// CutDirectors drops every packet the directors' side sends or receives on
// its link (an nftables table in its namespace), as a dead link would,
// without taking an interface down (which BIRD would notice on its own and
// which would prove nothing about BFD). The returned func heals the link.
func (l *Lab) CutDirectors(ctx context.Context) (heal func() error, err error) {
	script := fmt.Sprintf(`table inet %[1]s {
  chain in { type filter hook input priority -300; policy accept; iifname "%[2]s" drop; }
  chain out { type filter hook output priority -300; policy accept; oifname "%[2]s" drop; }
}
`, cutTable, l.DirectorIf)
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", l.Directors, "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("cut the link of %s (nft): %w: %s", l.Directors, err, out)
	}
	return func() error {
		out, err := exec.Command("ip", "netns", "exec", l.Directors, "nft", "delete", "table", "inet", cutTable).CombinedOutput()
		if err != nil {
			return fmt.Errorf("heal the link of %s (nft): %w: %s", l.Directors, err, out)
		}
		return nil
	}, nil
}
