package tlscert_test

import (
	"testing"

	"github.com/tlbproject/tlb/l7/tlscert"
)

// FuzzCheck: Secret data and files are outside input; Check must refuse
// garbage without panicking, and accept only when the leaf parses.
func FuzzCheck(f *testing.F) {
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, chain, key []byte) {
		if _, err := tlscert.Check(chain, key, now); err == nil {
			if _, lerr := tlscert.Leaf(chain); lerr != nil {
				t.Fatalf("accepted a chain whose leaf does not parse: %v", lerr)
			}
		}
	})
}
