package validate

import (
	"errors"
	"fmt"
	"strings"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
)

// validator is what protoc-gen-validate generates on every Envoy message.
type validator interface{ ValidateAll() error }

// Set checks a whole resource set (type URL -> resources) and returns every
// problem found, joined, or nil when it may be published.
func Set(set map[resource.Type][]types.Resource) error {
	_, err := NewMemo().Set(set)
	return err
}

func shortType(t resource.Type) string { return t[strings.LastIndex(t, ".")+1:] }

// Message runs ValidateAll on m and on every message packed in an Any
// anywhere inside it, recursively.
func Message(m proto.Message) error {
	var errs []error
	walk(m.ProtoReflect(), func(msg proto.Message, path string) {
		if v, ok := msg.(validator); ok {
			if err := v.ValidateAll(); err != nil {
				if path != "" && path != "." {
					err = fmt.Errorf("in %s: %w", path, err)
				}
				errs = append(errs, err)
			}
		}
	}, false, "", &errs)
	return errors.Join(errs...)
}

// walk visits m and every message packed in an Any below it. Top-level
// ValidateAll already recurses into ordinary sub-messages, so only Any
// contents need a visit of their own.
func walk(m protoreflect.Message, visit func(proto.Message, string), all bool, path string, errs *[]error) {
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			*errs = append(*errs, fmt.Errorf("in %s: cannot unpack %s: %w", path, a.GetTypeUrl(), err))
			return
		}
		p := strings.TrimPrefix(a.GetTypeUrl(), "type.googleapis.com/")
		visit(inner, p)
		walk(inner.ProtoReflect(), visit, all, p, errs)
		return
	}
	if path == "" || all {
		visit(m.Interface(), path)
	}
	if path == "" {
		path = "."
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walk(l.Get(i).Message(), visit, all, path, errs)
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				walk(mv.Message(), visit, all, path, errs)
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			walk(v.Message(), visit, all, path, errs)
		}
		return true
	})
}

// filterChains reports two filter chains of one listener with equal
// matches: Envoy would refuse the listener.
func filterChains(l *listener.Listener) []error {
	var errs []error
	chains := l.GetFilterChains()
	for i := range chains {
		for j := 0; j < i; j++ {
			if proto.Equal(chains[i].GetFilterChainMatch(), chains[j].GetFilterChainMatch()) {
				errs = append(errs, fmt.Errorf("listener %q: filter chains %d and %d have the same match", l.GetName(), j, i))
			}
		}
	}
	return errs
}

// listenerPorts reports two listeners bound to one address and port.
func listenerPorts(ls []types.Resource) []error {
	var errs []error
	seen := map[string]string{}
	for _, r := range ls {
		l := r.(*listener.Listener)
		sa := l.GetAddress().GetSocketAddress()
		if sa == nil {
			continue
		}
		k := fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue())
		if o, ok := seen[k]; ok {
			errs = append(errs, fmt.Errorf("listener %q: address %s is already used by listener %q", l.GetName(), k, o))
		}
		seen[k] = l.GetName()
	}
	return errs
}
