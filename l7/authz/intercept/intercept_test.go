package intercept

import "testing"

func TestRequestCookie(t *testing.T) {
	r := &Request{Headers: map[string]string{"cookie": `a=1; session=abc; quoted="q v"; empty=; sessionx=no`}}
	for name, want := range map[string]string{"a": "1", "session": "abc", "quoted": "q v", "empty": ""} {
		if got, ok := r.Cookie(name); !ok || got != want {
			t.Errorf("Cookie(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"sess", "missing", ""} {
		if got, ok := r.Cookie(name); ok {
			t.Errorf("Cookie(%q) = %q, want none", name, got)
		}
	}
}

func FuzzRequestCookie(f *testing.F) {
	f.Add("a=1; session=abc", "session")
	f.Add(`q="v"; ;=;`, "q")
	f.Fuzz(func(t *testing.T, header, name string) {
		r := &Request{Headers: map[string]string{"cookie": header}}
		v, ok := r.Cookie(name)
		if !ok && v != "" {
			t.Fatalf("no cookie %q but value %q", name, v)
		}
		// A cookie appended last is always found, whatever came before,
		// unless an earlier one has the same name.
		if name == "" || len(name) > 64 || !token(name) {
			return
		}
		r.Headers["cookie"] = header + "; " + name + "=zz"
		if _, ok := (&Request{Headers: map[string]string{"cookie": header}}).Cookie(name); ok {
			return
		}
		if got, ok := r.Cookie(name); !ok || got != "zz" {
			t.Fatalf("Cookie(%q) in %q = %q, %v; want zz", name, r.Headers["cookie"], got, ok)
		}
	})
}

// token reports whether s can be a cookie name.
func token(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == ';' || c == '=' || c == '"' {
			return false
		}
	}
	return true
}
