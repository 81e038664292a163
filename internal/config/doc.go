// Package config settles a command's settings before the command runs:
// it fills every flag the user did not set from the FEEDRUN_* environment
// or the config file (flags win over the environment, which wins over the
// file, which wins over the defaults; viper is read here and nowhere
// else), then checks what the flags alone decide: the ranges of counts,
// that float flags are finite, the values --format accepts, and the rules
// several commands share. Every refusal is a usage.Error naming the flag
// and what it expects, made before the command opens or writes anything.
package config
