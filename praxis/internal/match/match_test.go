package match

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// naive is the reference: split text into lines and match each one with
// Go's regexp.
func naive(pattern string, literal, ignoreCase bool, text []byte) []string {
	if literal {
		pattern = regexp.QuoteMeta(pattern)
	}
	if ignoreCase {
		pattern = "(?i)" + pattern
	}
	re := regexp.MustCompile(pattern)
	var out []string
	lines := bytes.Split(text, []byte{'\n'})
	if len(text) == 0 || text[len(text)-1] == '\n' {
		lines = lines[:len(lines)-1] // no line after a final newline
	}
	for i, l := range lines {
		if re.Match(l) {
			out = append(out, fmt.Sprintf("%d:%s", i+1, l))
		}
	}
	return out
}

func lines(t testing.TB, m *Matcher, text []byte) []string {
	var out []string
	m.Lines(text, func(n, start, end int) bool {
		out = append(out, fmt.Sprintf("%d:%s", n, text[start:end]))
		return true
	})
	return out
}

const sample = "package main\n\nfunc run(ctx context.Context) error {\n\tif err != nil {\r\n\t\treturn err\n\t}\n" +
	"\tKELVIN \u212a and k and K; ſtraße STRASSE\n  Grüße ÜBER über\n\n" +
	"err != nil err != nil\nerr !=nil\nx.y(z)\n\x00binary\nlast line without newline"

