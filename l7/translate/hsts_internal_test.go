package translate

import (
	"testing"

	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
)

// TestLocalReplyHSTSKeepsTheRolesMapper: on an HTTPS listener the JWT
// and RBAC mappers stay first and unchanged but for the HSTS header
// (only the first matching mapper applies, so they must carry it too),
// and the catch-all comes last; the mappers it was given are not changed.
func TestLocalReplyHSTSKeepsTheRolesMapper(t *testing.T) {
	auth := authLocalReply(true)
	got := withLocalReplyHSTS(auth)
	if !proto.Equal(auth, authLocalReply(true)) {
		t.Fatal("the auth mappers were changed in place")
	}
	ms := got.GetMappers()
	if len(ms) != 3 || ms[2].GetStatusCode() != nil || len(ms[2].GetHeadersToAdd()) != 1 {
		t.Fatalf("mappers = %v", ms)
	}
	for i := range 2 {
		m := proto.Clone(ms[i]).(*hcm.ResponseMapper)
		hs := m.GetHeadersToAdd()
		if last := hs[len(hs)-1]; last.GetHeader().GetKey() != model.HSTSHeader || last.GetHeader().GetValue() != hstsFromRoute {
			t.Fatalf("mapper %d headers = %v", i, hs)
		}
		m.HeadersToAdd = hs[:len(hs)-1]
		if len(m.HeadersToAdd) == 0 {
			m.HeadersToAdd = nil
		}
		if !proto.Equal(m, auth.GetMappers()[i]) {
			t.Errorf("mapper %d = %v, want %v plus the hsts header", i, ms[i], auth.GetMappers()[i])
		}
	}
}
