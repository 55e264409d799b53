package chain

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestEncodeDecodeRoundTripAndDefaults(t *testing.T) {
	in := Chain{
		{Type: TypeSession, Cookie: "sid", Timeout: Duration(50 * time.Millisecond)},
		{Type: TypeCSRF, AllowedOrigins: []string{"https://app.example.com"}},
		{Type: TypeCSP, Policy: "default-src 'self'"},
		{Type: TypeExternal, ID: "todolist", Transport: TransportGRPC, Address: "todolist:8081",
			FailOpen: true, Parameters: map[string]string{"method": "authorize_create"}},
	}
	value, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"type":"sessionInterceptor","timeout":"50ms","cookie":"sid"},` +
		`{"type":"csrfInterceptor","allowedOrigins":["https://app.example.com"]},` +
		`{"type":"cspInterceptor","policy":"default-src 'self'"},` +
		`{"type":"external","failOpen":true,"id":"todolist","transport":"grpc","address":"todolist:8081","parameters":{"method":"authorize_create"}}]`
	if value != want {
		t.Errorf("Encode:\n got %s\nwant %s", value, want)
	}
	got, err := Decode(value)
	if err != nil {
		t.Fatal(err)
	}
	wantDecoded := Chain{
		{Type: TypeSession, Cookie: "sid", Timeout: Duration(50 * time.Millisecond), OnMissing: OnMissingUnauthorized,
			Headers: map[string]string{"user": "x-user-id", "roles": "x-user-roles"}},
		{Type: TypeCSRF, Timeout: Duration(DefaultTimeout), AllowedOrigins: []string{"https://app.example.com"},
			TokenHeader: "x-csrf-token", TokenCookie: "csrf_token"},
		{Type: TypeCSP, Timeout: Duration(DefaultTimeout), Policy: "default-src 'self'"},
		{Type: TypeExternal, Timeout: Duration(DefaultTimeout), ID: "todolist", Transport: TransportGRPC,
			Address: "todolist:8081", FailOpen: true, Parameters: map[string]string{"method": "authorize_create"}},
	}
	if !reflect.DeepEqual(got, wantDecoded) {
		t.Errorf("Decode:\n got %+v\nwant %+v", got, wantDecoded)
	}
	if empty, err := Encode(nil); err != nil || empty != "[]" {
		t.Errorf("Encode(nil) = %q, %v; want []", empty, err)
	}
}

func TestEncodeRefusesWhatDecodeWould(t *testing.T) {
	_, err := Encode(Chain{{Type: TypeCSP, Policy: "ok"}, {Type: TypeCSP}})
	if err == nil || !strings.HasPrefix(err.Error(), "interceptors[1].policy: required") {
		t.Errorf("Encode error %v, want interceptors[1].policy: required", err)
	}
}

func TestDecodeErrorsNameTheField(t *testing.T) {
	for name, tc := range map[string]struct{ value, want string }{
		"null element":        {`[null]`, "interceptors[0].type: required"},
		"type not string":     {`[{"type":1}]`, "interceptors[0].type: want a string"},
		"negative timeout":    {`[{"type":"csrfInterceptor","timeout":"-1s"}]`, "interceptors[0].timeout: -1s is outside"},
		"too long timeout":    {`[{"type":"csrfInterceptor","timeout":"1h"}]`, "interceptors[0].timeout: 1h0m0s is outside"},
		"bad onMissing":       {`[{"type":"sessionInterceptor","onMissing":"403"}]`, `interceptors[0].onMissing: "403"`},
		"redirect w/o mode":   {`[{"type":"sessionInterceptor","redirectURL":"/login"}]`, "interceptors[0].redirectURL: only with"},
		"relative redirect":   {`[{"type":"sessionInterceptor","onMissing":"redirect","redirectURL":"login"}]`, "interceptors[0].redirectURL:"},
		"upper-case header":   {`[{"type":"sessionInterceptor","headers":{"user":"X-User"}}]`, "interceptors[0].headers.user: \"X-User\" must be lower case"},
		"pseudo header":       {`[{"type":"sessionInterceptor","headers":{"user":":path"}}]`, "interceptors[0].headers.user:"},
		"bad cookie":          {`[{"type":"sessionInterceptor","cookie":"a b"}]`, "interceptors[0].cookie:"},
		"origin with path":    {`[{"type":"csrfInterceptor","allowedOrigins":["https://a.example/x"]}]`, "interceptors[0].allowedOrigins[0]:"},
		"csp newline":         {`[{"type":"cspInterceptor","policy":"a\nb"}]`, "interceptors[0].policy: control characters"},
		"external no id":      {`[{"type":"external","transport":"rest","url":"http://a/x"}]`, "interceptors[0].id:"},
		"bad transport":       {`[{"type":"external","id":"a","transport":"soap"}]`, `interceptors[0].transport: "soap"`},
		"rest with address":   {`[{"type":"external","id":"a","transport":"rest","url":"http://a/x","address":"a:1"}]`, "interceptors[0].address: only with"},
		"rest ftp url":        {`[{"type":"external","id":"a","transport":"rest","url":"ftp://a/x"}]`, "interceptors[0].url:"},
		"bad path pattern":    {`[{"type":"external","id":"a","transport":"grpc","address":"a:1","pathPattern":"("}]`, "interceptors[0].pathPattern:"},
		"second element only": {`[{"type":"cspInterceptor","policy":"x"},{"type":"cspInterceptor","failOpen":"yes","policy":"x"}]`, "interceptors[1].failOpen: want bool"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode(tc.value)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Decode error %v, want prefix %q", err, tc.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`[]`, `[{"type":"sessionInterceptor"}]`,
		`[{"type":"external","id":"a","transport":"grpc","address":"a:1","pathPattern":"^/(?P<x>.*)$"}]`,
		`[{"type":"csrfInterceptor","allowedOrigins":["https://a"]},{"type":"cspInterceptor","policy":"x"}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		c, err := Decode(value)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "interceptors") {
				t.Fatalf("error does not name the field: %v", err)
			}
			return
		}
		// What decodes re-encodes and decodes to the same chain.
		again, err := Encode(c)
		if err != nil {
			t.Fatalf("Encode of a decoded chain: %v", err)
		}
		c2, err := Decode(again)
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, c, c2)
		}
	})
}

func TestEncodeRefusesFieldsOfAnotherType(t *testing.T) {
	_, err := Encode(Chain{{Type: TypeCSP, Policy: "default-src 'self'", Cookie: "sid"}})
	if err == nil || err.Error() != "interceptors[0].cookie: not a field of cspInterceptor" {
		t.Errorf("Encode error %v, want interceptors[0].cookie: not a field of cspInterceptor", err)
	}
}
