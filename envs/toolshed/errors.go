package toolshed

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/feedrun/feedrun/internal/transcript"
)

// The failure kinds a ToolShed error can have (transcript.StructuredError.Kind).
const (
	KindSyntaxError        = "syntax_error"
	KindUnknownTool        = "unknown_tool"
	KindUnexpectedArgument = "unexpected_argument"
	KindMissingArgument    = "missing_argument"
	KindWrongType          = "wrong_type"
	KindWrongFormat        = "wrong_format"
	KindNotFound           = "not_found"
	KindPrecondition       = "precondition"
)

// FailureKinds returns every failure kind, in the order items are made.
func FailureKinds() []string {
	return []string{KindSyntaxError, KindUnknownTool, KindUnexpectedArgument, KindMissingArgument,
		KindWrongType, KindWrongFormat, KindNotFound, KindPrecondition}
}

func newError(kind, tool, argument, got, expected, message string) *transcript.StructuredError {
	return &transcript.StructuredError{Kind: kind, Tool: tool, Argument: argument, Got: got, Expected: expected, Message: message}
}

func syntaxError(pe *ParseError) *transcript.StructuredError {
	return newError(KindSyntaxError, pe.Tool, pe.Argument, pe.Near, pe.Expected, pe.Error())
}

// unknownTool answers as Python does for an undefined name, suggesting the
// closest tool when one is near enough to be a slip.
func unknownTool(name string) *transcript.StructuredError {
	msg := fmt.Sprintf("NameError: name '%s' is not defined", name)
	suggestion := closestTool(name)
	if suggestion != "" {
		msg += fmt.Sprintf(". Did you mean: '%s'?", suggestion)
	}
	return newError(KindUnknownTool, name, "", name, suggestion, msg)
}

// closestTool follows Python's rule for "Did you mean": the nearest name by
// edit distance, if that distance is at most a sixth of both names' lengths
// plus a half.
func closestTool(name string) string {
	best, bestDist := "", -1
	for _, t := range toolTable {
		d := editDistance(name, t.Name)
		if 6*d > len(name)+len(t.Name)+3 {
			continue
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = t.Name, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func tooManyPositional(t Tool, given int) *transcript.StructuredError {
	required := 0
	for _, p := range t.Params {
		if !p.Optional {
			required++
		}
	}
	takes := fmt.Sprintf("%d positional %s", len(t.Params), plural(len(t.Params), "argument", "arguments"))
	if required < len(t.Params) {
		takes = fmt.Sprintf("from %d to %d positional arguments", required, len(t.Params))
	}
	return newError(KindUnexpectedArgument, t.Name, "", fmt.Sprint(given), strings.Join(t.paramNames(), ", "),
		fmt.Sprintf("TypeError: %s() takes %s but %d %s given", t.Name, takes, given, plural(given, "was", "were")))
}

func unexpectedKeyword(t Tool, name string) *transcript.StructuredError {
	return newError(KindUnexpectedArgument, t.Name, name, name, strings.Join(t.paramNames(), ", "),
		fmt.Sprintf("TypeError: %s() got an unexpected keyword argument '%s'", t.Name, name))
}

func missingArguments(t Tool, names []string) *transcript.StructuredError {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + "'"
	}
	list := quoted[0]
	if len(quoted) > 1 {
		list = strings.Join(quoted[:len(quoted)-1], ", ") + " and " + quoted[len(quoted)-1]
	}
	p, _ := t.param(names[0])
	return newError(KindMissingArgument, t.Name, names[0], "", expectation(p, KindMissingArgument),
		fmt.Sprintf("TypeError: %s() missing %d required %s: %s", t.Name, len(names), plural(len(names), "argument", "arguments"), list))
}

// The not-found and precondition errors the tools raise. Their Expected
// text is what a description may say about the fix.
const (
	expectFile        = "the path of an existing file, as list_files shows it"
	expectFileNotDir  = "the path of a file, not of a folder"
	expectFolder      = "the path of an existing folder"
	expectParent      = "a path inside an existing folder"
	expectContact     = "the full name of an existing contact, as search_contacts shows it"
	expectEvent       = "the id of an existing event, as list_events shows it"
	expectReadFirst   = "the file already exists and must be read with read_file before its text is replaced"
	expectLookUpFirst = "the event must first be looked up with list_events for its date"
	expectActive      = "the event is already cancelled, so there is nothing to cancel"
	expectNewContact  = "a contact with that name already exists, so get_contact should be used to see it"
	expectName        = "a name that is not empty"
)

func noSuchFile(tool, arg, path string) *transcript.StructuredError {
	expected := expectFile
	if arg == "directory" {
		expected = expectFolder
	}
	if tool == "write_file" {
		expected = expectParent
	}
	return newError(KindNotFound, tool, arg, path, expected,
		fmt.Sprintf("FileNotFoundError: [Errno 2] No such file or directory: %s", pyRepr(path)))
}

func isADirectory(tool, path string) *transcript.StructuredError {
	return newError(KindNotFound, tool, "path", path, expectFileNotDir,
		fmt.Sprintf("IsADirectoryError: [Errno 21] Is a directory: %s", pyRepr(path)))
}

func notADirectory(tool, path string) *transcript.StructuredError {
	return newError(KindNotFound, tool, "directory", path, expectFolder,
		fmt.Sprintf("NotADirectoryError: [Errno 20] Not a directory: %s", pyRepr(path)))
}

var (
	timePattern  = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	emailPattern = regexp.MustCompile(`^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$`)
)

func validDate(s string) bool {
	d, err := time.Parse(time.DateOnly, s)
	return err == nil && d.Format(time.DateOnly) == s
}

func validTime(s string) bool  { return timePattern.MatchString(s) }
func validEmail(s string) bool { return emailPattern.MatchString(s) }
