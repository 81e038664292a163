package coderepair

import "strings"

// NormalizeCode returns src without comments, blank lines and trailing
// whitespace, with line endings as "\n" and no final newline: the form in
// which two programs count as a near repeat
// (docs/methodology.md#greedy-and-near-repeats). String literals are
// left exactly as written, so a '#' or a blank line inside one survives;
// indentation is kept because in Python it is meaning, not layout.
func NormalizeCode(src string) string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")

	// Copy src without its comments, remembering which bytes belong to a
	// string literal: only newlines and spaces outside literals are layout.
	kept := make([]byte, 0, len(src))
	inString := make([]bool, 0, len(src))
	pos := 0
	for _, t := range tokenize(src) {
		if t.kind != tokComment && t.kind != tokString {
			continue
		}
		kept = append(kept, src[pos:t.start]...)
		inString = append(inString, make([]bool, t.start-pos)...)
		if t.kind == tokString {
			kept = append(kept, t.text...)
			for range len(t.text) {
				inString = append(inString, true)
			}
		}
		pos = t.end
	}
	kept = append(kept, src[pos:]...)
	inString = append(inString, make([]bool, len(src)-pos)...)

	var out []byte
	var outString []bool
	lineStart := 0
	endLine := func() {
		end := len(out)
		for end > lineStart && !outString[end-1] && isBlank(out[end-1]) {
			end--
		}
		blank := true
		for i := lineStart; i < end; i++ {
			if outString[i] || !isBlank(out[i]) {
				blank = false
				break
			}
		}
		if blank {
			end = lineStart
		}
		out, outString = out[:end], outString[:end]
	}
	for i, c := range kept {
		if c == '\n' && !inString[i] {
			endLine()
			if len(out) > lineStart {
				out = append(out, '\n')
				outString = append(outString, false)
			}
			lineStart = len(out)
			continue
		}
		out = append(out, c)
		outString = append(outString, inString[i])
	}
	endLine()
	return strings.TrimSuffix(string(out), "\n")
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }
