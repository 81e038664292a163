// Package printable makes text that feedrun did not write safe to put on a
// terminal: model replies, observations, task ids and values read from
// files are hostile input, and a control sequence in them would act on the
// terminal (clear it, move the cursor, retitle the window, hide text)
// rather than show. Escape writes each control character as visible text;
// Excerpt also bounds a value an error message quotes.
package printable

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape writes every control character of s as visible text, as Go
// escapes it in a string literal (ESC as \x1b, a carriage return as \r),
// and every byte that is not UTF-8 as \xNN; newlines and tabs stay, as
// the layout of code and prose needs them. The C1 controls and the
// bidirectional overrides and isolates (which can show text in another
// order than it is read) are escaped as \u escapes.
func Escape(s string) string {
	i := strings.IndexFunc(s, needsEscape)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case r == '\r':
			b.WriteString(`\r`)
		case needsEscape(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
	return b.String()
}

func needsEscape(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// ExcerptRunes is how many characters of a value Excerpt keeps.
const ExcerptRunes = 200

// Excerpt is s escaped (Escape, newlines and tabs too, so that the excerpt
// stays on its line), cut after ExcerptRunes characters and then marked
// "… (N bytes)", N being the size of the whole value: an error message
// that quotes a bad value stays one short line however long the value is.
func Excerpt(s string) string {
	return Cut(strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(Escape(s)), ExcerptRunes, len(s))
}

// Cut keeps the first runes characters of s; when that leaves some out it
// adds "… (N bytes)", N being size, the whole value's size.
func Cut(s string, runes, size int) string {
	end := 0
	for i := 0; i < runes && end < len(s); i++ {
		_, n := utf8.DecodeRuneInString(s[end:])
		end += n
	}
	if end == len(s) {
		return s
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:end], size)
}
