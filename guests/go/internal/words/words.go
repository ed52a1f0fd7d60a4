// Package words splits text into words separated by white space, as
// bytes.Fields does (Unicode white space, invalid UTF-8 is part of a word),
// but one word at a time and without allocating.
package words

import (
	"unicode"
	"unicode/utf8"
)

// asciiSpace marks the ASCII white-space bytes, as in package bytes.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// space returns the width of the white-space character at s[i], or 0 if
// there is none.
func space(s []byte, i int) int {
	c := s[i]
	if c < utf8.RuneSelf {
		if asciiSpace[c] {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRune(s[i:])
	if unicode.IsSpace(r) {
		return n
	}
	return 0
}

// Next returns the first word of s at or after byte i and the index just
// after it. word is nil when no word is left. The word is a view into s.
//
//	for w, i := words.Next(s, 0); w != nil; w, i = words.Next(s, i) {
//		...
//	}
func Next(s []byte, i int) (word []byte, next int) {
	for i < len(s) {
		n := space(s, i)
		if n == 0 {
			break
		}
		i += n
	}
	if i >= len(s) {
		return nil, len(s)
	}
	start := i
	for i < len(s) {
		if space(s, i) != 0 {
			break
		}
		if s[i] < utf8.RuneSelf {
			i++
		} else {
			_, n := utf8.DecodeRune(s[i:])
			i += n
		}
	}
	return s[start:i:i], i
}

// First returns the first word of s, or nil if s holds only white space.
func First(s []byte) []byte {
	w, _ := Next(s, 0)
	return w
}
