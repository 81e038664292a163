// Package usage marks the errors that are the user's to fix (a bad flag,
// config file, name or input file) rather than failures of the work, so
// that the command that returns one exits 2 (ExitUsage) however deep it
// was made. It also holds the flag rules several commands share (a
// temperature, a fault rate, one of an enumeration), which return such an
// error. It depends on nothing, so that the packages that check what the
// user gave can mark their refusals without knowing the commands.
package usage
