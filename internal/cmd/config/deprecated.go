package config

import "github.com/spf13/pflag"

// DeprecatedAnnotation marks a flag kept for upstream opm's scripts that
// has a better replacement; its value is the advice. The root command
// prints it as a note on stderr when the flag is used. (pflag's own
// deprecation message goes wherever cobra prints, which is stdout here,
// where -o json documents go.)
const DeprecatedAnnotation = "opm/deprecated"

// Deprecate hides the flag name of fs and records the advice printed when
// it is used.
func Deprecate(fs *pflag.FlagSet, name, advice string) {
	_ = fs.MarkHidden(name)
	_ = fs.SetAnnotation(name, DeprecatedAnnotation, []string{advice})
}
