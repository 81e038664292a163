// Package envs is the registry of feedrun's environments: one line per
// environment, each the entry its own package declares (its name, kind,
// settings and how they open it). The commands pick environments from
// here and from nowhere else; adding an environment is its package, its
// line here, and its row in the layering test.
package envs
