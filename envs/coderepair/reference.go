package coderepair

import (
	"context"
	"fmt"
	"strings"
)

// CheckReferences runs every problem's reference solution against its own
// tests; results are in problem order.
func CheckReferences(ctx context.Context, sb *Sandbox, problems []Problem) ([]Result, error) {
	jobs := make([]Job, len(problems))
	for i, p := range problems {
		jobs[i] = Job{Problem: p, Code: p.Code}
	}
	return sb.RunMany(ctx, jobs)
}

// ReferenceReport is a Markdown summary of CheckReferences: how many
// references pass, and which fail and why.
func ReferenceReport(sb *Sandbox, problems []Problem, results []Result) string {
	var failed []int
	for i, r := range results {
		if !r.Passed {
			failed = append(failed, i)
		}
	}
	l := sb.Limits()
	user := "the calling user"
	if sb.cred != nil {
		user = fmt.Sprintf("nobody (uid %d)", nobody)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Reference solutions in the sandbox\n\n")
	fmt.Fprintf(&b, "Every reference solution of sanitized MBPP was run against its own tests in the\n")
	fmt.Fprintf(&b, "CodeRepair sandbox: Python %s, as %s, with %s of CPU time, %s in all,\n",
		sb.PythonVersion(), user, l.CPUTime, l.WallTime)
	fmt.Fprintf(&b, "%s of address space, %s files and %s of output.\n\n",
		size(l.Memory), size(l.FileSize), size(int64(l.Output)))
	fmt.Fprintf(&b, "**%d of %d pass; %d fail.**\n", len(results)-len(failed), len(results), len(failed))
	if len(failed) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "\n| task_id | function | failed test | error kind | error |\n|---|---|---|---|---|\n")
	for _, i := range failed {
		r := results[i]
		test := "before the tests"
		if r.Test > 0 {
			test = fmt.Sprintf("%d of %d", r.Test, len(problems[i].Tests))
		}
		msg := strings.ReplaceAll(r.Error.Message, "|", `\|`)
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s | %s |\n", problems[i].TaskID, problems[i].Function, test, r.Error.Kind, msg)
	}
	return b.String()
}
