package model

import (
	"strings"
	"testing"
)

// envoySizes are RE2 program sizes as Envoy 1.40 reported them ("RE2
// program size of N" with re2.max_program_size.error_level at 1).
// integration/l7envoy/edge's TestRegexProgramSizeAgainstEnvoy asks the
// real Envoy again for these and more.
var envoySizes = map[string]int{
	"a":                                     5,
	"^abc$":                                 4,
	"^/api/public/v1/task/create$":          4,
	"^/todolist/.*$":                        6,
	"[^/]+":                                 7,
	`\w+`:                                   8,
	`\p{L}+`:                                12,
	"é":                                     6,
	"(?i)abc":                               7,
	"foo|bar|baz":                           11,
	"(a)(b)(c)":                             13,
	"a{0,5}":                                14,
	"[a-z]{1,10}":                           23,
	"[a-zA-Z0-9._-]{0,200}":                 1004,
	"^/static/[a-zA-Z0-9._-]{0,200}/":       1005,
	"^/static/[a-zA-Z0-9._-]{0,20}/":        105,
	`(^|.*;\s*)ab=b(;.*|\s*)$`:              30,
	"^/users/[0-9]+/orders/[0-9]+$":         16,
	".{0,10}":                               34,
	"(a|ab)(c|bcd)(d*)":                     18,
	`^https://([a-z0-9-]+\.)*example\.com$`: 22,
}

// TestRegexProgramSizeBoundsEnvoys: for the shapes routes use, the
// estimate is never below what Envoy counts (a regex we accept must not
// cost a route table) and close above it (else we would refuse regexes
// Envoy takes).
func TestRegexProgramSizeBoundsEnvoys(t *testing.T) {
	for expr, want := range envoySizes {
		got, err := RegexProgramSize(expr)
		if err != nil {
			t.Errorf("%q: %v", expr, err)
			continue
		}
		if got < want || got > want+want/4+2 {
			t.Errorf("%q: estimate %d, Envoy counts %d", expr, got, want)
		}
	}
}

// TestCheckRegex: the syntax, the bytes Envoy matches and the size.
func TestCheckRegex(t *testing.T) {
	for expr, want := range map[string]string{
		"^/api/v[0-9]+/.*$":               "",
		"^/static/[a-zA-Z0-9._-]{0,20}/":  "",
		"^/static/[a-zA-Z0-9._-]{0,200}/": "too complex for the gateway: its RE2 program has about 1005 instructions, at most 1000 are allowed",
		"(a|b":                            "not a valid RE2 expression",
		`\x{100}`:                         "not one byte",
		"(?:[a-z]{0,100}){0,100}":         "invalid repeat count", // nested repeats over 1000, as RE2
	} {
		err := CheckRegex(expr)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", expr, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want %q", expr, err, want)
		}
	}
}

// FuzzRegexProgramSize: any pattern either is refused or gets a size of
// at least Envoy's smallest program.
func FuzzRegexProgramSize(f *testing.F) {
	for expr := range envoySizes {
		f.Add(expr)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		n, err := RegexProgramSize(expr)
		if err == nil && n < 2 {
			t.Fatalf("%q: size %d", expr, n)
		}
	})
}
