package model

import (
	"fmt"
	"regexp"
	"regexp/syntax"
)

// MaxRegexProgramSize is the largest program, as RE2 counts it (Envoy's
// "program size"), that a regex of the configuration may compile to, by
// RegexProgramSize's estimate. Envoy refuses a larger program with the
// whole resource holding it (a route table, say) unless its runtime
// allows more: the gateway's bootstrap raises Envoy's limit from its
// default of 100 to twice this (translate.RegexRuntime), more than the
// estimate ever missed by (see RegexProgramSize).
const MaxRegexProgramSize = 1000

// CheckRegex checks a regex the configuration hands to Envoy: RE2
// syntax, as Envoy matches it (bytes: Envoy 1.40's RE2 reads pattern and
// input as Latin-1, so "." is one byte and \x{100} is refused), and a
// program of at most MaxRegexProgramSize instructions. The error says
// which.
func CheckRegex(expr string) error {
	if _, err := regexp.Compile(expr); err != nil {
		return fmt.Errorf("not a valid RE2 expression: %w", err)
	}
	n, err := RegexProgramSize(expr)
	if err != nil {
		return err
	}
	if n > MaxRegexProgramSize {
		return fmt.Errorf("too complex for the gateway: its RE2 program has about %d instructions, at most %d are allowed "+
			"(shorten bounded repetitions such as {0,200} and character classes)", n, MaxRegexProgramSize)
	}
	return nil
}

// RegexProgramSize estimates the size of the RE2 program Envoy compiles
// expr to (RE2::ProgramSize, what Envoy compares with
// re2.max_program_size): RE2's compiler counted instruction by
// instruction, following RE2 in what it leaves out: a leading ^ and a
// trailing $ (RE2 records them as anchors), the literal after a leading ^
// (matched apart, as the required prefix), and the unanchored ".*?" loop
// when anchored. RE2 then flattens its program, which mostly removes
// instructions but adds some for loops inside alternations. Checked
// against Envoy 1.40 by TestRegexProgramSizeAgainstEnvoy
// (integration/l7envoy/edge), on more than 1,500 regexes: Envoy's count
// is exact or below the estimate for the plain shapes routes use, and at
// most 1.6 times it for nested loops and alternations (1.3 above 100
// instructions).
func RegexProgramSize(expr string) (int, error) {
	// RE2 in Envoy reads the pattern as Latin-1: each byte one character.
	runes := make([]rune, len(expr))
	for i := range len(expr) {
		runes[i] = rune(expr[i])
	}
	re, err := syntax.Parse(string(runes), syntax.Perl)
	if err != nil {
		return 0, fmt.Errorf("not a valid RE2 expression: %w", err)
	}
	re = re.Simplify()
	if err := latin1Only(re); err != nil {
		return 0, err
	}
	const fail, match, dotStar = 1, 1, 2
	base := fail + match + dotStar
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		subs = re.Sub
	}
	if len(subs) > 0 && subs[len(subs)-1].Op == syntax.OpEndText {
		subs = subs[:len(subs)-1]
	}
	if len(subs) > 0 && subs[0].Op == syntax.OpBeginText {
		subs = subs[1:]
		switch {
		case len(subs) > 0 && subs[0].Op == syntax.OpLiteral:
			subs = subs[1:] // the required prefix; the rest is unanchored
		default:
			base = fail + match
		}
	}
	n := base
	for _, s := range subs {
		n += progSize(s)
	}
	return n, nil
}

// latin1Only refuses a literal beyond one byte (\x{100}): RE2 in Latin-1
// refuses the escape.
func latin1Only(re *syntax.Regexp) error {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r > 0xff {
				return fmt.Errorf("the gateway matches bytes (Latin-1): %q is not one byte", r)
			}
		}
	}
	for _, s := range re.Sub {
		if err := latin1Only(s); err != nil {
			return err
		}
	}
	return nil
}

// progSize counts RE2's instructions for re (simplified, so without
// counted repetitions), before flattening.
func progSize(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass:
		return max(1, classRanges(re.Rune))
	case syntax.OpAnyCharNotNL:
		return 2 // [\x00-\x09] and [\x0b-\xff]
	case syntax.OpCapture:
		return progSize(re.Sub[0]) + 2
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return progSize(re.Sub[0]) + 1
	case syntax.OpRepeat: // not left by Simplify; counted as RE2 expands it
		s := progSize(re.Sub[0])
		if re.Max < 0 {
			return re.Min*s + s + 1
		}
		return re.Max*s + (re.Max - re.Min)
	case syntax.OpConcat, syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			n += progSize(s)
		}
		if re.Op == syntax.OpAlternate {
			n += len(re.Sub) - 1
		}
		return n
	default: // any byte, empty match, no match, anchors, word boundaries
		return 1
	}
}

// classRanges is the number of byte ranges RE2 compiles a character
// class to: its ranges within Latin-1, without those inside A-Z when the
// class treats A-Z as it treats a-z (RE2 then folds case on a-z instead).
func classRanges(pairs []rune) int {
	in := func(c rune) bool {
		for i := 0; i < len(pairs); i += 2 {
			if pairs[i] <= c && c <= pairs[i+1] {
				return true
			}
		}
		return false
	}
	folds := true
	for c := 'a'; c <= 'z'; c++ {
		folds = folds && in(c) == in(c-'a'+'A')
	}
	n := 0
	for i := 0; i < len(pairs); i += 2 {
		lo, hi := pairs[i], min(pairs[i+1], 0xff)
		if lo > hi || (folds && 'A' <= lo && hi <= 'Z') {
			continue
		}
		n++
	}
	return n
}
