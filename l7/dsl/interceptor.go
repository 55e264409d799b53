package dsl

import "encoding/json"

// withDefaultEndpoint fills in, on each external interceptor of a route
// that names none, the service's interceptor block (the seed's
// "interceptor: {address: todolist:8081}"): transport (default grpc, or
// rest with a url) and address or url, or the name of a declared
// endpoint. Anything it cannot read is
// returned as is, for chain.Decode to report.
func withDefaultEndpoint(raw json.RawMessage, def *interceptorDoc) json.RawMessage {
	if def == nil {
		return raw
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return raw
	}
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	transport := def.Transport
	if transport == "" {
		transport = "grpc"
		if def.URL != "" {
			transport = "rest"
		}
	}
	for _, it := range items {
		var typ string
		if it == nil || json.Unmarshal(it["type"], &typ) != nil || typ != "external" {
			continue
		}
		_, hasAddr := it["address"]
		_, hasURL := it["url"]
		_, hasTransport := it["transport"]
		_, hasEndpoint := it["endpoint"]
		if hasAddr || hasURL || hasTransport || hasEndpoint {
			continue // the route names its own endpoint
		}
		if def.Endpoint != "" {
			it["endpoint"] = str(def.Endpoint)
			continue
		}
		it["transport"] = str(transport)
		if def.Address != "" {
			it["address"] = str(def.Address)
		}
		if def.URL != "" {
			it["url"] = str(def.URL)
		}
	}
	out, err := json.Marshal(items)
	if err != nil {
		return raw
	}
	return out
}
