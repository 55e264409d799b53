package xds

import (
	"crypto/sha256"
	"encoding/hex"
	"runtime/debug"
	"strings"

	"github.com/tlbproject/tlb/l7/translate"
)

// Generation is the schema generation this build serves: "tlb.l7." and a
// hash of the build's version (a release tag, or "dev") and of what its
// translator makes of a reference config that exercises every kind of
// listener, route and upstream (so a change of the Envoy API types it
// fills shows too). A change to any of them is a new generation, without anyone
// having to remember to bump a constant. Gateways declare the generation
// of the l7 that wrote their bootstrap (node metadata "tlb.schema"); the
// server refuses any other, so a gateway never mixes two generations.
func Generation() string {
	h := sha256.New()
	h.Write([]byte(buildVersion()))
	h.Write([]byte{0})
	translate.WriteReference(h)
	return "tlb.l7." + hex.EncodeToString(h.Sum(nil))[:12]
}

// buildVersion is the main module's version when the binary was built
// from a release tag, else "dev". (Test binaries carry no module
// information, so nothing else from the build info can be used: the
// generation a test declares must be the one its server serves.)
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if mv := bi.Main.Version; strings.HasPrefix(mv, "v") && !strings.Contains(mv, "-") && !strings.Contains(mv, "+") {
		return mv
	}
	return "dev"
}

// BootstrapGeneration is the generation of what this build's resources
// expect from a gateway's bootstrap: "tlb.bootstrap." and a hash of
// translate.WriteBootstrapContract. Unlike Generation it does not change
// with the build's version or with translator changes that the bootstrap
// does not see, so a gateway whose bootstrap an older l7 wrote (node
// metadata "tlb.bootstrap") is served by a newer one as long as this is
// equal: an l7 upgrade does not need Envoy to restart.
func BootstrapGeneration() string {
	h := sha256.New()
	translate.WriteBootstrapContract(h)
	return "tlb.bootstrap." + hex.EncodeToString(h.Sum(nil))[:12]
}
