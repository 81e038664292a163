package iostreams

import (
	"strings"
	"unicode/utf8"
)

// Wrap breaks text into lines of at most width runes at spaces (0: no
// limit), indenting every line by indent; a word longer than a line is
// left whole.
func Wrap(text string, width int, indent string) string {
	if width <= 0 {
		return indent + text
	}
	var lines []string
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
			lines = append(lines, line)
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	return strings.Join(append(lines, line), "\n")
}
