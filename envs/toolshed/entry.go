package toolshed

import "github.com/feedrun/feedrun/internal/env"

// Entry is ToolShed in the environments' registry: it has no settings of
// its own (its world and tasks are built in).
var Entry = env.Fixed(Environment{})
