package probe

import (
	"regexp"
	"strings"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/transcript"
)

// tracebackFrame is the line of a Python traceback that names where an
// error passed through ("  File "solution.py", line 5, in f" or, for a
// syntax error, without the function). The interpreter prints the source
// line it points at on the next line, and in 3.11 and later a line of
// carets or tildes under it.
var tracebackFrame = regexp.MustCompile(`^\s*File "[^"]*", line \d+`)

// Quoteless is an observation with every source line it quotes removed:
// the line under each traceback frame, and any marker line (only ^ and ~)
// that points into it. What is left says that and how the action failed
// (frames, exception, message) without copying the program's text. Both
// environments print Python-style errors, but only a real interpreter's
// traceback quotes source, so a ToolShed observation comes back unchanged.
func Quoteless(observation string) string {
	// A syntax error has no "Traceback" line: its frame follows the
	// observation prefix on the first line.
	body, prefixed := strings.CutPrefix(observation, transcript.ObservationPrefix)
	lines := strings.Split(body, "\n")
	var out []string
	// frameIndent is the indentation of the frame on the line before, or
	// −1: its source line is indented deeper; a frame whose source the
	// interpreter could not read is followed by a line that is not.
	frameIndent := -1
	for _, line := range lines {
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		quoted := frameIndent >= 0 && indent > frameIndent && strings.TrimSpace(line) != ""
		frameIndent = -1
		if quoted || isMarker(line) {
			continue
		}
		if tracebackFrame.MatchString(line) {
			frameIndent = indent
		}
		out = append(out, line)
	}
	if prefixed {
		return transcript.ObservationPrefix + strings.Join(out, "\n")
	}
	return strings.Join(out, "\n")
}

// isMarker is a line that only points at columns of the line above it.
func isMarker(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && strings.Trim(t, "^~") == ""
}

// quotelessContext is the harness's post-failure context with the failure
// observation o× replaced by its quoteless form; where the harness does not
// show o× (abstract, drop, scrub) or o× quotes nothing, it is the
// post-failure context itself, so that the two score identically.
func quotelessContext(pc harness.ProbeContexts, observation, quoteless string) []transcript.Message {
	if quoteless == observation {
		return pc.Post
	}
	out := make([]transcript.Message, len(pc.Post))
	for i, m := range pc.Post {
		if m.Role == transcript.RoleUser && m.Content == observation {
			m.Content = quoteless
		}
		out[i] = m
	}
	return out
}
