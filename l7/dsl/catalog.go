package dsl

import (
	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
)

// KindInterceptors declares what tenants' interceptor chains may name
// (model.InterceptorCatalog).
const KindInterceptors = "gateway/interceptors/v1"

// catalogDoc is a gateway/interceptors/v1 file.
type catalogDoc struct {
	Kind      string            `json:"kind"`
	Name      string            `json:"name"`
	Group     string            `json:"group,omitempty"`
	External  []externalDeclDoc `json:"external,omitempty"`
	BasicAuth []usersDeclDoc    `json:"basicAuth,omitempty"`
}

// externalDeclDoc is one declared interceptor endpoint: an address
// (gRPC) or a URL (REST); transport may say which, or follows from them.
type externalDeclDoc struct {
	Name       string   `json:"name"`
	Transport  string   `json:"transport,omitempty"`
	Address    string   `json:"address,omitempty"`
	URL        string   `json:"url,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"`
}

// usersDeclDoc is one declared htpasswd file.
type usersDeclDoc struct {
	Name       string   `json:"name"`
	UsersFile  string   `json:"usersFile"`
	Namespaces []string `json:"namespaces,omitempty"`
}

func (d *catalogDoc) toModel(file string) (*model.InterceptorCatalog, error) {
	c := &model.InterceptorCatalog{Name: d.Name, Group: orDefault(d.Group), Origin: model.Origin(file)}
	for _, e := range d.External {
		t := e.Transport
		if t == "" {
			t = chain.TransportGRPC
			if e.URL != "" {
				t = chain.TransportREST
			}
		}
		c.External = append(c.External, model.ExternalEndpoint{Name: e.Name, Transport: t, Address: e.Address, URL: e.URL, Namespaces: e.Namespaces})
	}
	for _, u := range d.BasicAuth {
		c.UsersFiles = append(c.UsersFiles, model.UsersFile{Name: u.Name, Path: u.UsersFile, Namespaces: u.Namespaces})
	}
	if ps := model.CheckInterceptorCatalog(*c); len(ps) > 0 {
		return nil, &FieldError{File: file, Field: ps[0].Field, Msg: ps[0].Msg}
	}
	return c, nil
}
