package chain

import "fmt"

// CheckDeclaredOnly checks a chain written by a tenant (a Kubernetes
// Service annotation or TrafficPolicy): it may name external interceptors
// and htpasswd files only by the names of the operator's declarations
// (Endpoint, Users), never an address, URL or path of its own, which
// would make l7 send requests with their Authorization and Cookie headers
// anywhere its network reaches, or open any file on its node. The error
// names the field: "interceptors[1].url: ...".
func CheckDeclaredOnly(c Chain) error {
	for i, in := range c {
		switch in.Type {
		case TypeExternal:
			for _, f := range []struct{ name, value string }{{"address", in.Address}, {"url", in.URL}, {"transport", in.Transport}} {
				if f.value != "" {
					return fmt.Errorf("interceptors[%d].%s: a Kubernetes object may not name where an interceptor is; "+
						"name an endpoint the operator declared with \"endpoint\"", i, f.name)
				}
			}
			if in.Endpoint == "" {
				return fmt.Errorf("interceptors[%d].endpoint: required: the name of an interceptor endpoint the operator declared", i)
			}
		case TypeBasicAuth:
			if in.UsersFile != "" {
				return fmt.Errorf("interceptors[%d].usersFile: a Kubernetes object may not name a file; "+
					"name an htpasswd file the operator declared with \"users\"", i)
			}
			if in.Users == "" {
				return fmt.Errorf("interceptors[%d].users: required: the name of an htpasswd file the operator declared", i)
			}
		}
	}
	return nil
}
