package translate

import (
	"hash"

	"google.golang.org/protobuf/proto"
)

// WriteBootstrapContract writes to h what the resources this translator
// makes expect from a gateway's bootstrap (its static part, which only a
// restart of Envoy changes): the authorization cluster routes with
// interceptors name, and the runtime layer regex limits rely on. Two
// builds that write the same bytes can serve each other's gateways; the
// xDS server compares a hash of it (xds.BootstrapGeneration), so an l7
// upgrade that leaves these alone keeps a running Envoy served, and one
// that changes them is refused until Envoy restarts with a new bootstrap.
func WriteBootstrapContract(h hash.Hash) {
	h.Write([]byte(AuthzCluster))
	h.Write([]byte{0})
	for _, m := range []proto.Message{AuthzStaticCluster(DefaultAuthzSocket), RegexRuntime()} {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			panic("translate: encode the bootstrap contract: " + err.Error())
		}
		h.Write(b)
	}
}
