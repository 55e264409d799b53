package gatewayapi

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxName is the longest model name (l7/model's name rule).
const maxName = 63

// modelName joins parts with dots into a model name (Kubernetes
// namespaces hold no dots, so namespace-first names are unambiguous). A
// name longer than the model allows keeps its head and ends in a hash of
// the whole, so it stays unique and stable.
func modelName(parts ...string) string {
	n := strings.ToLower(strings.Join(parts, "."))
	if len(n) <= maxName {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	h := hex.EncodeToString(sum[:])[:10]
	head := strings.TrimRight(n[:maxName-len(h)-1], ".-")
	return head + "-" + h
}

// gatewayModelName is the model gateway of the Gateway namespace/name.
func gatewayModelName(namespace, name string) string { return modelName("gw", namespace, name) }
