package toolshed

import (
	"fmt"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/transcript"
)

// Describe writes the runtime's description of a failure for the abstract,
// scrub and memory harnesses: which tool, which argument, what was expected.
// It reads only the tool, argument and expectation; the failed value (Got)
// and the raw message are never quoted, so the description carries none of
// the failed call's surface beyond the tool's name.
func Describe(e transcript.StructuredError) string {
	switch e.Kind {
	case KindUnknownTool:
		if e.Expected != "" {
			return "The call named a tool that does not exist. The closest available tool is " + e.Expected + "."
		}
		return "The call named a tool that does not exist. Only the tools listed in the system prompt can be called."
	case KindSyntaxError:
		what := "a tool call"
		if e.Tool != "" {
			what = "a call to " + e.Tool
		}
		return fmt.Sprintf("The reply could not be parsed as %s: it needs %s. Reply with exactly one Python-style call.", what, e.Expected)
	case KindMissingArgument:
		return fmt.Sprintf("The call to %s failed: it left out the required %s argument, which must be %s.", e.Tool, e.Argument, e.Expected)
	case KindUnexpectedArgument:
		accepted := strings.Split(e.Expected, ", ")
		switch {
		case e.Argument == "":
			return fmt.Sprintf("The call to %s failed: it passed more positional arguments than the tool takes. Its arguments are %s, in that order.", e.Tool, e.Expected)
		case slices.Contains(accepted, e.Argument):
			return fmt.Sprintf("The call to %s failed: it gave the %s argument twice, once by position and once by name.", e.Tool, e.Argument)
		}
		return fmt.Sprintf("The call to %s failed: it used an argument name that the tool does not accept. The accepted arguments are %s.", e.Tool, e.Expected)
	case KindWrongType, KindWrongFormat:
		return fmt.Sprintf("The call to %s failed: its %s argument must be %s.", e.Tool, e.Argument, e.Expected)
	case KindNotFound:
		return fmt.Sprintf("The call to %s failed: nothing matches its %s argument, which must be %s.", e.Tool, e.Argument, e.Expected)
	case KindPrecondition:
		return fmt.Sprintf("The call to %s was refused: %s.", e.Tool, e.Expected)
	}
	return fmt.Sprintf("The call to %s failed.", e.Tool)
}
