package gatewayconformance

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
)

// SkipListFile is the skip list's file name in this package's directory.
const SkipListFile = "skip-data-plane.txt"

const skipListHeader = `# The upstream Gateway API conformance tests that send traffic through the
# gateway. Envoy cannot run where the suite runs, so the harness skips exactly
# these; every other test runs unmodified. Generated, do not edit: the list is
# what TestSkipListIsTheDataPlaneTests derives from the suite's source
# (go test ./integration/gatewayconformance -run TestSkipList -update).
# One test short name a line, then the reason.
`

// ReadSkipList reads a skip list: test short name -> reason.
func ReadSkipList(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the skip list: %w", err)
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, ok := strings.Cut(line, "#")
		name, reason = strings.TrimSpace(name), strings.TrimSpace(reason)
		if !ok || reason == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("%s:%d: want \"TestShortName # reason\", got %q", path, n, line)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s:%d: test %s listed twice", path, n, name)
		}
		out[name] = reason
	}
	return out, sc.Err()
}

// FormatSkipList renders a skip list sorted by name, with its header.
func FormatSkipList(tests map[string]string) []byte {
	names := make([]string, 0, len(tests))
	for n := range tests {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString(skipListHeader)
	for _, n := range names {
		fmt.Fprintf(&b, "%s # %s\n", n, tests[n])
	}
	return b.Bytes()
}
