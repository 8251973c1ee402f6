// Package lazyre holds regular expressions compiled on their first use.
//
// Every process initialises every package linked into the binary,
// whatever its command, and a package's initialiser is code that must be
// read from the binary, with the pages around it. A package-level
//
//	var name = lazyre.New(`^[a-z]+$`)
//
// costs neither: the compiler lays the value out in the binary, with no
// code at init (unlike sync.OnceValue, whose closures are made there), and
// the expression is compiled by the first Get.
package lazyre

import (
	"regexp"
	"sync"
)

// A Regexp is a regular expression compiled by its first Get. It is safe
// for concurrent use.
type Regexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
}

// New returns the expression src, to be compiled by its first Get.
func New(src string) *Regexp { return &Regexp{src: src} }

// Get returns the compiled expression. Like regexp.MustCompile, it panics
// if src does not compile: the sources are constants of the program.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.src) })
	return r.re
}