func TestLinesEqualsNaive(t *testing.T) {
	tests := []struct {
		pattern             string
		literal, ignoreCase bool
	}{
		{"err != nil", false, false},
		{"err != nil", false, true},
		{"ERR", true, true},
		{"err", false, false},
		{`func \w+\(ctx context\.Context`, false, false},
		{"^\t", false, false},
		{"^$", false, false},
		{"newline$", false, false},
		{`\{\r?$`, false, false},
		{"x.y(z)", true, false},
		{"x.y(z)", false, false},
		{"k", false, true},
		{"kelvin", false, true},
		{"strasse", false, true},
		{"ſtraße", false, true},
		{"über", false, true},
		{"grüße", false, false},
		{"a|e", false, false},
		{"(return|func) ", false, false},
		{`\s+$`, false, false},
		{`[^a-z]+`, false, false},
		{"x*", false, false},
		{".", false, false},
		{`\bnil\b`, false, false},
		{"binary", false, false},
		{"(?i)Err", false, false},
		{"e{2,}", false, false},
		{"(err)+ !=", false, false},
		{"zzz", false, false},
		{`[0-9]{4}-[0-9]{2}-[0-9]{2}`, false, false},
		{`-[0-9]-`, false, false},
		{`\bx\d\d`, false, false},
		{`(?i)a-b[0-9]`, false, false},
		{`[0-9]-[^0-9]`, false, false},
		{`(\d\d)-(x|y)-\d`, false, false},
		{`ü-[a-z]`, false, false},
		{`^\d-\d$`, false, false},
		// Sets of literals.
		{"err|nil|func", false, false},
		{"return|context", false, false},
		{"return|context", false, true},
		{"(?i)ERR|nil", false, false},
		{"kelvin|über", false, true},
		{"straße|grüße", false, true},
		{"[Ff]unc|[Ee]rr", false, false},
		{"colou?r|x\\.y", false, false},
		{`(err|nil) \S`, false, false},
		{`\b(err|nil)\b`, false, false},
		{"e(rr|x)|zzz", false, false},
		{"^(err|func)", false, false},
		{"(err|nil)$", false, false},
		{"(?i)k|x", false, false},
		// Assertions checked around a literal, with no regular expression
		// after them when they and the bytes checked are the pattern.
		{`\berr\b`, false, false},
		{`\Berr\b`, false, false},
		{`\bnil\B`, false, false},
		{`^err`, false, false},
		{`\Aerr`, false, false},
		{`nil$`, false, false},
		{`nil\z`, false, false},
		{`^\d-\d$`, false, false},
		{`\b\d\d\d\d-\d\d\b`, false, false},
		{`\bü`, false, false},
		{`\bber\b`, false, false},
		{`(?i)\bERR\b`, false, false},
		{`x\b\.`, false, false},
		{`\b\(`, false, false},
		// No literal: a byte of a small set, the rest checked around it.
		{`[A-Z]{3,}`, false, false},
		{`\b[A-Z]{2}\b`, false, false},
		{`[0-9]+`, false, false},
		{`[xyz]\d`, false, false},
		{`[ek]`, false, false}, // two bytes, each found with IndexByte
		{`[,;]\s`, false, false},
		{`[(!]=?`, false, false},
		{`(?i)[a-c]{2}`, false, false},
		{`^[^ ]{3}$`, false, false},
		{`\w+`, false, false},
		{`[ü-ü]`, false, false},
		{`[\t ]+$`, false, false},
		{`\d[a-z]+\d`, false, false},
		// Runs of a class from a literal to the edge of the line.
		{`^\s*return\b`, false, false},
		{`^\s+return`, false, false},
		{`^\t*}$`, false, false},
		{`\{\s*$`, false, false},
		{`err\s+$`, false, false},
		{`^[a-z ]*nil`, false, false},
		{`^x*err`, false, false},
		{`(?i)^\s*ERR`, false, false},
		{`x^\s*return`, false, false}, // never: nothing but a line break ends before ^
		{`err\s*$x`, false, false},
		// Runs of a class from a literal to a byte it has none of.
		{`[a-z]+_[a-z]+\(`, false, false},
		{`func \w+\(`, false, false},
		{`x\.y\s*\(`, false, false},
		{`err\s*!=`, false, false},
		{`e\d*\dr`, false, false}, // \d* and \d overlap: no run check
		{`er*r`, false, false},
		{`\w+\s*!=\s*nil`, false, false},
		{`(?i)e[a-z]*r`, false, false},
		{`x\s+err`, false, false},
		{`[a-z]\d+r`, false, false},
		// Characters of several bytes next to a literal.
		{`(?i)[a-z]+tra`, false, false},
		{`(?i)[a-z]elvin`, false, false},
		{`[^\x00-\x7f]ber`, false, false},
		{`[^a-z]ber`, false, false},
		{`ber[^a-z]`, false, false},
		{`(?i)gr[a-z]ße`, false, false},
		{`(?i)\bk[a-z]*\b`, false, false},
		{`(?i)str[a-z]`, false, false},
		{`(?i)e[a-z]+$`, false, false},
		{`err\d*[^0-9é]`, false, false}, // é is not the byte after the digits
		{`[^0-9é]\d*err`, false, false},
		{`^(?i:k)*x`, false, false},  // k, K or the Kelvin sign, not é
		{`(?i)[^b]aa`, false, false}, // aa after a character of several bytes
		// Branches, each with its own checks.
		{`\b(if|err|nil)\b`, false, false},
		{`\berr(or)?\b`, false, false},
		{greek, false, false},
		{`\w+\s*:=\s*\w+\(`, false, false},
		{`:=\s*\w+\s*\w+\(`, false, false},
		{`x\s*\d*\s+y`, false, false},
		{`x\s*\d+\s*y`, false, false},
		{`x[a-c]*[d-f]+[g-i]*$`, false, false},
		{`^[a-c]*[d-f]+x`, false, false},
		{`^\w+\s*=`, false, false},
		{`\s+\w+\s*=`, false, false},
		{`x\s*\S+\s*y`, false, false},
		{`"[^"]*"`, false, false},
		{`[a-z]+[A-Z][a-z]+`, false, false},
		{`[a-z][A-Z]`, false, false},
		{`[a-f0-9]{32}`, false, false},
		{`\b[0-9a-f]{8}\b`, false, false},
		{`[0-9]{8,}`, false, false},
		{`^[a-f]{8}$`, false, false},
		{`x[0-9]{8}`, false, false},
		{`[0-9]{8}x`, false, false},
		{`[a-f0-9]{8}-[a-f0-9]{4}`, false, false},
		{`[0-9]{7}$`, false, false},
		{`.`, false, false},
		{`.+`, false, false},
		{`.{8,}`, false, false},
		{`.{12}$`, false, false},
		{`[^"]{3}`, false, false},
		{`[^a]`, false, false},
		{`.\b`, false, false},          // a character, then a word's edge
		{`[a-m][b-m]\b`, false, false}, // a hit passed over, then the pair after it
		{`[A-Z][0-9]`, false, false},
		{`[0-9][A-Z]`, false, false},
		{`[^a]x[A-Z]{2}`, false, false},
		{`\b[A-Z][a-z]`, false, false},
		{`[A-Z]$`, false, false},
		{`^[a-z]`, false, false},
		{`[\x{80}-\x{ff}][a-z]`, false, false},
		{`"[^"]+"`, false, false},
		{`'[^']+'`, false, false},
		{`"[^"]*"\s*:`, false, false},
		{`"[^"k]*":`, false, true},
		{`\S+@\S+`, false, false},
		{`[^@]+@`, false, false},
		{`x.*$`, false, false},
		{`x.+$`, false, false},
		{`^.*@`, false, false},
		{`.$`, false, false},
		{`@.+y`, false, false},
		{`"[^a-z"]*"`, false, false},
		{`"[^"é]*"`, false, false},
		{`"[^"\x{100}-\x{10FFFF}]*"`, false, false},
		{`"[^\x{80}-\x{10FFFF}"]*"`, false, false},
		{greek + "|err|nil|return|func|if|ctx|Context|x|é", false, false}, // past a product's bound
		{greek + "|err|nil|return", false, true},
		{`\bx|x\b`, false, false},
		{`\breturn|return\b`, false, false}, // two literals at one place
		{`^(func|type) `, false, false},
		{`(err|nil)\s*$`, false, false},
		{`(ab|cd)x*\w+y`, false, false},
		{`\b[Ee]rr\b`, false, false},
		{`(?i)\berr\b|nil`, false, false},
		// Classes beyond ASCII: the lines of ASCII alone are searched
		// with the pattern's ASCII form.
		{`\p{Greek}`, false, false},
		{`\p{Greek}+`, false, true},
		{`[α-ω]+`, false, false},
		{`\p{Han}`, false, false},
		{`\p{Lu}\p{Ll}+`, false, false},
		{`\p{Lu}\p{Ll}+`, false, true},
		{`\PL`, false, false},
		{`\PL{3}`, false, false},
		{`[^\p{L}\s]`, false, false},
		{`^\pL+$`, false, false},
		{`\pL{5}$`, false, false},
		{`(\p{Greek}|x)y`, false, false},
		{`(\p{Greek}|é)+`, false, false},
		{`\p{Greek}*\p{Lu}`, false, false},
		{`\p{Greek}?\PL\pN`, false, false},
		{`(?i)\x{212a}\pL`, false, false}, // the Kelvin sign folds to k
		{`\x{212a}\pL`, false, false},
		{`(?i)ſ\pL`, false, false},
		{`\p{Lu}\b`, false, false},
		{`\pN\pL`, false, false},
		{`[\x{80}-\x{10FFFF}]`, false, false},
		{`\x{fffd}`, false, false},
		{`[\x{fffd}a]b`, false, false},
		{`a\x{fffd}b|\x{fffd}\x{fffd}`, false, false},
		{`(\p{Greek}|\x{212a})\pL`, false, false},
		{`(?i)(\p{Greek}|\x{212a})\pL`, false, false},
		{`(\p{Greek}|(?i:ſ))\pL`, false, false},
		{`(?i)\x{212a}\x{212a}\pL`, false, false},
		{`(?i)\x{212a}`, false, false},
		{`(?i)(\p{Greek}|\x{212a}k)\pL`, false, false},
		{`(?i)ks`, false, false},
		{`^\p{Greek}*$`, false, false}, // empty lines too
		{`\w+\.\w+\(\)`, false, false},
		{`(\w+)\s*:=\s*(\w+)`, false, false},
		{`[a-zA-Z_][a-zA-Z0-9_]*\(`, false, false},
		{`[a-z]\w+\(`, false, false},
		{`[a-z]\w{2,}\(`, false, false},
		{`\(\w*[A-Z]`, false, false},
		{`\(\w+[A-Z]`, false, false},
		{`x\s*[a-z]+[a-c]`, false, false},
		{`^x\s*[a-z]+[a-c]`, false, false},
		{`x\s*[b-z]+[a-c]`, false, false},
		{`[a-c][a-z]*\s*\(`, false, false},
		{`[à-ÿ][^(]*\(`, false, false},
		// A literal anywhere further on in the line.
		{`func.*\(ctx`, false, false},
		{`[a-z]+[0-9]+[a-z]+`, false, false},
		{`[0-9a-f][0-9]+x`, false, false},
		{`x[0-9]+[0-9a-f]`, false, false},
		{`[0-9a-f][0-9]+[x-z]`, false, false},
		{`[x-z][0-9]+[0-9a-f]`, false, false},
		{`\B[0-9]+[x-z]`, false, false},
		{`[0-9a-f][0-9]+[g-z]`, false, false},
		{`^\t+\S`, false, false},
		{`[[:punct:]]{3,}`, false, false},
		{`x[!-/:-@]{3}`, false, false},
		{`[!-/:-@]{3}\)`, false, false},
		{`[!-/:-@]{3}[a-z]`, false, false},
		{`[!-/:-@]{3}[a-p]`, false, false}, // [a-p] has fewer bytes; the run is looked for
		{`[a-z][!-/:-@]{3}`, false, false},
		{`\W{3}`, false, false},
		{`^\s+\S`, false, false},
		{`^ +\w`, false, false},
		{`\S\s+$`, false, false},
		{`a\t+$`, false, false},
		{`^x+y`, false, false},
		{`^\t+}$`, false, false},
		{`[g-z][0-9]+[0-9a-f]`, false, false},
		{`\B[0-9]+[g-z]`, false, false},
		{`[a-z][0-9]{2,}[a-z]`, false, false},
		{`\w\s+\w`, false, false},
		{`[a-z]+ +[0-9]`, false, false},
		{`x[0-9]+-\b`, false, false},
		{`[a-f][0-9]+[a-f]{2}\b`, false, false},
		{`xa+-[0-9]`, false, false},
		{`x\w*\wz`, false, false},
		{`x.+\(ctx`, false, false},
		{`abcd[^x]+e`, false, false},
		{`xy.+\(ctx`, false, false},
		{`abcd[^x]+ef`, false, false},
		{`func.+\(ctx`, false, false},
		{`func.{2,}\(ctx`, false, false},
		{`^func.*\(ctx`, false, false},
		{`\(ctx.*func`, false, false},
		{`\(ctx.+err$`, false, false},
		{`err[^(]*\(ctx`, false, false},
		{`if .* != nil`, false, false},
		{`x\s*y`, false, false},
		{`ab[a-z]*b`, false, false},
		{`b[a-z]*ab`, false, false},
		{`"[^"]*"x`, false, false},
		// Patterns that match in every line, and some that do not.
		{`.*`, false, false},
		{`^`, false, false},
		{`$`, false, false},
		{`^.*$`, false, false},
		{`(^)(.*)x*$`, false, false},
		{`.*$^`, false, false}, // empty lines alone
		{`^$`, false, false},
		{`^x*$`, false, false},
		{`^(?s:.)*$`, false, false},
		{`^[^\n]*$`, false, false},
		{`^.+`, false, false},
		{`\b`, false, false},
		{`\B`, false, false},
		{`(?:)`, false, false},
		{`$.*`, false, false},
		{`.*^$`, false, false},
		{`^.*^$`, false, false},
		{`(x*)err(\s*)`, false, false},
		{`(e|x)+rr`, false, false},
		{`[éè]\.\w+\(\)`, false, false}, // a character of two bytes before the dot
		{`[à-ÿ]\.\w+\(\)`, false, false},
		{`x-\w+\)\w`, false, false},
		{`\w\w\.\w+\(`, false, false},
		{`\(\w+\)\.\w`, false, false},
		{`[0-9]-[a-z]+\)[a-z]{2}$`, false, false},
		{`^x-\s*\(`, false, false},
		{`^\PL*$`, false, false},
		{`(\p{Greek}|\x{212a}x)\pL`, false, false},
		{`(?i)(\p{Greek}|xk)\pL`, false, false},
		{"\ufffd", true, false},
		{"\ufffd0", true, false},
		{"a\ufffdb", false, false},
		{`\b[a-z]+[A-Z]\w*\(`, false, false}, // the pair of ranges, a word boundary past a run
		{`[a-z]+[A-Z]\w*\(`, false, false},
		{`\b[a-z]+[A-Z]`, false, false},
		{`x\b[a-z]+[A-Z]\w*\(`, false, false},
		{`\b[a-z]+\(`, false, false},
		{`\b\w+\(`, false, false},
		{`[a-z]+\b`, false, false},
		{`\b[a-z]+\b`, false, false},
		{`[ \t]+\bfoo`, false, false},
		{`\b[a-z ]+X\(`, false, false}, // a run of word bytes and others
		{`\b[ -z]+[A-Z]\w*\(`, false, false},
		{`\B[a-z]+[A-Z]\w*\(`, false, false},
		{`[0-9]+\b[a-z]`, false, false},
		{`[a-z]*[A-Z]\w*\(`, false, false},
		{`_[a-z]+[A-Z]\w*\(`, false, false},
		{`[a-z]+[A-Z]\w*\)`, false, false},
		{`_[a-z]*[A-Z]\w*\(`, false, false},
		{`\b[0-9]+\b`, false, false}, // a whole run between word boundaries
		{`\b\s+\b`, false, false},
		{`x\b[0-9]+\b`, false, false},
		{`\b[0-9]+\b\.`, false, false},
		{`\b[a-z0-9]+\b`, false, false},
		{`\b[ -~]+\b`, false, false},
		{`^[0-9]+\b`, false, false},
		{`\b[0-9]+$`, false, false},
		{`\B[0-9]+\b`, false, false},
		{`\b[0-9]+\B`, false, false},
		{`\b[A-Z]\w+\.`, false, false}, // the run's far byte is a capital
		{`\b[A-Z]\w*\.`, false, false},
		{`\b[A-Z]\w{2,}\.`, false, false},
		{`x\b[A-Z]\w+\.`, false, false},
		{`\.\w+[a-z]\b`, false, false},
		{`\.\w*[a-z]\b`, false, false},
		{`\b[A-Z][a-z]+\.`, false, false},
		{`\b[A-Z][ -~]+\.`, false, false},
		{`^[A-Z]\w+\.`, false, false},
		{`\B[A-Z]\w+\.`, false, false},
		{`err$`, false, false}, // the literal and its line break
		{` +$`, false, false},
		{`;$`, false, false},
		{`\bnil$`, false, false},
		{`x\s*;$`, false, false},
		{`e$`, false, false},
	}
	texts := map[string][]byte{
		"dates": []byte("2026-11-24 and 12-34-5678\n-1-2-3-\n1234-56-7 1999-01-0x 2000-12-31\n" +
			"x12-a x1-b-2 A-B1 a-b2\n3-4\n 5-6 \n12-x-3 ü-a ü-\u00e9\n--1999-01-01\n"),
		"sample":          []byte(sample),
		"sample+newline":  []byte(sample + "\n"),
		"empty":           nil,
		"newline":         []byte("\n"),
		"blank lines":     []byte("\n\n\nx\n\n"),
		"crlf":            []byte("err != nil\r\nfunc a\r\n"),
		"no final":        []byte("k"),
		"literal at end":  []byte("abc\nerr"),
		"literal at edge": []byte("err != nil"),
		"approx":          []byte("éaa\nerr12é\né12err\néx\n\u212a\u212ax\nkx\nberü\nKelvin \u212aelvin\n"),
		"runs":            []byte("xerr\nx err\nx \t err\nyerr x\nfoo_bar(\nfoo_(\n_bar(\ne1r e12r er\nx.y (\nx.y(\n"),
		"indented":        []byte("return a\n  return b\nxreturn c\n\treturn\t\nerr  \nerr\n \terr"),
		"quotes":          []byte("say \"hi\" and \"\u00e9 \u00fc\"\n\"\"\n\"open\n\"x\xffy\" \xff\n\"\xc3\"\na@b\n @\nx\xc3@\xa9y\n'a' 'b\n\"k\": 1\n\"\u212a\":\n\u212a\n\"\u00e9\"\n\"\u00ff\"\n"),
		"chains":          []byte("a := b(\na:=b(\n:= b(\na := (\na := b (\n a:=b1(x)\nx y\nx1 y\nx 1 y\nxy\nx 1y\nxadg\nxdg\nxd\nxag\nxa\nx\nab = c\n= c\n  ab  =\nab c =\nx é y\nbed\nfig jam\n  --  \n"),
		"idents":          []byte("foo(\n_(\n9(\n19a(\na9(\nab(\n(A\n(9A\n(x\n(xY\nx  abc\nx zzz\nxa\nx ab\nx  c\n(A"),
		"gaps":            []byte("a(){b\n:=;x\n!!\nx!!!\n!!!\n.,;)\n\t\tx\n\t\t\n \tx\n\t}\n  y\nxxy\n x\na\t\t\na\t b\n123g\ng123\n12g\n123y\ny123\n12y\n123x\nx123\nb12x\nx12b\na1b\nab12cd\na12\n12b\na1 b\nx1-\nx12-y\nx-\na  b\na 1\nab 1\na12ff\na12ffx\nf1ab\nz9zz\nxy(ctx\nxyz(ctx\nxyxy(ctx\nabcdxef\nabcdyef\nabcdef\nabcdyxef\nfunc run(ctx\nfunc(ctx\nfuncx(ctx\nfuncfunc(ctx\n(ctx) func\nx func (ctx\nerr(ctx\nerr((ctx\nerr x (ctx\n(ctx) err\n(ctxerr\nabab\nabb\nab xb\nbab\nb ab\n\"a\"x\n\"a\" x\nif err != nil\nif != nil\nfunc\n(ctx func"),
		"calls-end":       []byte("x.y()\n(ab)."),
		"run-end":         []byte("x-ab)c\nx-ab)"),
		"calls":           []byte("é.y()\n\xa9.y()\nè.y()\n" + "x.y()\nxy()\n.y()\nab.cd()\n(a).b\n(ab).\n().c\n1-ab)cd\n1-ab)c\n-ab)cd\nx- (\nx-(\n y.z(\nyz.w(\n"),
		"camel-end":       []byte("xyz\nfoo Bar\nend aB"),
		"heads":           []byte("Foo.bar\nF.x\nFo.x\nxFoo.\n_Foo.\n9Foo.\néFoo.\n\xffFoo.\nfoo.\nFOO.\n(Ab).\nab.Cd\nab.cD\nab.c9\nab.c_\n.a\n.ab\nA.b.c\nx.Ab. Cd.\n"),
		"ends":            []byte("a;\nb ;\nc; \n;\n  \n \nnil\nxnil\n x  ;\nx;\nerr\r\nerr \nthe err\nnil"),
		"end space":       []byte("x;\ny \nz "),
		"numbers":         []byte("12 x12 12x _12 1_2 (42) 3.14 0x1F 1e9\n7\n a 7b\n99\n\xff12\xff\né12\n12.\n  \n x  y \n"),
		"camel-calls": []byte("isWordChar(x)\nx.isWordChar(\nIsWordChar(\n_isWord(\n9isWord(\nisWord (\naB(\nab(\n(aB(\néaB(\n\xffaB(\nabCDe_f9(\nabC\nfoo  X(\nfoo X(\n" +
			"\tnewFooBar()\n_A(\n_aB(\nreturn fooBar(a, bazQux(b))\nx_fooBar(\nfooBar\n  foo\n \tfoo\n\tx foo\n12ab\n12 ab\naBc)\naB)"),
		"unicode": []byte("αβγ δ\nx\xff0y\nplain ascii Line\nÜber Straße\n中文 text\nMixed Ωmega and omega\n\xff\xfe bad\nx\u212a\u212aelvin\nKelvin ſs\nAbc\n123 ab\n\n\xce\nab\xffb\n" +
			strings.Repeat("ascii only Line 42\n", 3) + "ΑΒ\nCD\nlast Ωx"),
		"cjk and greek": []byte(strings.Repeat("中", 30) + "λ\n" + strings.Repeat("文", 10) + "Ω" + strings.Repeat("字", 40) + "\n" +
			strings.Repeat("中文", 3) + "\n" + strings.Repeat("x", 70) + "α\nпривет мир\n" + strings.Repeat("中", 21) + "π"),
		"lone high bytes": []byte("\xffb\na\xffb\naa\xffb\naaa\xffb\naaaa\xffb\naaaaa\xffb\naaaaaa\xffb\naaaaaaa\xffb\naaaaaaaa\xffb\naaaaaaaaa\xffb\naaaaaaaaaa\xffb\naaaaaaaaaaa\xffb\naaaaaaaaaaaa\xffb\naaaaaaaaaaaaa\xffb\naaaaaaaaaaaaaa\xffb\naaaaaaaaaaaaaaa\xffb\naaaaaaaaaaaaaaaa\xffb\naaaaaaaaaaaaaaaaa\xffb\nend\xce"),
		"hex":             []byte("0123456789abcdef0123456789abcde\n0123456789abcdef0123456789abcdef\nx0123456789abcdef0123456789abcdef0y\n01234567 89abcdef\nabcdefab\n12345678x\nx12345678\ndeadbeef-cafe\n0123456789abcdef0123456789abcdeg0123456789abcdef0123456789abcdef\n1234567\n\n00000000"),
		// Long enough for the vector search's blocks, the literals at
		// every offset in them.
		"long": []byte(strings.Repeat("x"+sample+"\n", 5) + strings.Repeat("y", 33) + sample),
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, tt.literal, tt.ignoreCase)
		if err != nil {
			t.Fatalf("%q: %v", tt.pattern, err)
		}
		for _, usePair := range []bool{true, false} {
			m := m
			if !usePair {
				m = withoutKernels(m)
			}
			for _, min := range []int{defaultMinASCII, 1} {
				setMinASCII(t, min)
				for name, text := range texts {
					got := lines(t, m, text)
					want := naive(tt.pattern, tt.literal, tt.ignoreCase, text)
					if !slices.Equal(got, want) {
						t.Errorf("%q literal=%v ignoreCase=%v pair=%v minASCII=%d on %s:\n got %q\nwant %q", tt.pattern, tt.literal, tt.ignoreCase, usePair, min, name, got, want)
					}
				}
			}
		}
	}
}

