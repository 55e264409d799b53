package translate

import (
	"testing"

	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
)

// TestLocalReplyHSTSKeepsTheRolesMapper: on an HTTPS listener the RBAC
// mapper stays first and unchanged but for the HSTS header (only the
// first matching mapper applies, so it must carry it too), and the
// catch-all comes last; the mapper it was given is not changed.
func TestLocalReplyHSTSKeepsTheRolesMapper(t *testing.T) {
	roles := rolesLocalReply()
	got := withLocalReplyHSTS(roles)
	if !proto.Equal(roles, rolesLocalReply()) {
		t.Fatal("the roles mapper was changed in place")
	}
	ms := got.GetMappers()
	if len(ms) != 2 || ms[1].GetStatusCode() != nil || len(ms[1].GetHeadersToAdd()) != 1 {
		t.Fatalf("mappers = %v", ms)
	}
	first := proto.Clone(ms[0]).(*hcm.ResponseMapper)
	hs := first.GetHeadersToAdd()
	if last := hs[len(hs)-1]; last.GetHeader().GetKey() != model.HSTSHeader || last.GetHeader().GetValue() != hstsFromRoute {
		t.Fatalf("roles mapper headers = %v", hs)
	}
	first.HeadersToAdd = hs[:len(hs)-1]
	if !proto.Equal(first, roles.GetMappers()[0]) {
		t.Errorf("roles mapper = %v, want %v plus the hsts header", ms[0], roles.GetMappers()[0])
	}
}
