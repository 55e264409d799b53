package ipam

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/api"
)

func TestParseAnnotations(t *testing.T) {
	tests := map[string]struct {
		ann     map[string]string
		def     Environment
		want    ServiceRequest
		wantErr string
	}{
		"environment":        {ann: map[string]string{api.AnnotationEnvironment: "production"}, want: ServiceRequest{Request: Request{Environment: "production"}}},
		"default env":        {ann: nil, def: "dev", want: ServiceRequest{Request: Request{Environment: "dev"}}},
		"pool skips default": {ann: map[string]string{api.AnnotationPool: "prod-a.1"}, def: "dev", want: ServiceRequest{Request: Request{Pool: "prod-a.1"}}},
		"vip and l7": {ann: map[string]string{api.AnnotationVIP: "203.0.113.10", api.AnnotationL7: "true"},
			want: ServiceRequest{Request: Request{Addresses: []netip.Addr{netip.MustParseAddr("203.0.113.10")}}, L7: true}},
		"one vip per family": {ann: map[string]string{api.AnnotationVIP: "203.0.113.10, 2001:db8::10"},
			want: ServiceRequest{Request: Request{Addresses: []netip.Addr{netip.MustParseAddr("203.0.113.10"), netip.MustParseAddr("2001:db8::10")}}}},
		"two vips of one family": {ann: map[string]string{api.AnnotationVIP: "2001:db8::10,2001:db8::11"}, wantErr: "names two IPv6 addresses"},
		"empty second vip":       {ann: map[string]string{api.AnnotationVIP: "203.0.113.10,"}, wantErr: "annotation tlb.io/vip: \"\" is not"},
		"nothing and no default": {ann: map[string]string{}, wantErr: "set tlb.io/environment"},
		"bad environment":        {ann: map[string]string{api.AnnotationEnvironment: "Prod!"}, wantErr: "annotation tlb.io/environment: \"Prod!\""},
		"bad pool":               {ann: map[string]string{api.AnnotationPool: "-x"}, wantErr: "annotation tlb.io/pool"},
		"bad vip":                {ann: map[string]string{api.AnnotationVIP: "203.0.113.300"}, wantErr: "annotation tlb.io/vip"},
		"vip with zone":          {ann: map[string]string{api.AnnotationVIP: "fe80::1%eth0"}, wantErr: "annotation tlb.io/vip"},
		"vip loopback":           {ann: map[string]string{api.AnnotationVIP: "127.0.0.1"}, wantErr: "annotation tlb.io/vip"},
		"vip mapped":             {ann: map[string]string{api.AnnotationVIP: "::ffff:203.0.113.1"}, wantErr: "annotation tlb.io/vip"},
		"bad l7":                 {ann: map[string]string{api.AnnotationEnvironment: "e", api.AnnotationL7: "yes"}, wantErr: "annotation tlb.io/l7: \"yes\" is not a boolean"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseAnnotations(tc.ann, tc.def)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// FuzzParseAnnotations checks that whatever a user writes, the parser either
// rejects it with an error naming an annotation or returns a request the
// allocator can use.
func FuzzParseAnnotations(f *testing.F) {
	f.Add("production", "", "", "")
	f.Add("", "pool-a", "203.0.113.10", "true")
	f.Add("", "", "2001:db8::1", "false")
	f.Add("Prod", "a..b", "1.2.3.4.5", "TRUE")
	f.Add("", "", "::ffff:1.2.3.4", "")
	f.Add("", "", "203.0.113.10,2001:db8::10", "")
	f.Add("", "", "2001:db8::10,2001:db8::11", "")
	f.Fuzz(func(t *testing.T, env, pool, vip, l7 string) {
		ann := map[string]string{}
		for k, v := range map[string]string{api.AnnotationEnvironment: env, api.AnnotationPool: pool, api.AnnotationVIP: vip, api.AnnotationL7: l7} {
			if v != "" {
				ann[k] = v
			}
		}
		sr, err := ParseAnnotations(ann, "")
		if err != nil {
			if !strings.Contains(err.Error(), "tlb.io/") {
				t.Fatalf("error names no annotation: %v", err)
			}
			return
		}
		if sr.Environment == "" && sr.Pool == "" && len(sr.Addresses) == 0 {
			t.Fatalf("accepted a request that asks for nothing: %+v", sr)
		}
		if len(sr.Addresses) > 2 {
			t.Fatalf("accepted %d addresses, more than one per family", len(sr.Addresses))
		}
		for _, addr := range sr.Addresses {
			if !addr.IsValid() || addr.Zone() != "" || addr.Is4In6() {
				t.Fatalf("accepted address %s", addr)
			}
		}
		if sr.Environment != "" && string(sr.Environment) != env {
			t.Fatalf("environment %q, annotation %q", sr.Environment, env)
		}
	})
}

func FuzzParseBool(f *testing.F) {
	for _, s := range []string{"true", "false", "True", "1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBool("k", s)
		if err == nil && (s != "true" && s != "false" || b != (s == "true")) {
			t.Fatalf("ParseBool(%q) = %v, nil", s, b)
		}
	})
}