// defaultMinASCII is minASCII as the package sets it.
var defaultMinASCII = minASCII

// setMinASCII sets minASCII for the rest of the test.
func setMinASCII(t *testing.T, n int) {
	old := minASCII
	minASCII = n
	t.Cleanup(func() { minASCII = old })
}

// withoutKernels returns a copy of m that searches without the vector
// kernels.
func withoutKernels(m *Matcher) *Matcher {
	c := *m
	c.usePair, c.ranges, c.span = false, nil, nil
	c.any = slices.Clone(m.any)
	for i := range c.any {
		c.any[i].usePair = false
	}
	if m.ascii != nil {
		c.ascii = withoutKernels(m.ascii)
	}
	return &c
}

// TestManyLiterals checks alternations of many words: past the literals
// searched for at once, the matcher falls back without a wrong answer.
func TestManyLiterals(t *testing.T) {
	for _, n := range []int{maxLiterals, maxLiterals + 1, 4*maxLiterals + 1, 1000} {
		var words []string
		var text strings.Builder
		for i := range n {
			w := fmt.Sprintf("%c%c%d", 'a'+i%26, 'A'+i/26%26, i)
			words = append(words, w)
			if i%7 == 0 {
				fmt.Fprintf(&text, "x %s y\n", w)
			}
			fmt.Fprintf(&text, "%c%d\n", 'a'+i%26, i)
		}
		pattern := strings.Join(words, "|")
		m, err := Compile(pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		got, want := lines(t, m, []byte(text.String())), naive(pattern, false, false, []byte(text.String()))
		if !slices.Equal(got, want) || len(want) == 0 {
			t.Errorf("%d words: %d lines, want %d", n, len(got), len(want))
		}
	}
}

// TestIndexPair holds the vector kernel to its contract, checked a
// position at a time (the first position holding the pair or, without
// one, where it stopped, past its last whole block), on texts of every
// length to five blocks, with pairs at every two offsets to 20, in either
// case, over an alphabet small enough that both bytes meet often.
func TestIndexPair(t *testing.T) {
	if !havePair {
		t.Skip("no vector kernel on this platform")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("aAbB-")
	for n := range 81 {
		text := make([]byte, n)
		for i := range text {
			text[i] = alphabet[rng.IntN(len(alphabet))]
		}
		for off1 := range 21 {
			for off2 := range 21 {
				for _, c := range []struct{ want1, want2, mask1, mask2 byte }{
					{'a', 'b', 0, 0}, {'a', 'b', 0x20, 0x20}, {'-', 'a', 0, 0x20}, {'B', 'B', 0, 0}, {'z', 'a', 0, 0},
				} {
					i, found := indexPair(text, off1, off2, c.want1, c.want2, c.mask1, c.mask2)
					last := max(off1, off2)
					at := func(p int) bool {
						return text[p+off1]|c.mask1 == c.want1 && text[p+off2]|c.mask2 == c.want2
					}
					bad := func(format string, args ...any) {
						t.Fatalf("len %d, offsets %d %d, %+v: %s", n, off1, off2, c, fmt.Sprintf(format, args...))
					}
					if found && (i+last >= n || !at(i)) {
						bad("found %d, which does not hold the pair", i)
					}
					if !found && (i%16 != 0 || i+16+last <= n) {
						bad("stopped at %d, short of the last whole block", i)
					}
					for p := range i {
						if at(p) {
							bad("returned %d (found %v), but %d holds the pair", i, found, p)
						}
					}
				}
			}
		}
	}
}

// TestIndexRanges holds the range kernel to its contract as TestIndexPair
// holds the pair kernel, on bytes at and around the ranges' edges and
// beyond ASCII, where a signed comparison would go wrong.
func TestIndexRanges(t *testing.T) {
	if !havePair {
		t.Skip("no vector kernel on this platform")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{'@', 'A', 'M', 'Z', '[', '`', 'a', 'z', '{', '/', '0', '9', ':', 0, 0x7f, 0x80, 0xc3, 0xff}
	ranges := []struct{ lo, w byte }{{'A', 25}, {'a', 25}, {'0', 9}, {0x80, 0x7f}, {0, 0xff}, {'Z', 0}, {0, 0}, {0xff, 0}}
	for n := range 50 {
		text := make([]byte, n)
		for i := range text {
			text[i] = alphabet[rng.IntN(len(alphabet))]
		}
		for off1 := range 18 {
			for off2 := range 18 {
				for _, r1 := range ranges {
					for _, r2 := range ranges {
						i, found := indexRanges(text, off1, off2, r1.lo, r2.lo, r1.w, r2.w)
						last := max(off1, off2)
						at := func(p int) bool {
							return text[p+off1]-r1.lo <= r1.w && text[p+off2]-r2.lo <= r2.w
						}
						bad := func(format string, args ...any) {
							t.Fatalf("len %d, offsets %d %d, ranges %+v %+v: %s", n, off1, off2, r1, r2, fmt.Sprintf(format, args...))
						}
						if found && (i+last >= n || !at(i)) {
							bad("found %d, which is not in the ranges", i)
						}
						if !found && (i%16 != 0 || i+16+last <= n) {
							bad("stopped at %d, short of the last whole block", i)
						}
						for p := range i {
							if at(p) {
								bad("returned %d (found %v), but %d is in the ranges", i, found, p)
							}
						}
					}
				}
			}
		}
	}
}

// greek is a list of twenty words, some of them short and common inside
// other words (chi, xi, tau).
const greek = "alpha|beta|gamma|delta|epsilon|zeta|theta|iota|kappa|lambda|omicron|sigma|tau|upsilon|phi|chi|psi|omega|rho|xi"

func TestPrefilterChoice(t *testing.T) {
	tests := []struct {
		pattern    string
		ignoreCase bool
		lit        string
		pure, fold bool
		set        []string // the literals searched for at once, if any
	}{
		{"err != nil", false, "err != nil", true, false, nil},
		{`func \w+\(ctx context\.Context`, false, "(ctx context.Context", true, false, nil},
		{`a+bcd`, false, "abcd", true, false, nil},   // a line holding abcd
		{`(abc)+x`, false, "abcx", true, false, nil}, // abcx
		{`xa+bcd`, false, "bcd", true, false, nil},   // x, a run of a, bcd
		{`x?`, false, "", false, false, nil},
		{"exceedingly", true, "", true, true, nil}, // in any case: no regexp
		{"kss", true, "", false, false, nil},       // k and s fold to non-ASCII runes too
		{"ksxks", true, "", false, true, nil},      // x alone
		// Sets: every match holds one of several literals.
		{`abc|abd`, false, "", true, false, []string{"abc", "abd"}}, // factored: ab(?:c|d)
		{`abc|xyz`, false, "", true, false, []string{"abc", "xyz"}},
		{`foo|bar|baz|qux`, false, "", true, false, []string{"foo", "bar", "baz", "qux"}},
		// A list of words longer than a product may be: still no regexp
		// (epsilon and upsilon hold psi).
		{greek, false, "", true, false, slices.DeleteFunc(strings.Split(greek, "|"), func(w string) bool { return strings.HasSuffix(w, "silon") })},
		{`ErrNotExist|ErrPermission`, false, "", true, false, []string{"ErrNotExist", "ErrPermission"}},
		{`[Ff]oo`, false, "", true, false, []string{"Foo", "foo"}},
		{`colou?r`, false, "", true, false, []string{"colour", "color"}},
		{`(foo|bar)\(`, false, "", true, false, []string{"foo(", "bar("}},
		{`(foo|bar)\w+`, false, "", true, false, []string{"foo", "bar"}}, // foo\w or bar\w
		{`\b(if|for)\b`, false, "", true, false, []string{"if", "for"}},  // each with its \b
		{`\berr(or)?\b`, false, "", true, false, []string{"error", "err"}},
		{`(foo|bar)x*\w+y`, false, "", false, false, []string{"foo", "bar"}},
		{`(foo|bar)\w+quux`, false, "", true, false, []string{"quux", "quux"}}, // each branch: quux, a word back to foo or bar
		{`go|golang`, false, "go", true, false, nil},                           // a line holding golang holds go
		{`(a|b)x|y`, false, "", true, false, []string{"ax", "bx", "y"}},
		{`ab|abc|xabcx`, false, "ab", true, false, nil},
		{`foo|\w`, false, "", false, false, nil}, // \w has no literal
		{`(?i)foo|bar`, false, "", false, true, []string{"foo", "bar"}},
		{`(?i)foo|ks`, false, "", false, false, nil}, // ks has no run that folds to ASCII alone
		{`(?i:foo)|bar`, false, "", false, true, []string{"foo", "bar"}},
		{`(?i)todo:?\s`, false, "", false, true, nil}, // todo in any case, not a blank
		{`(?i)todo:?\s+x`, false, "", false, true, nil},
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, false, tt.ignoreCase)
		if err != nil {
			t.Fatal(err)
		}
		var set []string
		fold := m.fold
		for _, f := range m.any {
			set = append(set, string(f.lit))
			fold = fold || f.fold
		}
		if m.Literal() != tt.lit || m.pure != tt.pure || fold != tt.fold || !slices.Equal(set, tt.set) {
			t.Errorf("%q: literal %q pure %v fold %v set %q, want %q %v %v %q", tt.pattern, m.Literal(), m.pure, fold, set, tt.lit, tt.pure, tt.fold, tt.set)
		}
	}
}

// TestRangesOverCommonByte: a pattern whose only literal is one common
// byte, which leaves the regular expression to run on most lines holding
// it, is searched for by a pair of ranges instead where the vector kernel
// serves one and its checks are the whole pattern; a rarer byte, or a
// longer literal, is kept.
func TestRangesOverCommonByte(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		lit     string // without the kernel, or where the literal is kept
		ranges  bool   // with the kernel
	}{
		{`\b[a-z]+[A-Z]\w*\(`, "(", true},
		{`[a-z]+[A-Z]\w*\(`, "(", true},
		{`[a-z]+[A-Z]\w*~`, "~", false},      // ~ is rare in source code
		{`[a-z]+[A-Z]\w* x\(`, " x(", false}, // a literal of three bytes
		{`\b[ -z]+[A-Z]\w*\(`, "(", false},   // a run of letters and others: \b may fall inside it
	} {
		m, err := Compile(tt.pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		ranges := tt.ranges && havePair
		switch {
		case ranges && (m.ranges == nil || m.lit != nil || !m.pure):
			t.Errorf("%q: literal %q ranges %v pure %v, want a pair of ranges, exact", tt.pattern, m.lit, m.ranges, m.pure)
		case !ranges && string(m.lit) != tt.lit:
			t.Errorf("%q: literal %q, want %q", tt.pattern, m.lit, tt.lit)
		}
	}
}

// TestASCIIForm checks which patterns without a prefilter of their own
// are looked for on the lines of ASCII alone with their ASCII form, and
// which need no search there at all.
func TestASCIIForm(t *testing.T) {
	tests := []struct {
		pattern    string
		ascii      string // the regular expression of the ASCII form, if any
		asciiNever bool
	}{
		{`\p{Greek}`, "", false}, // one class: found without the regular expression
		{`[α-ω]+`, "", false},
		{`\p{Lu}\p{Ll}+`, `[A-Z][a-z]+`, false},
		{`\PL`, "", false},
		{`(\p{Greek}|\x{212a})\pL`, "", true},
		{`(?i)(\p{Greek}|\x{212a})\pL`, `([Kk])[A-Za-z]`, false},
		{`(?i)(\p{Greek}|\x{212a})\d`, `([Kk])[0-9]`, false}, // exact there
		{`\pL\d`, `[A-Za-z][0-9]`, false},
		{`é`, "", false},     // a literal, found alone
		{`\bé\b`, "", false}, // its checks find it alone
		{`\p{Greek}*\p{Lu}`, `(?:)[A-Z]`, false},
		{`x\p{Greek}`, "", true}, // x alone is a literal, not a match
		{`(?i)\x{212a}\x{212a}\pL`, `[Kk][Kk][A-Za-z]`, false},
		{`(?i)ks`, `[Kk][Ss]`, false},
		{`(\p{Greek}|\x{212a}x)\pL`, "", true},
		{`(?i)(\p{Greek}|xk)\pL`, `((?i:X)[Kk])[A-Za-z]`, false},
		{`(?i)\x{212a}`, `[Kk]`, false},
		{`\w+`, "", false}, // ASCII already
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		ascii := ""
		if m.ascii != nil {
			ascii = m.ascii.re.String()
		}
		if ascii != tt.ascii || m.asciiNever != tt.asciiNever {
			t.Errorf("%q: ASCII form %q, never %v; want %q, %v", tt.pattern, ascii, m.asciiNever, tt.ascii, tt.asciiNever)
		}
	}
}

// TestClassPrefilter checks which patterns are one class with members
// beyond ASCII, found by their characters' first bytes, and which of
// those bytes are a range of values.
func TestClassPrefilter(t *testing.T) {
	tests := []struct {
		pattern   string
		class     bool
		span      string // the range of bytes searched for, if one
		withASCII string // ASCII bytes searched for
	}{
		{`\p{Greek}`, true, "cd-f0", ""}, // U+0370-03FF ... U+1D245
		{`\p{Greek}+`, true, "cd-f0", ""},
		{`[α-ω]`, true, "ce-cf", ""},
		{`[α-ω]{2,}`, false, "", ""},           // two of them
		{`[\x{80}-\x{10FFFF}]`, false, "", ""}, // every character beyond ASCII
		{`[\x{100}-\x{FFFC}]`, true, "c4-ef", ""},
		{`[\x{100}-\x{10FFFF}]`, true, "80-ff", ""}, // U+FFFD too
		{`\x{fffd}`, true, "80-ff", ""},
		{`\PL`, true, "", "\t !0"},
		{`[a\x{100}]`, true, "", "a"},
		{`.`, false, "", ""},     // every character beyond ASCII: a line not empty
		{`[^"]`, false, "", ""},  // likewise
		{`[a-z]`, false, "", ""}, // ASCII
		{`\p{Greek}x`, false, "", ""},
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		span, withASCII := "", ""
		if m.span != nil {
			span = fmt.Sprintf("%02x-%02x", m.span[0], m.span[0]+m.span[1])
		}
		if m.class != nil {
			for _, c := range []byte("\t !0a") {
				if m.bytes[c] {
					withASCII += string(c)
				}
			}
		}
		if (m.class != nil) != tt.class || havePair && span != tt.span || withASCII != tt.withASCII {
			t.Errorf("%q: class %v span %q ASCII %q; want %v %q %q", tt.pattern, m.class != nil, span, withASCII, tt.class, tt.span, tt.withASCII)
		}
	}
}

// TestIndexHigh puts one byte beyond ASCII at every offset of texts of
// every length up to 40, with and without the vector kernel.
func TestIndexHigh(t *testing.T) {
	for n := range 41 {
		for at := -1; at < n; at++ {
			text := bytes.Repeat([]byte{0x7f}, n)
			if at >= 0 {
				text[at] = 0x80 + byte(at)
			}
			for pos := range n + 1 {
				want := -1
				if at >= pos {
					want = at
				}
				if got := indexHigh(text, pos); got != want {
					t.Fatalf("indexHigh, byte at %d of %d, from %d: %d", at, n, pos, got)
				}
				if got := indexHighWords(text, pos); got != want {
					t.Fatalf("indexHighWords, byte at %d of %d, from %d: %d", at, n, pos, got)
				}
				if n == 0 {
					continue
				}
				// With another byte beyond ASCII at 0, before it.
				text := slices.Clone(text)
				text[0] |= 0x80
				want = -1
				switch {
				case at >= 0 && at < pos:
					want = at
				case pos > 0:
					want = 0
				}
				if got := lastHigh(text[:pos]); got != want {
					t.Fatalf("lastHigh, bytes at 0 and %d of %d, before %d: %d", at, n, pos, got)
				}
			}
		}
	}
}

// TestWindowAround checks what is checked around a pattern's literal
// before its regular expression runs: the fixed-width single bytes and the
// assertions next to the literal, up to the first part of no fixed width;
// and when they are the whole pattern, that no regular expression runs.
func TestWindowAround(t *testing.T) {
	tests := []struct {
		pattern string
		offs    []int // offsets from the literal's first byte, left side first
		exact   bool
	}{
		{`[0-9]{4}-[0-9]{2}-[0-9]{2}`, []int{-1, -2, -3, -4, 1, 2, 3, 4, 5}, true},
		{`(\w+)\s*:=\s*(\w+)`, []int{0, 2}, true}, // the captures' \w+ are \w at the ends
		{`func.*\(ctx`, []int{0}, true},           // func anywhere before (ctx, the rarer, in the line
		{`^func.*\(ctx`, []int{0}, false},         // and at the line's start: left to the regular expression
		{`ab.+\.`, []int{2}, true},                // a dot after one byte at least
		{`[a-z_]\w*\(`, []int{0}, true},           // a word back from the parenthesis, holding a letter
		{`x\s*[b-z]+[a-c]`, nil, false},           // [a-c] is not all of [b-z]'s
		{`xa+--[0-9]`, []int{0, 2}, true},         // a run of a back to the x
		{`xa+-[0-9]`, []int{0, 1}, true},          // the literal is -: a run of a back to x, a digit after
		{`x\w*\wz`, []int{-1, -1}, true},          // z: a word byte before it, and x back in the word
		{`a+--[0-9]`, []int{3}, true},             // a line holding a--0 holds a match
		{`\w*--[0-9]+`, []int{2}, true},
		{`\bx\d\d`, []int{0, 1, 2}, true},
		{`\bint\b`, []int{0, 3}, true},
		{`\Bnt\b`, []int{0, 2}, true},
		{`^\t`, []int{0}, true},
		{`\Ax$`, []int{0, 1}, true},
		{`^\s*return\b`, []int{0, 6}, true}, // blanks back to the start of the line
		{`^\s+//`, []int{0}, true},
		{`;[ \t]*$`, []int{1}, true},
		{`x\s*y`, []int{0}, true},                               // y: blanks back to x
		{`^\w+\s*=`, []int{0}, true},                            // blanks, then a word back to the start
		{`\w+\s*:=\s*\w+\(`, []int{0, 2}, true},                 // a word, blanks; blanks, a word, (
		{`:=\s*\w+\s*\w+\(`, nil, false},                        // the second \s* ends the first's
		{`x\s*\d*\s+y`, nil, false},                             // \d* may be empty: the blanks run on
		{`"[^"]*"`, []int{1}, true},                             // not a quote, whatever its width, then a quote
		{`"[^"é]*"`, nil, false},                                // é is not a byte's check
		{`x[a-c]*[d-f]+[g-i]*$`, []int{1}, true},                // three runs to the end
		{`(\d\d)-(v|w|x|y|z)-\d`, []int{-1, -2, 1, 2, 3}, true}, // the class [v-z]
		{`(\d\d)-(xx|[a-z]+)-\d`, []int{-1, -2}, false},
		{`é[a-z]`, []int{2}, true},
		{`[^0-9]-x`, []int{-1}, true},                      // a byte beyond ASCII before -x ends a character of the class
		{`x-[^0-9]y`, []int{2}, false},                     // no further: the character may take several bytes
		{`(?i)x-k`, []int{2}, false},                       // x- in any case, then k, K or the Kelvin sign
		{`func \w+\(ctx context\.Context`, []int{0}, true}, // a word back to a blank, func before it
		{`\w\.\w+\(\)`, []int{0}, true},                    // a word back to a dot, a word character before it
		{`\w{17}\.\w+\(\)`, []int{0}, false},               // past maxWindow
		{`err != nil`, nil, false},                         // pure: no checks at all
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		var offs []int
		for _, w := range m.around {
			offs = append(offs, w.off)
		}
		if !slices.Equal(offs, tt.offs) || (len(offs) > 0 && m.pure != tt.exact) {
			t.Errorf("%q (literal %q): offsets %v exact %v, want %v %v", tt.pattern, m.Literal(), offs, m.pure, tt.offs, tt.exact)
		}
	}
}

// TestBytesPrefilter checks the search of patterns without literals for
// the byte of fixed width with the smallest set, and the checks around it.
// TestRangePair pins the pairs of ranges searched for with the vector
// kernel: the byte of fixed width with the smallest set, when its set is a
// range of values, with its neighbour of the narrower range.
func TestRangePair(t *testing.T) {
	if !havePair {
		t.Skip("no vector kernel on this platform")
	}
	tests := []struct {
		pattern string
		want    *rangePair
	}{
		{`[a-z]+[A-Z][a-z]+`, &rangePair{lead: 0, lo1: 'a', w1: 25, lo2: 'A', w2: 25}}, // the first of equals
		{`[A-Z]{3,}`, &rangePair{lead: 0, lo1: 'A', w1: 25, lo2: 'A', w2: 25}},
		{`[a-z][A-Z][0-5]`, &rangePair{lead: 1, lo1: 'A', w1: 25, lo2: '0', w2: 5}}, // [0-5] is the rarest
		{`[a-z][0-5][A-F]`, &rangePair{lead: 0, lo1: '0', w1: 5, lo2: 'A', w2: 5}},  // the narrower neighbour
		{`[0-9]+`, nil},       // no neighbour
		{`\w[A-Z]`, nil},      // \w is four ranges
		{`[qz]x[qz]`, nil},    // x alone, looked for with IndexByte
		{`[a-z]\s[a-z]`, nil}, // \s is the rarest, and not a range
		{`é[A-Z]`, nil},       // a literal
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if (m.ranges == nil) != (tt.want == nil) || m.ranges != nil && *m.ranges != *tt.want {
			t.Errorf("%q: ranges %+v, want %+v", tt.pattern, m.ranges, tt.want)
		}
	}
}

// TestRunPrefilter pins the patterns searched for by the length of a run
// of one set's bytes: minRun of them or more.
func TestRunPrefilter(t *testing.T) {
	for pattern, want := range map[string]int{
		`[a-f0-9]{32}`:       32,
		`\b[0-9a-f]{40}\b`:   40,
		`[0-9]{8,}`:          8,
		`[0-9]{7}`:           0,
		`[A-Z]{3,}`:          0, // with the vector kernel; see below
		`[[:punct:]]{3,}`:    3, // no kernel serves it
		`[0-9]{8}-[0-9]{12}`: 0, // the hyphen, looked for with IndexByte
		`\s[a-z]{4}[a-z]{5}`: 9,
		`.{81,}`:             81, // 81 bytes at least, then the regular expression
		`[^"]{3}`:            3,
		`.`:                  0,
	} {
		m, err := Compile(pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if pattern == `[A-Z]{3,}` && !havePair {
			want = 3 // without the kernel, by its runs
		}
		if m.run != want {
			t.Errorf("%q: run %d, want %d", pattern, m.run, want)
		}
	}
}

func TestBytesPrefilter(t *testing.T) {
	tests := []struct {
		pattern string
		size    int   // members of the set searched for; 0 for none
		eol     bool  // the ends of lines are searched for instead
		offs    []int // checked around it
		exact   bool
	}{
		{`[A-Z]{3,}`, 26, false, []int{1, 2}, true},
		{`\b[A-Z]{2}\b`, 26, false, []int{0, 1, 2}, true},
		{`[0-9]+`, 10, false, nil, true},
		{`\w+[v-z]\d`, 5, false, []int{-1, 1}, true}, // a line holding \w[v-z]\d
		{`\s+$`, 0, true, []int{-1}, true},           // a line ending in one of [\t\f\r ]
		{`^\s*$`, 0, true, []int{0}, true},
		{`\d\d$`, 0, true, []int{-1, -2}, true},
		{`\b[0-9]\d*$`, 0, true, []int{0}, true},           // back from the end, digits to a word boundary
		{`\w\s+\w`, 4, false, []int{-1}, true},             // blanks, a \w before and after
		{`[a-z]+[0-9]+[a-z]+`, 10, false, []int{-1}, true}, // digits, a letter before and after
		{`^\s+\S`, 4, false, []int{0}, true},               // blanks from the line's start, then no blank
		{`^\t+\S`, 1, false, []int{0}, true},               // tabs, though \t is a literal
		{`.`, 255, false, nil, true},                       // any character: a line with a byte
		{`x*`, 0, false, nil, false},
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		if m.bytes != nil {
			for _, in := range m.bytes {
				if in {
					size++
				}
			}
		}
		var offs []int
		for _, w := range m.around {
			offs = append(offs, w.off)
		}
		if tt.pattern == `[A-Z]{3,}` && !havePair {
			tt.offs = nil // without the vector kernel, found by its runs of three
		}
		if size != tt.size || m.eol != tt.eol || !slices.Equal(offs, tt.offs) || ((size > 0 || m.eol) && m.pure != tt.exact) {
			t.Errorf("%q: set of %d, eol %v, offsets %v, exact %v; want %d %v %v %v", tt.pattern, size, m.eol, offs, m.pure, tt.size, tt.eol, tt.offs, tt.exact)
		}
	}
}

// TestFewBytes checks which classes are looked for a byte at a time with
// IndexByte: up to three bytes, none among the commonest of source code.
func TestFewBytes(t *testing.T) {
	for pattern, few := range map[string]string{
		`[qz]`:     "qz",
		`[;!]\d`:   "!;",
		`[ae]`:     "", // common: the table
		`[qz,]`:    "", // the comma is common
		`[!;qz]`:   "", // four
		`[A-Z]{3}`: "",
	} {
		m, err := Compile(pattern, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if string(m.few) != few {
			t.Errorf("%q: looks for %q one at a time, want %q", pattern, m.few, few)
		}
	}
}

// TestRarestByte checks which bytes of a literal are searched for first:
// the one rarest in source code, wherever it sits in the literal, and for
// a case-insensitive literal the one whose two cases are rarest together;
// with a vector kernel, together with the next rarest at another offset.
func TestRarestByte(t *testing.T) {
	tests := []struct {
		pattern      string
		ignoreCase   bool
		want, second byte
	}{
		{"func main", false, 'm', 'u'}, // not f, the first byte
		{"err != nil", false, '!', '='},
		{"return nil", false, 'u', 'l'},
		{"ExceedinglyRareToken", false, 'k', 'R'},
		{`context\.Context`, false, 'C', '.'},
		{"x := y", false, 'y', '='},
		{`func \w+\(ctx context\.Context`, false, 'C', '('},
		{"EXCEEDINGLY", true, 'y', 'g'},
		{"zone", true, 'z', 'n'},
		{"content-type", true, '-', 'y'},
	}
	for _, tt := range tests {
		m, err := Compile(tt.pattern, false, tt.ignoreCase)
		if err != nil {
			t.Fatal(err)
		}
		lit, cost := m.lit, rankCost
		switch {
		case m.lit != nil:
		case m.fold:
			lit, cost = m.seg, foldCost
		default:
			t.Fatalf("%q: no prefilter", tt.pattern)
		}
		if got := lit[m.pivot]; got != tt.want {
			t.Errorf("%q ignoreCase=%v: searches %q first, want %q", tt.pattern, tt.ignoreCase, got, tt.want)
		}
		p := choosePair(lit, m.pivot, cost, tt.ignoreCase)
		if p.off1 != m.pivot || p.want1 != tt.want || p.want2 != tt.second || lit[p.off2] != tt.second {
			t.Errorf("%q ignoreCase=%v: pair %+v, want %q then %q", tt.pattern, tt.ignoreCase, p, tt.want, tt.second)
		}
		if m.usePair && m.pair != p {
			t.Errorf("%q ignoreCase=%v: the matcher searches for %+v, not %+v", tt.pattern, tt.ignoreCase, m.pair, p)
		}
		if mask := byte(0x20); tt.ignoreCase && p.mask1 != mask && 'a' <= p.want1 && p.want1 <= 'z' {
			t.Errorf("%q: the letter %q is not matched in either case", tt.pattern, p.want1)
		}
	}
}

// TestByteRank checks the generated table: a permutation of 0..255 that
// ranks the bytes of source code in their known order.
func TestByteRank(t *testing.T) {
	seen := make(map[uint8]bool)
	for _, r := range byteRank {
		seen[r] = true
	}
	if len(seen) != 256 {
		t.Fatalf("byteRank holds %d distinct ranks, want 256", len(seen))
	}
	// Each byte is rarer in source code than the next.
	order := []byte{0x00, '~', 'Q', 'z', 'm', 'e', ' '}
	for i := 1; i < len(order); i++ {
		if byteRank[order[i-1]] >= byteRank[order[i]] {
			t.Errorf("rank of %q is %d, not below %q's %d", order[i-1], byteRank[order[i-1]], order[i], byteRank[order[i]])
		}
	}
}

func TestCompileErrors(t *testing.T) {
	for _, p := range []string{"a(", "[z-a]", `\n`, "a\nb", `a[\n]b|c`, "x{2,1}"} {
		if _, err := Compile(p, false, false); err == nil {
			t.Errorf("%q compiled", p)
		}
	}
	// A class loses its newline.
	m, err := Compile(`a[\n\r]b|c`, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(t, m, []byte("a\nb\nc\na\rb\n")); !slices.Equal(got, []string{"3:c", "4:a\rb"}) {
		t.Errorf("got %q", got)
	}
}

func TestLinesStops(t *testing.T) {
	m, _ := Compile("a", false, false)
	calls := 0
	m.Lines([]byte("a\na\na\n"), func(n, _, _ int) bool { calls++; return n < 2 })
	if calls != 2 {
		t.Errorf("fn called %d times after returning false", calls)
	}
}

func FuzzLines(f *testing.F) {
	f.Add("err", false, false, []byte(sample))
	f.Add("k", false, true, []byte("K\nK\n"))
	f.Add(`\w+$`, false, false, []byte("a b\r\nc"))
	f.Add(`[0-9]{4}-[0-9]{2}`, false, false, []byte("1-2 2026-11\n-11"))
	f.Add(`foo|ba[rz]|colou?r`, false, false, []byte("foo\nbaz bar\ncolor colour\nfoba"))
	f.Add(`\w+\s*:=\s*\w+\(`, false, false, []byte("a := b(\nx 1 y\n:= (\na:=b1("))
	f.Add(`x\s*\d*\s+y`, false, false, []byte("x y\nx1 y\nx 1y"))
	f.Add(`"[^"]*"`, false, false, []byte("a \"b\" \"c\n\"\xc3\"\n\"é\""))
	f.Add(`[a-z]+[A-Z][a-z]+`, false, false, []byte("fooBar\nFoo bar\nxY"))
	f.Add(`[a-f0-9]{8}`, false, false, []byte("deadbeef\n0123456\nx0123456789abcdefx"))
	f.Add(`(?i)err|nil`, false, false, []byte("ERR\nNil\nn1l"))
	f.Add(`^\bab\B.$`, false, false, []byte("ab\nabc\n_ab1\n ab\nabé"))
	f.Add(`[A-Z]{2,}\b`, false, false, []byte("AB\nAbC\nABC_\nx XY"))
	f.Add(`^\s*ab\s+$`, false, false, []byte(" ab \n\tab\nab  \r\nxab "))
	f.Add(`\b(ab|a)\b|b\B`, false, false, []byte("ab a\nabc\nbb\n_a"))
	f.Add(`a[0-9]*b\s+c`, false, false, []byte("a12b c\nab  c\na1b\nxa9bc"))
	f.Add(`(?i)[a-z]ab[^b]`, false, true, []byte("\u212aab\u017f\nKABé\nxab\n"))
	f.Add(`\p{Lu}\p{Ll}+`, false, false, []byte("Ab\nÜber\nab\n\xff\nΩmega\nAB"))
	f.Add(`(\p{Greek}|(?i:k))\PL`, false, false, []byte("k1\nΩ \n\u212a.\nKx\nαβ\n\xce"))
	f.Add("\ufffd|a\\x{fffd}", false, false, []byte("\xff\na\xfe\n\ufffd\nab"))
	f.Fuzz(func(t *testing.T, pattern string, literal, ignoreCase bool, text []byte) {
		if strings.Contains(pattern, "\n") || (!literal && strings.Contains(pattern, `\n`)) {
			return
		}
		m, err := Compile(pattern, literal, ignoreCase)
		if err != nil {
			return
		}
		ref := pattern
		if literal {
			ref = regexp.QuoteMeta(pattern)
		}
		if _, err := regexp.Compile(ref); err != nil {
			return
		}
		want := naive(pattern, literal, ignoreCase, text)
		for _, min := range []int{defaultMinASCII, 1} {
			setMinASCII(t, min)
			if got := lines(t, m, text); !slices.Equal(got, want) {
				t.Fatalf("%q literal=%v ignoreCase=%v minASCII=%d on %q:\n got %q\nwant %q", pattern, literal, ignoreCase, min, text, got, want)
			}
		}
	})
}

// BenchmarkLines searches a corpus held in memory: the Go files of
// PRAXIS_BENCH_TREE, or of this repository.
func BenchmarkLines(b *testing.B) {
	dir := os.Getenv("PRAXIS_BENCH_TREE")
	if dir == "" {
		dir = "../../.."
	}
	var corpus []byte
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && len(corpus) < 64<<20 {
			data, _ := os.ReadFile(p)
			corpus = append(corpus, data...)
		}
		return nil
	})
	for _, c := range []struct {
		name, pattern string
		ignoreCase    bool
	}{
		{"common", "err != nil", false},
		{"main", "func main", false},
		{"return", "return nil", false},
		{"word", "return", false},
		{"rare", "ExceedinglyRareToken", false},
		{"regex", `func \w+\(ctx context\.Context`, false},
		{"fold", "exceedinglyraretoken", true},
		{"fold-common", "content-type", true},
		{"class", `[0-9]{4}-[0-9]{2}-[0-9]{2}`, false},
		{"words", "TODO|FIXME|XXX", false},
		{"words-fold", "todo|fixme", true},
		{"words-regex", `(Read|Write)(At|String)\(`, false},
		{"greek", greek, false},
		{"camel", "[a-z]+[A-Z][a-z]+", false},
		{"upper", "[A-Z]{3,}", false},
		{"call", `\b[a-z]+[A-Z]\w*\(`, false},
		{"eight", "foo|bar|baz|qux|quux|corge|grault|garply", false},
	} {
		m, err := Compile(c.pattern, false, c.ignoreCase)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(corpus)))
			for b.Loop() {
				m.Lines(corpus, func(int, int, int) bool { return true })
			}
		})
	}
}
