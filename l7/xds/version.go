package xds

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"

	"github.com/tlbproject/tlb/l7/validate"
)

// typeVersion is the hash of one type's resources (sorted by name) from
// their content sums, prefixed with the generation: "<len>:<name>:" and
// the sum of each. Equal content gives equal versions across restarts and
// replicas.
func typeVersion(generation string, items []types.Resource, sums []validate.Sum) string {
	h := sha256.New()
	var buf []byte
	for i, r := range items {
		name := cachev3.GetResourceName(r)
		buf = strconv.AppendInt(buf[:0], int64(len(name)), 10)
		buf = append(buf, ':')
		buf = append(buf, name...)
		buf = append(buf, ':')
		buf = append(buf, sums[i][:]...)
		h.Write(buf)
	}
	return generation + "-" + hex.EncodeToString(h.Sum(nil))[:16]
}
