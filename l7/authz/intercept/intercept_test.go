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
