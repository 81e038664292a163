package config

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/feedrun/feedrun/internal/usage"
)

// Settle resolves cmd's settings (Resolve), then checks them: the ranges
// its Bound calls declare, then the output formats its --format accepts.
// A command's own check (its PreRunE) comes after.
func Settle(cmd *cobra.Command, configPath string) error {
	if err := Resolve(cmd, configPath); err != nil {
		return err
	}
	if err := CheckBounds(cmd); err != nil {
		return err
	}
	return CheckFormat(cmd)
}

// Resolve fills every flag the user did not set from the environment or
// the config file at configPath (or ./feedrun.yaml when present).
func Resolve(cmd *cobra.Command, configPath string) error {
	v := viper.New()
	v.SetEnvPrefix("FEEDRUN")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_", ".", "_"))
	v.AutomaticEnv()
	path := configPath
	if path == "" {
		if _, err := os.Stat("feedrun.yaml"); err == nil {
			path = "feedrun.yaml"
		}
	}
	if path != "" {
		v.SetConfigFile(path)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			// On one line: viper's YAML errors span several.
			return usage.Errorf("config file %s: %s", path, strings.Join(strings.Fields(err.Error()), " "))
		}
		if err := checkConfigKeys(cmd.Root(), v, path); err != nil {
			return err
		}
	}
	var firstErr error
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if fl.Changed || firstErr != nil || fl.Name == "config" || fl.Name == "help" {
			return
		}
		var val any
		switch {
		case os.Getenv(EnvName(fl.Name)) != "":
			val = os.Getenv(EnvName(fl.Name))
		case v.IsSet(cmd.Name() + "." + fl.Name):
			val = v.Get(cmd.Name() + "." + fl.Name)
		case path != "" && v.InConfig(fl.Name):
			val = v.Get(fl.Name)
		default:
			return
		}
		values := []string{flagText(val)}
		if list, ok := val.([]any); ok && fl.Value.Type() == "stringArray" {
			// Each element is one value of a repeated flag (-o), which may
			// itself hold commas.
			values = values[:0]
			for _, e := range list {
				values = append(values, fmt.Sprint(e))
			}
		}
		for _, text := range values {
			if err := cmd.Flags().Set(fl.Name, text); err != nil && firstErr == nil {
				firstErr = usage.Errorf("setting %q from the environment or %s: %v", fl.Name, orDefault(path, "config"), err)
			}
		}
	})
	return firstErr
}

// EnvName is the environment variable that sets flag: FEEDRUN_, then the
// flag's name in capitals with dashes as underscores.
func EnvName(flag string) string {
	return "FEEDRUN_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// flagText turns a YAML value into flag syntax; lists become comma lists.
func flagText(v any) string {
	if list, ok := v.([]any); ok {
		parts := make([]string, len(list))
		for i, e := range list {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprint(v)
}

// checkConfigKeys rejects keys that no command knows, so that a typo in a
// config file is an error rather than a silently ignored setting.
func checkConfigKeys(root *cobra.Command, v *viper.Viper, path string) error {
	flags := map[string]bool{}
	// A key under a command's name must be one of that command's flags:
	// report.items would otherwise be accepted and silently ignored.
	commands := map[string]map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		own := commands[c.Name()]
		if own == nil {
			own = map[string]bool{}
			commands[c.Name()] = own
		}
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags(), c.InheritedFlags()} {
			fs.VisitAll(func(fl *pflag.Flag) { flags[fl.Name], own[fl.Name] = true, true })
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	keys := v.AllKeys()
	sort.Strings(keys)
	for _, k := range keys {
		parts := strings.Split(k, ".")
		switch {
		case len(parts) == 1 && flags[k]:
		case len(parts) == 2 && commands[parts[0]][parts[1]]:
		case len(parts) == 2 && commands[parts[0]] != nil:
			return usage.Errorf("config file %s: key %q: %s has no flag --%s", path, k, parts[0], parts[1])
		default:
			return usage.Errorf("config file %s: unknown key %q: expected a flag name, optionally under a command name", path, k)
		}
	}
	return nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
